// The keys tool's files served by the local gateway (Kong's stand-in) in front of the real
// service and MariaDB, as `npm start` serves them: kong.yaml, partners.yaml and partner-keys.yaml,
// the printed keys passed as the DECK_ variables decK would read. Each step runs the tool,
// reloads the gateway, and calls the API. The two partner files name each partner once each, as
// two syncs into one Kong do: the gateway serves one consumer with its groups and its keys.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { startTestService, type TestService } from '../helpers/service';
import { gatewayEnv, kongState, send, startGateway, type TestGateway } from '../local-gateway/support';
import { keys, printedKey, workspace, type Workspace } from './support';

const SECRET = 'keys-tool-gateway-secret-0123456789';
const JOB = {
  title: 'Platform Engineer',
  department: 'Engineering',
  type: 'full-time',
  description: 'Keep the lights on.',
};

let service: TestService;
let ws: Workspace;
let gateway: TestGateway;
/** The gateway's environment: the secret manager's DECK_ variables are added as keys are printed. */
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  service = await startTestService({ name: 'keys_gateway', gatewaySecret: SECRET });
  ws = workspace();
  const kongYaml = path.join(ws.dir, 'kong.yaml');
  writeFileSync(kongYaml, stringify(kongState(service.port)));
  env = gatewayEnv(SECRET);
  gateway = await startGateway([kongYaml, ws.partners, ws.keys], env);
});
afterAll(async () => {
  await gateway?.close();
  await service?.close();
  ws?.remove();
});

async function tool(args: string[]): Promise<string | undefined> {
  const r = await keys(ws, args);
  expect(r.code).toBe(0);
  if (!r.out) return undefined;
  const { variable, key } = printedKey(r);
  env[variable] = key;
  return key;
}

function reload(): void {
  expect(gateway.reload()).toEqual({ ok: true });
}

const list = (key: string) => send(gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': key } });
const create = (key: string) =>
  send(gateway.url, {
    method: 'POST',
    path: '/api/v1/jobs',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify(JOB),
  });

const consumerId = () => ws.state().partners.consumers[0].id as string;
const credentialIds = () =>
  (ws.state().keys.consumers[0].keyauth_credentials as Array<{ id: string }>).map((c) => c.id);

let first: string;
let second: string;

test('an issued key works after a reload, with its scope and its fixed consumer and credential ids', async () => {
  first = (await tool(['issue', 'acme', '--scope', 'read'])) as string;
  expect((await list(first)).status).toBe(401);
  reload();
  const res = await list(first);
  expect(res.status).toBe(200);
  const seen = service.received.at(-1);
  expect(seen?.headers['x-consumer-id']).toBe(consumerId());
  expect(seen?.headers['x-consumer-username']).toBe('acme');
  expect(seen?.headers['x-credential-identifier']).toBe(credentialIds()[0]);
  expect(seen?.headers['x-consumer-groups']).toBe('jobs:read');
  expect(await create(first)).toMatchObject({
    status: 403,
    json: { error: 'Missing scope jobs:write', requiredScope: 'jobs:write' },
  });
});

test('scope read -> write: the same key can now create a job', async () => {
  await tool(['scope', 'acme', 'write']);
  reload();
  const res = await create(first);
  expect(res.status).toBe(201);
  expect(res.json.data).toMatchObject({ title: JOB.title, status: 'draft' });
  expect(service.received.at(-1)?.headers['x-consumer-groups']).toBe('jobs:read, jobs:write');
  // A draft is visible only to the consumer that created it: the same partner, by its fixed id.
  const draft = await send(gateway.url, { path: `/api/v1/jobs/${res.json.data.id}`, headers: { 'X-API-Key': first } });
  expect(draft.status).toBe(200);
});

test('disable: 403 API key disabled on every route; enable: the key works again with its scope', async () => {
  await tool(['disable', 'acme']);
  reload();
  expect(await list(first)).toMatchObject({ status: 403, json: { error: 'API key disabled' } });
  expect(await create(first)).toMatchObject({ status: 403, json: { error: 'API key disabled' } });
  await tool(['enable', 'acme']);
  reload();
  expect((await create(first)).status).toBe(201);
});

test('rotate: two working keys, each with its own credential id; --revoke-old leaves only the new one', async () => {
  second = (await tool(['rotate', 'acme'])) as string;
  expect(second).not.toBe(first);
  reload();
  const [oldId, newId] = credentialIds();
  expect((await list(first)).status).toBe(200);
  expect(service.received.at(-1)?.headers['x-credential-identifier']).toBe(oldId);
  expect((await list(second)).status).toBe(200);
  expect(service.received.at(-1)?.headers['x-credential-identifier']).toBe(newId);
  expect(service.received.at(-1)?.headers['x-consumer-id']).toBe(consumerId());

  await tool(['rotate', 'acme', '--revoke-old']);
  reload();
  expect(await list(first)).toMatchObject({ status: 401, json: { error: 'Invalid API key' } });
  expect((await list(second)).status).toBe(200);
  expect(credentialIds()).toEqual([newId]);
});

test('no key ever reached the service or a log line', () => {
  const everything = JSON.stringify({ received: service.received, logs: service.logs, gateway: gateway.rawLogs });
  expect(everything).not.toContain(first);
  expect(everything).not.toContain(second);
});

/**
 * A client generated from docs/openapi.json as a partner generates one: openapi-typescript's types
 * and openapi-fetch with its defaults, compiled by tsc --strict (one program) and run against the
 * local gateway. It lists with a two-state filter (sent as openapi-fetch sends an array:
 * `state=CA&state=TX`), walks a cursor and creates with an Idempotency-Key; the create bodies the
 * API refuses do not compile.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { OPENAPI_PATH } from '../../../scripts/openapi';
import { DEMO, startStack, type LocalStack } from '../../e2e/support';
import type { Parsed } from '../../helpers/parsed';

const ROOT = path.resolve(__dirname, '../../..');

/** The partner's program: every call through openapi-fetch's defaults, its findings printed as JSON. */
const PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, readerKey, writerKey, idempotencyKey] = process.argv.slice(2) as [string, string, string, string];
const reader = createClient<paths>({ baseUrl, headers: { 'X-API-Key': readerKey } });
const writer = createClient<paths>({ baseUrl, headers: { 'X-API-Key': writerKey } });

const filtered = await reader.GET('/api/v1/jobs', { params: { query: { state: ['CA', 'TX'], limit: 100 } } });
if (!filtered.data) throw new Error(\`list: \${filtered.response.status} \${JSON.stringify(filtered.error)}\`);

const walked: string[] = [];
let cursor = '';
let pages = 0;
for (;;) {
  const page = await reader.GET('/api/v1/jobs', { params: { query: { cursor, limit: 10 } } });
  if (!page.data) throw new Error(\`walk: \${page.response.status} \${JSON.stringify(page.error)}\`);
  walked.push(...page.data.data.map((job) => job.id));
  pages += 1;
  const next = page.data.meta.nextCursor;
  if (typeof next !== 'string') break;
  cursor = next;
}
const total = (await reader.GET('/api/v1/jobs', { params: { query: { limit: 1 } } })).data?.meta.total;

const create = () =>
  writer.POST('/api/v1/jobs', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: {
      title: 'Typed client',
      department: 'Engineering',
      type: 'contract',
      description: 'Posted by a client generated from the OpenAPI document.',
      state: 'TX',
      salary: { min: 90000, currency: 'USD' },
      submissionDueDate: '2027-01-31',
      status: 'active',
    },
  });
const first = await create();
const again = await create();
if (!first.data || !again.data) throw new Error(\`create: \${first.response.status} \${again.response.status}\`);

console.log(
  JSON.stringify({
    filtered: { url: filtered.response.url, ids: filtered.data.data.map((job) => job.id), total: filtered.data.meta.total },
    walk: { pages, ids: walked, total },
    created: [first, again].map(({ data, response }) => ({
      status: response.status,
      id: data.data.id,
      salary: data.data.salary,
      replayed: response.headers.get('Idempotent-Replayed'),
    })),
  }),
);
`;

/** Each create body the API refuses, on a line of its own: each must be a compile error there. */
const REFUSED = {
  'submissionDueDate as a number': 'submissionDueDate: 20261231',
  'salary without a currency': 'salary: { min: 5 }',
  'state "California"': "state: 'California'",
};
const REFUSED_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8000' });
const valid = { title: 'Engineer', department: 'Engineering', type: 'contract', description: 'Build things.' } as const;
${Object.values(REFUSED)
  .map((field, i) => `export const refused${i} = () => client.POST('/api/v1/jobs', { body: { ...valid, ${field} } });`)
  .join('\n')}
export const accepted = () => client.POST('/api/v1/jobs', { body: { ...valid, state: 'CA', salary: { max: 5, currency: 'EUR' } } });
`;

let stack: LocalStack;
let dir: string;
let diagnostics: readonly ts.Diagnostic[];
let started: number;

beforeAll(async () => {
  started = Date.now();
  dir = mkdtempSync(path.join(os.tmpdir(), 'generated-client-'));
  // The program's imports resolve as in a partner's project: openapi-fetch from node_modules.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const [, types] = await Promise.all([
    startStack('generated_client').then((s) => (stack = s)),
    openapiTS(readFileSync(OPENAPI_PATH, 'utf8')).then(astToString),
  ]);
  writeFileSync(path.join(dir, 'schema.d.ts'), types);
  writeFileSync(path.join(dir, 'main.mts'), PROGRAM);
  writeFileSync(path.join(dir, 'refused.mts'), REFUSED_PROGRAM);
  // tsc --strict, as a partner's project compiles: one program for both files, main.mts emitted.
  const program = ts.createProgram([path.join(dir, 'main.mts'), path.join(dir, 'refused.mts')], {
    strict: true,
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    outDir: dir,
  });
  diagnostics = ts.getPreEmitDiagnostics(program);
  program.emit(program.getSourceFile(path.join(dir, 'main.mts')));
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const problems = (file: string) =>
  diagnostics
    .filter((d) => d.file?.fileName === path.join(dir, file))
    .map((d) => ({
      line: d.file!.getLineAndCharacterOfPosition(d.start!).line + 1,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }));

test('the program compiles under tsc --strict with no error', () => {
  expect(
    diagnostics.filter((d) => d.file?.fileName !== path.join(dir, 'refused.mts')).map((d) => d.messageText),
  ).toEqual([]);
});

test('each create body the API refuses is a compile error on its own line, and only there', () => {
  const lines = REFUSED_PROGRAM.split('\n');
  const lineOf = (field: string) => lines.findIndex((line) => line.includes(field)) + 1;
  const found = problems('refused.mts');
  expect([...new Set(found.map((p) => p.line))].sort()).toEqual(Object.values(REFUSED).map(lineOf).sort());
  const said = (field: string) =>
    found
      .filter((p) => p.line === lineOf(field))
      .map((p) => p.message)
      .join('\n');
  expect(said(REFUSED['submissionDueDate as a number'])).toMatch(/'number' is not assignable to type 'string'/);
  expect(said(REFUSED['salary without a currency'])).toMatch(
    /^Type '\{ min: number; \}' is not assignable[^]*currency/,
  );
  expect(said(REFUSED['state "California"'])).toMatch(/'"California"' is not assignable/);
});

test('run against the local gateway: the two-state filter, a whole cursor walk and an idempotent create', async () => {
  // The comma list, asked before the program creates a job in one of the states.
  const comma = (await (
    await fetch(`${stack.url}/api/v1/jobs?state=CA,TX&limit=100`, { headers: { 'X-API-Key': DEMO.reader } })
  ).json()) as Parsed;
  const key = `generated-client-${Date.now()}`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(dir, 'main.mjs'), stack.url, DEMO.reader, DEMO.writer, key],
    { timeout: 30_000 },
  );
  const ran: Parsed = JSON.parse(stdout);

  // openapi-fetch's default for an array: the parameter repeated, which the API reads as the comma list.
  expect(new URL(ran.filtered.url).search).toBe('?state=CA&state=TX&limit=100');
  expect(ran.filtered.ids).toEqual(comma.data.map((job: Parsed) => job.id));
  expect(ran.filtered.total).toBe(comma.meta.total);
  expect(new Set(comma.data.map((job: Parsed) => job.state))).toEqual(new Set(['CA', 'TX']));

  expect(ran.walk.pages).toBeGreaterThan(1);
  expect(ran.walk.ids).toHaveLength(ran.walk.total);
  expect(new Set(ran.walk.ids).size).toBe(ran.walk.total);

  expect(ran.created).toEqual([
    { status: 201, id: expect.any(String), salary: { min: 90000, max: null, currency: 'USD' }, replayed: null },
    { status: 201, id: ran.created[0].id, salary: { min: 90000, max: null, currency: 'USD' }, replayed: 'true' },
  ]);
  // Well under a minute, CI being at its limit.
  expect(Date.now() - started).toBeLessThan(60_000);
}, 60_000);

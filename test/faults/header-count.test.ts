/**
 * A request with more headers than a gateway reads: a JSON 431 from the service on its own, from
 * the local gateway and from real Kong, at the same count (100 client headers, Host and the key
 * included), and never a request judged without the identity headers a gateway added last.
 */
import { DEMO, raw, startBoth, type BothGateways, type RawAnswer } from '../kong/both-gateways';
import { gatewayKinds } from '../e2e/support';
import { startTestService, type TestService } from '../helpers/service';

const SECRET = 'header-count-gateway-secret-0123';
const MESSAGE = 'Too many request headers: send at most 100';
const fill = (n: number) => Array.from({ length: n }, (_, i) => `X-Fill-${i}: v\r\n`).join('');
// Short lines, so 1,500 of them stay under Node's 16 KB of head (a larger head is a 431 of its own).
const shortFill = (n: number) => Array.from({ length: n }, (_, i) => `F${i}:v\r\n`).join('');

function expect431(answer: RawAnswer): void {
  expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
    status: 431,
    type: 'application/json; charset=utf-8',
  });
  expect(JSON.parse(answer.body).error).toBe(MESSAGE);
}

describe('the service on its own, with a gateway secret', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ name: 'header_count', gatewaySecret: SECRET, seed: true });
  });
  afterAll(() => service.close());
  const port = () => service.port;

  // What a gateway sends after the client's headers (test/kong/differential.test.ts shows Kong's).
  const gatewayHeaders =
    `X-Forwarded-For: 127.0.0.1\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: x\r\nX-Forwarded-Port: 8000\r\nX-Forwarded-Path: /api/v1/jobs\r\n` +
    `X-Real-IP: 127.0.0.1\r\nX-Kong-Request-Id: 0123\r\nX-Request-ID: abc#1\r\nX-Consumer-ID: 6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01\r\n` +
    `X-Consumer-Username: demo-reader\r\nX-Consumer-Custom-ID: demo-reader\r\nX-Consumer-Groups: jobs:read\r\nX-Credential-Identifier: c\r\nX-Gateway-Secret: ${SECRET}\r\n`;
  const get = (clientHeaders: string) =>
    raw(
      port(),
      [`GET /api/v1/jobs?limit=1 HTTP/1.1\r\nHost: x\r\n${clientHeaders}${gatewayHeaders}Connection: close\r\n\r\n`],
      3000,
    );

  test('100 client headers and everything a gateway adds: served', async () => {
    // Host + 98 + Connection = 100 client headers.
    expect((await get(fill(98))).status).toBe(200);
  });

  test('101 client headers: a JSON 431 before anything else is judged', async () => {
    expect431(await get(fill(99)));
  });

  test.each([990, 1000, 1500])(
    '%i headers before the identity headers: a JSON 431, never the gateway-secret 401',
    async (n) => {
      expect431(await get(shortFill(n)));
    },
  );
});

describe.each(gatewayKinds())('through the %s', (kind) => {
  let both: BothGateways;
  beforeAll(async () => {
    both = await startBoth(`header_count_${kind === 'real Kong' ? 'kong' : 'local'}`);
  }, 120_000);
  afterAll(() => both?.close());
  const port = () => both.gateways.find((g) => g.name === kind)!.port;
  const get = (n: number) =>
    raw(
      port(),
      [
        `GET /api/v1/jobs?limit=1 HTTP/1.1\r\nHost: x\r\n${fill(n)}X-API-Key: ${DEMO.reader}\r\nConnection: close\r\n\r\n`,
      ],
      3000,
    );

  test('100 headers with a valid key: forwarded with the identity headers and served', async () => {
    const before = both.service.received.length;
    expect((await get(97)).status).toBe(200);
    const arrived = both.service.received.slice(before);
    expect(arrived.map((r) => r.headers['x-consumer-username'])).toEqual(['demo-reader']);
  });

  test.each([98, 990, 1200, 1500])(
    'a valid key and %i more headers: the gateway answers a JSON 431 and nothing reaches the service',
    async (n) => {
      const before = both.service.received.length;
      expect431(await get(n));
      expect(both.service.received.length).toBe(before);
    },
  );
});

/**
 * Idempotency-Key at the edges that had no test (issue 12): the exact 400s a partner reads for a
 * repeated or malformed key, and the first and last visible ASCII characters as keys.
 */
import http from 'node:http';
import { json, writer } from './helpers/consumers';
import { call } from './helpers/http';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ name: 'idempotency_edges' });
});
afterAll(() => service.close());

const valid = { title: 'Key Edges', department: 'QA', type: 'contract', description: 'Checks the key rules.' };
const post = (key: string, body: object = valid) =>
  call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json, 'Idempotency-Key': key }, body: JSON.stringify(body) });

test('two Idempotency-Key headers: a 400 that says to send one', async () => {
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json, 'Idempotency-Key': [`edge-a-${Date.now()}`, `edge-b-${Date.now()}`] },
    });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end(JSON.stringify(valid));
  });
  expect(answer.status).toBe(400);
  expect(JSON.parse(answer.body)).toEqual({ error: 'Send one Idempotency-Key header, not several' });
});

test('a malformed key: the whole message, with its hint', async () => {
  const res = await post('two words');
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    error: 'Idempotency-Key must be 1 to 255 visible ASCII characters, without spaces (a UUID is a good choice)',
  });
});

test.each([
  ['"!" (the first visible ASCII character)', '!'],
  ['"~" (the last)', '~'],
  ['every visible ASCII character', Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('')],
])('a key of %s is a key: created once, then replayed', async (_label, key) => {
  const body = { ...valid, title: `Key edge ${key.length}` };
  const first = await post(key, body);
  expect(first.status).toBe(201);
  const again = await post(key, body);
  expect(again.status).toBe(201);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body).toEqual(first.body);
});

/**
 * The body reader's JSON step (service/middleware/json-body.ts parseJsonObject, with
 * json-body.ts): which texts a partner's create is refused for, and with which words, at
 * the edges the mutation run found unpinned: JSON that is not an object, a blank body, and the
 * structure the duplicate-key scan must follow (nesting, arrays, values equal to keys).
 */
import { HttpError } from '../../../service/errors';
import { parseJsonObject } from '../../../service/middleware/json-body';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { json, writer } from '../../helpers/consumers';
import { call, expectJsonError } from '../../helpers/http';
import { sharedTestService } from '../../helpers/service';

const parse = (text: string) => parseJsonObject(Buffer.from(text, 'utf8'));

/** The refusal's status and body, as the error middleware would send them. */
function refusal(text: string): { status: number; body: unknown } {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, body: { error: error.message, ...error.extra } };
    throw error;
  }
  throw new Error(`accepted: ${text}`);
}

test.each(['[]', '[{"title":"x"}]', '"a job"', '42', 'true', 'null'])(
  '%s is JSON but not an object: 400 "Request body must be a JSON object"',
  (text) => {
    expect(refusal(text)).toEqual({ status: 400, body: { error: 'Request body must be a JSON object' } });
  },
);

test.each(['', '   ', '\n\t \r\n'])('a body of nothing but whitespace (%j) is "empty", not "malformed"', (text) => {
  expect(refusal(text)).toEqual({ status: 400, body: { error: 'Request body is empty: send a JSON object' } });
});

describe('duplicate keys: each object on its own', () => {
  test.each([
    ['a value equal to its key', '{"a":"a"}'],
    ['two values equal to each other', '{"a":"x","b":"x"}'],
    ['the same key in an object and in the object it sits in', '{"a":{"b":1},"b":2}'],
    ['the same key in two objects of a list', '{"a":[{"k":1},{"k":2}]}'],
    ['a key after a list', '{"a":[1,2],"b":[3]}'],
    ['a key-like text after an escaped quote in a value', '{"a":"\\",\\"a\\":","b":1}'],
  ])('%s is accepted: %s', (_label, text) => {
    expect(parse(text)).toEqual(JSON.parse(text));
  });

  test.each([
    ['after a list', '{"list":[1],"x":1,"x":2}', 'x'],
    ['after a nested object', '{"a":{"b":1},"x":1,"x":2}', 'x'],
    ['inside an object in a list', '{"a":[{"k":1},{"k":2,"k":3}]}', 'a.1.k'],
    ['after a value ending in an escaped backslash', '{"v":"a\\\\","x":1,"x":2}', 'x'],
    ['spelled once with an escape', '{"ab":1,"a\\u0062":2}', 'ab'],
    ['that ends in a backslash', '{"k\\\\":1,"k\\\\":2}', 'k\\'],
  ])('a key repeated %s is refused, named by its path', (_label, text, field) => {
    expect(refusal(text)).toEqual({
      status: 400,
      body: {
        error: 'Validation failed',
        details: [{ field, message: `${field} appears more than once; send each field once` }],
      },
    });
  });

  test('a repeated key of 64 characters is named whole; a longer one is clipped to 64 and "…"', () => {
    const exact = 'k'.repeat(64);
    expect(refusal(`{"${exact}":1,"${exact}":2}`).body).toMatchObject({ details: [{ field: exact }] });
    const long = `${'l'.repeat(64)}tail`;
    expect(refusal(`{"${long}":1,"${long}":2}`).body).toMatchObject({ details: [{ field: `${'l'.repeat(64)}…` }] });
  });
});

/**
 * POST /api/v1/jobs's body reader (service/middleware/json-body.ts) at edges that had no
 * test (issue 12): the charset spellings that are UTF-8, the headers on its refusals,
 * the clipped name of an unknown coding and codings listed with identity.
 */
describe('the JSON body through the service', () => {
  const service = sharedTestService({ name: 'json_body_edges' });

  const valid = { title: 'Body Edges', department: 'QA', type: 'contract', description: 'Checks the body reader.' };
  const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
    call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json, ...headers }, body });

  /**
   * Writes a raw request, half-closes the socket (the client has nothing more to send) and
   * returns the whole answer as text.
   */
  function raw(request: string): Promise<string> {
    const { port } = new URL(service.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: Number(port), allowHalfOpen: true }, () =>
        socket.end(request),
      );
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (answer += String(chunk)));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  test.each(['utf8', 'UTF-8', 'Utf-8'])('charset=%s is UTF-8', async (charset) => {
    const res = await post(JSON.stringify(valid), { 'Content-Type': `application/json; charset=${charset}` });
    expect(res.status).toBe(201);
  });

  test('an unknown coding is named in the 415, clipped to 40 characters, with Accept-Encoding: gzip', async () => {
    const coding = `x-${'z'.repeat(50)}`;
    const res = await post(JSON.stringify(valid), { 'Content-Encoding': coding });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      error: `Unsupported Content-Encoding "${coding.slice(0, 40)}": send the body uncompressed or gzip-compressed`,
    });
    expect(res.headers.get('accept-encoding')).toBe('gzip');
  });

  test('gzip listed with identity is still gzip; two real codings are refused', async () => {
    const gz = gzipSync(JSON.stringify(valid));
    expect((await post(gz, { 'Content-Encoding': 'identity, gzip' })).status).toBe(201);
    const stacked = await post(gz, { 'Content-Encoding': 'gzip, x-gzip' });
    expectJsonError(
      stacked,
      415,
      'Unsupported Content-Encoding "gzip, x-gzip": send the body uncompressed or gzip-compressed',
    );
  });

  /**
   * Writes a raw request and keeps the client's side open, as a client still uploading would;
   * returns the answer once its whole body has arrived.
   */
  function rawKeepOpen(request: string): Promise<string> {
    const { port } = new URL(service.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => socket.write(request));
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => {
        answer += String(chunk);
        const [head = '', body] = answer.split('\r\n\r\n', 2);
        const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
        if (body !== undefined && length !== undefined && Buffer.byteLength(body) >= Number(length)) {
          socket.destroy();
          resolve(answer);
        }
      });
      socket.on('error', reject);
    });
  }

  test('a Content-Length over the limit is refused with Connection: close while the client is still sending', async () => {
    const answer = await rawKeepOpen(
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Consumer-ID: ${writer['X-Consumer-ID']}\r\nX-Consumer-Username: demo-writer\r\n` +
        `X-Consumer-Groups: jobs:read, jobs:write\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024}\r\n\r\n{"title":`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
  });

  test('the answers that leave the body unread close the connection: 413 by Content-Length, 415 for a coding', async () => {
    const tooLarge = await raw(
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Consumer-ID: ${writer['X-Consumer-ID']}\r\nX-Consumer-Username: demo-writer\r\n` +
        `X-Consumer-Groups: jobs:read, jobs:write\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024}\r\n\r\n{`,
    );
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    expect(tooLarge).toMatch(/\r\nConnection: close\r\n/i);
    expect(tooLarge).toContain('{"error":"Request body too large: the limit is 100 KB"}');

    const body = JSON.stringify(valid);
    const coded = await raw(
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Consumer-ID: ${writer['X-Consumer-ID']}\r\nX-Consumer-Username: demo-writer\r\n` +
        `X-Consumer-Groups: jobs:read, jobs:write\r\nContent-Type: application/json\r\nContent-Encoding: br\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(coded).toMatch(/^HTTP\/1\.1 415 /);
    expect(coded).toMatch(/\r\nConnection: close\r\n/i);
  });
});

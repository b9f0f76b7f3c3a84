/**
 * Cursors and change-feed positions are opaque and signed (service/http/tokens.ts): a token that
 * was cut short, extended, or given a stray character is the documented 400, never a 500 and
 * never a silently different walk (issue 12: only one-character substitutions were tested).
 */
import { reader } from '../../helpers/consumers';
import { call } from '../../helpers/http';
import { startTestService, type TestService } from '../../helpers/service';

let service: TestService;
let cursor: string;
let since: string;
beforeAll(async () => {
  service = await startTestService({ name: 'token_tampering', seed: true });
  cursor = (await call(`${service.url}/api/v1/jobs?limit=1&cursor=`, { headers: reader })).body.meta.nextCursor;
  since = (await call(`${service.url}/api/v1/jobs/changes?limit=1`, { headers: reader })).body.meta.nextSince;
});
afterAll(() => service.close());

const CURSOR_INVALID =
  "cursor is not valid: pass meta.nextCursor (or the Link header's URL) back exactly as it was given";
const SINCE_INVALID =
  'since is not valid: pass meta.nextSince back exactly as it was given, or leave since out to read the feed from the beginning';

const variants = (token: string): Array<[string, string]> => [
  ['cut short by one character', token.slice(0, -1)],
  ['cut short by four characters (three bytes)', token.slice(0, -4)],
  ['extended by four characters', `${token}AAAA`],
  ['with a stray character before it', `.${token}`],
  ['with a stray character after it', `${token}.`],
  ['with a stray character inside it', `${token.slice(0, 10)}~${token.slice(10)}`],
];

test('the tokens used here are accepted as they were given', async () => {
  expect(typeof cursor).toBe('string');
  expect((await call(`${service.url}/api/v1/jobs?limit=1&cursor=${cursor}`, { headers: reader })).status).toBe(200);
  expect((await call(`${service.url}/api/v1/jobs/changes?since=${since}`, { headers: reader })).status).toBe(200);
});

test('a list cursor', async () => {
  for (const [label, value] of variants(cursor)) {
    const res = await call(`${service.url}/api/v1/jobs?limit=1&cursor=${value}`, { headers: reader });
    expect({ label, status: res.status, body: res.body }).toEqual({
      label,
      status: 400,
      body: { error: CURSOR_INVALID },
    });
  }
});

test('a change-feed position', async () => {
  for (const [label, value] of variants(since)) {
    const res = await call(`${service.url}/api/v1/jobs/changes?since=${value}`, { headers: reader });
    expect({ label, status: res.status, body: res.body }).toEqual({
      label,
      status: 400,
      body: { error: SINCE_INVALID },
    });
  }
});

/**
 * GET /api/v1/jobs: the exact 400 a partner reads for each kind of bad filter (issue 12: tests
 * checked the status only), and the lenient spellings that are not errors.
 */
import { call } from './helpers/http';
import { reader } from './helpers/consumers';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ name: 'list_messages', seed: true });
});
afterAll(() => service.close());

const list = (query: string) => call(`${service.url}/api/v1/jobs${query}`, { headers: reader });

test.each([
  ['?status=draft', 'status=draft is not available: drafts are never listed (fetch your own draft by id)'],
  ['?status=open,draft', 'status=draft is not available: drafts are never listed (fetch your own draft by id)'],
  ['?status=published', 'status must be one of active, open, paused, closed (or a comma-separated list of them); got "published"'],
  ['?status=', 'status must be one of active, open, paused, closed (or a comma-separated list of them); got ""'],
  ['?status=active,,open', 'status must be one of active, open, paused, closed (or a comma-separated list of them); got ""'],
  ['?status=Open', 'status must be one of active, open, paused, closed (or a comma-separated list of them); got "Open"'],
  ['?type=remote', 'remote is not a job type; to find remote roles filter on workplace=remote'],
  [
    '?type=freelance',
    'type must be one of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams (or a comma-separated list of them); got "freelance"',
  ],
  ['?workplace=moon', 'workplace must be one of on-site, hybrid, remote (or a comma-separated list of them); got "moon"'],
  ['?workplace=remote', null],
  ['?department=%20%20', 'department must not be empty'],
  [`?department=${'d'.repeat(101)}`, 'department must be at most 100 characters'],
  ['?page=0', 'page must be a whole number, 1 or more'],
  ['?page=two', 'page must be a whole number, 1 or more'],
  ['?limit=101', 'limit must be an integer from 1 to 100'],
  ['?limit=00000000000000005', 'limit must be an integer from 1 to 100'],
  ['?status=open&status=paused', 'Query parameter "status" was given more than once; send one value (a comma-separated list where allowed)'],
])('%s', async (query, message) => {
  const res = await list(query);
  if (message === null) {
    expect(res.status).toBe(200);
  } else {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: message });
  }
});

describe('long values are clipped to 40 characters in the message', () => {
  test('a value of 41 characters', async () => {
    const value = 'x'.repeat(41);
    const res = await list(`?status=${value}`);
    expect(res.body.error).toBe(`status must be one of active, open, paused, closed (or a comma-separated list of them); got "${'x'.repeat(40)}…"`);
  });

  test('a value of exactly 40 characters is quoted whole', async () => {
    const value = 'y'.repeat(40);
    const res = await list(`?workplace=${value}`);
    expect(res.body.error).toBe(`workplace must be one of on-site, hybrid, remote (or a comma-separated list of them); got "${value}"`);
  });

  test('an unknown parameter name', async () => {
    const res = await list(`?${'p'.repeat(45)}=1`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(new RegExp(`^Unknown query parameter "${'p'.repeat(40)}…"\\. Allowed: `));
  });
});

describe('spellings that are not errors', () => {
  test('spaces around comma-list items', async () => {
    const spaced = await list('?status=%20paused%20,%20closed%20');
    const plain = await list('?status=paused,closed');
    expect(spaced.status).toBe(200);
    expect(spaced.body).toEqual(plain.body);
    expect(plain.body.meta.total).toBeGreaterThan(0);
  });

  test('a value repeated inside one list counts once', async () => {
    const twice = await list('?type=contract,contract&limit=100');
    const once = await list('?type=contract&limit=100');
    expect(twice.status).toBe(200);
    expect(twice.body).toEqual(once.body);
  });

  test('16 digits are still a number: limit=0000000000000005 is 5', async () => {
    const res = await list('?limit=0000000000000005');
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(5);
    expect(res.body.data).toHaveLength(5);
  });

  test('page and limit at their bounds', async () => {
    expect((await list('?page=1&limit=1')).body.meta).toMatchObject({ page: 1, limit: 1 });
    expect((await list('?limit=100')).body.meta.limit).toBe(100);
    expect((await list('?department=' + 'd'.repeat(100))).status).toBe(200);
  });

  test('api_key in the query is ignored (the gateway strips it; a direct caller may still send it)', async () => {
    const res = await list('?api_key=demo-reader-2f6c1a9e&limit=3');
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(3);
    expect(res.text).not.toContain('demo-reader-2f6c1a9e');
  });
});

/**
 * GET /api/v1/jobs/changes: the exact 400 a partner reads for each bad query, and the edges of
 * what is accepted (issue 12: the feed's query rules had status-only tests for several of these).
 */
import { reader } from './helpers/consumers';
import { call } from './helpers/http';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ name: 'changes_messages' });
});
afterAll(() => service.close());

const changes = (query: string) => call(`${service.url}/api/v1/jobs/changes${query}`, { headers: reader });
const LIMIT = 'limit must be an integer from 1 to 500';

test.each([
  ['limit of five digits, even a valid value', '?limit=00500', LIMIT],
  ['limit with a letter before', '?limit=a5', LIMIT],
  ['limit with a letter after', '?limit=5a', LIMIT],
  ['negative limit', '?limit=-1', LIMIT],
  ['limit twice', '?limit=1&limit=2', 'Query parameter "limit" was given more than once; send one value'],
  // Longer than any position the API hands out: refused before it is even checked.
  ['since of 201 characters', `?since=${'A'.repeat(201)}`, 'since is not valid: pass meta.nextSince back exactly as it was given'],
])('%s', async (_label, query, message) => {
  const res = await changes(query);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: message });
});

test('an unknown parameter name is clipped to 40 characters', async () => {
  const res = await changes(`?${'q'.repeat(41)}=1`);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: `Unknown query parameter "${'q'.repeat(40)}…". Allowed: since, limit` });
  const exact = await changes(`?${'r'.repeat(40)}=1`);
  expect(exact.body).toEqual({ error: `Unknown query parameter "${'r'.repeat(40)}". Allowed: since, limit` });
});

test.each([
  ['no limit', '', 100],
  ['limit=1', '?limit=1', 1],
  ['limit=500', '?limit=500', 500],
  ['limit=0500', '?limit=0500', 500],
  // The gateway strips api_key; a direct caller may still send it, and it is neither an error nor echoed.
  ['api_key', '?api_key=demo-reader-2f6c1a9e&limit=7', 7],
])('%s is accepted', async (_label, query, limit) => {
  const res = await changes(query);
  expect(res.status).toBe(200);
  expect(res.body.meta.limit).toBe(limit);
  expect(res.text).not.toContain('demo-reader-2f6c1a9e');
});

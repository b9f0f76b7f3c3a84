/**
 * GET /api/v1/jobs: exact 400s at the edges of page, limit and cursor that a mutation run showed
 * unpinned (issue 12), with the values just inside them accepted.
 */
import { reader } from './helpers/consumers';
import { call } from './helpers/http';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ name: 'list_edges' });
});
afterAll(() => service.close());

const list = (query: string) => call(`${service.url}/api/v1/jobs${query}`, { headers: reader });
const PAGE = 'page must be a whole number, 1 or more';
const LIMIT = 'limit must be an integer from 1 to 100';

test.each([
  ['page with a letter after the digits', '?page=2x', PAGE],
  ['page with a letter before the digits', '?page=x2', PAGE],
  ['limit 0', '?limit=0', LIMIT],
  ['limit with a letter after the digits', '?limit=5a', LIMIT],
  ['limit with a letter before the digits', '?limit=a5', LIMIT],
  ['limit as a decimal', '?limit=2.5', LIMIT],
  // Longer than any cursor the API hands out: refused before it is even checked.
  ['cursor of 201 characters', `?cursor=${'A'.repeat(201)}`, 'cursor is not valid: pass meta.nextCursor back exactly as it was given'],
  ['cursor given twice', '?cursor=&cursor=', 'Query parameter "cursor" was given more than once; send one value (a comma-separated list where allowed)'],
  [
    'an unknown parameter in offset mode names the offset parameters',
    '?sort=title',
    'Unknown query parameter "sort". Allowed: status, type, workplace, department, page, limit',
  ],
  [
    'an unknown parameter of exactly 40 characters is quoted whole',
    `?${'p'.repeat(40)}=1`,
    `Unknown query parameter "${'p'.repeat(40)}". Allowed: status, type, workplace, department, page, limit`,
  ],
])('%s', async (_label, query, message) => {
  const res = await list(query);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: message });
});

test('a page number past the largest safe one is a 400 that names the largest, never zod\'s own text', async () => {
  for (const page of ['9007199254740992', '9999999999999999']) {
    const res = await list(`?page=${page}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'page must be at most 9007199254740991' });
  }
});

test('the largest safe page number is a page (an empty one), and the default limit is 20', async () => {
  const res = await list('?page=9007199254740991');
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([]);
  expect(res.body.meta).toMatchObject({ page: 9007199254740991, limit: 20 });
});

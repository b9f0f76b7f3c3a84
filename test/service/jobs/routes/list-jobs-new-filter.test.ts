/**
 * Adding a filter leaves every outstanding cursor walking: a cursor names only the filters it was
 * made with. Here the test declares a filter of its own (on client_name, with the two indexes a
 * generated migration would add) and loads the listing with it, as the next release would.
 */
import { generateJobs } from '../../../../db/seed-data';
import { insertInBatches } from '../../../../db/seed';
import { signingKey } from '../../../../db/signing-key';
import type * as Filters from '../../../../domain/list-filters';
import type * as ListJobs from '../../../../service/jobs/routes/list-jobs';
import type * as Queries from '../../../../service/jobs/contract/queries';
import type * as Validate from '../../../../service/http/validate';
import { listPage } from '../../../../service/jobs/routes/list-jobs';
import { LIST_QUERY } from '../../../../service/jobs/contract/queries';
import { queryReader } from '../../../../service/http/validate';
import { freshDatabase, type TestDatabase } from '../../../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('list_new_filter');
  await insertInBatches(database.db, generateJobs({ count: 60 }));
  await database.query(
    'ALTER TABLE jobs ADD INDEX jobs_listed_client_idx (listed, client_name, created_at, id), ADD INDEX jobs_status_client_idx (visible_status, client_name, created_at, id)',
  );
}, 60_000);
afterAll(() => database.close());

/** The listing as the next release would load it: today's modules with one filter more declared. */
function withClientFilter(): {
  listPage: typeof ListJobs.listPage;
  parse: (raw: Record<string, string>) => Queries.ListQuery;
} {
  let loaded!: ReturnType<typeof withClientFilter>;
  jest.isolateModules(() => {
    jest.doMock('../../../../domain/list-filters', () => {
      const actual = jest.requireActual<typeof Filters>('../../../../domain/list-filters');
      const client: Filters.FilterDeclaration = {
        kind: 'values',
        values: ['Northwind Health', 'Contoso Logistics', 'Fabrikam Bank', 'Tailspin Retail', 'Globex Energy'],
        column: 'clientName',
        description: 'Client name',
        example: 'Globex Energy',
        percentPerValue: 20,
      };
      const LIST_FILTERS = { ...actual.LIST_FILTERS, client };
      return {
        ...actual,
        LIST_FILTERS,
        FILTER_NAMES: Object.keys(LIST_FILTERS),
        canonicalFilter: (filter: Filters.AnyFilter) => actual.canonicalFilter(filter, LIST_FILTERS),
      };
    });
    const queries = jest.requireActual<typeof Queries>('../../../../service/jobs/contract/queries');
    const validate = jest.requireActual<typeof Validate>('../../../../service/http/validate');
    loaded = {
      listPage: jest.requireActual<typeof ListJobs>('../../../../service/jobs/routes/list-jobs').listPage,
      parse: validate.queryReader(queries.LIST_QUERY),
    };
  });
  return loaded;
}

const parse = queryReader(LIST_QUERY);
const ids = (page: { body: { data: Array<{ id: string }> } }) => page.body.data.map((job) => job.id);

test('a cursor made before a filter was added walks on after it, to the same jobs; the new filter takes cursors of its own', async () => {
  const key = await signingKey(database.db);
  const first = await listPage(database.db, key, parse({ limit: '5', cursor: '' }));
  const cursor = first.body.meta.nextCursor!;
  const today = await listPage(database.db, key, parse({ limit: '5', cursor }));

  const next = withClientFilter();
  const after = await next.listPage(database.db, key, next.parse({ limit: '5', cursor }));
  expect(ids(after)).toEqual(ids(today));
  expect(ids(after)).toHaveLength(5);
  // And on to the end of the walk.
  let walked = [...ids(first), ...ids(after)];
  for (let at = after.body.meta.nextCursor; at;) {
    const page = await next.listPage(database.db, key, next.parse({ limit: '5', cursor: at }));
    walked = [...walked, ...ids(page)];
    at = page.body.meta.nextCursor;
  }
  const everything = await listPage(database.db, key, parse({ limit: '100' }));
  expect(walked).toEqual(ids(everything));

  // The new filter works, and an old cursor does not carry over to it.
  const client = ids(await next.listPage(database.db, key, next.parse({ client: 'Globex Energy', limit: '100' })));
  expect(client.length).toBeGreaterThan(0);
  expect(client.length).toBeLessThan(everything.body.data.length);
  await expect(
    next.listPage(database.db, key, next.parse({ client: 'Globex Energy', limit: '5', cursor })),
  ).rejects.toThrow(/^cursor belongs to another filter/);
});

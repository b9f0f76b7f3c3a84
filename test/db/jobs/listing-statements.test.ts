/**
 * planList (db/jobs/listing-statements.ts) where the mutation run found it unpinned: which index a
 * listing reads when a filter names every value, how a department is matched, and which listings
 * have day counts a deep page may start from (test/db/jobs/listing-windows.test.ts uses them).
 */
import { DEFAULT_STATUSES, JOB_TYPES, type ListFilter } from '../../../service/jobs/contract/job';
import { planList } from '../../../db/jobs/listing-statements';

test('all six types is the unfiltered listing: one read of the listing index, with day counts for deep pages', () => {
  expect(planList({ type: [...JOB_TYPES] })).toEqual({
    index: 'jobs_listed_idx',
    where: '`listed` = ?',
    combinations: [[true]],
    statusesOnly: DEFAULT_STATUSES,
  });
});

test('five of the six types is a type filter: one read of the type index per type', () => {
  const five = JOB_TYPES.slice(0, 5);
  const plan = planList({ type: [...five] });
  expect(plan.index).toBe('jobs_listed_type_idx');
  expect(plan.combinations).toEqual(five.map((type) => [true, type]));
});

test('department is matched as department_key is stored, lowered; no other filter value is', () => {
  // department_key is lower(trim(department)) in a binary collation, and the query keeps the partner's case.
  const plan = planList({ status: ['paused'], department: 'Finance', type: ['contract'], workplace: ['remote'] });
  expect(plan.where).toBe('`visible_status` = ? and `department_key` = lower(?) and `type` = ? and `workplace` = ?');
  expect(plan.combinations).toEqual([['paused', 'Finance', 'contract', 'remote']]);
  expect(plan.index).toBe('jobs_status_department_type_workplace_idx');
});

test.each<[string, ListFilter['status'], readonly string[]]>([
  ['the default listing', undefined, DEFAULT_STATUSES],
  ['status=open,active', ['open', 'active'], ['open', 'active']],
  ['status=paused,closed', ['paused', 'closed'], ['paused', 'closed']],
])('%s filters on statuses only, so its deep pages may start at their day', (_name, status, statuses) => {
  expect(planList({ status }).statusesOnly).toEqual(statuses);
});

test.each<[string, ListFilter]>([
  ['a type', { type: ['contract'] }],
  ['a workplace', { workplace: ['remote'] }],
  ['a department', { department: 'Finance' }],
  ['a status and a department', { status: ['paused'], department: 'Finance' }],
])('a listing filtered by %s has no day counts: they count every type, workplace and department', (_name, query) => {
  expect(planList(query)).not.toHaveProperty('statusesOnly');
});

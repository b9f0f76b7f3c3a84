/**
 * DATETIMEs as the Job's ISO 8601 strings (db/jobs/job-columns.ts): the driver's usual
 * `YYYY-MM-DD hh:mm:ss.mmm` is rewritten as text; any other form it may hand over (no
 * milliseconds, as a DATETIME without fraction or another server gives it) goes through Date.
 */
import type { SQL } from 'drizzle-orm';
import { publicColumns } from '../../../db/jobs/job-columns';

const decode = (field: 'createdAt' | 'updatedAt', value: string | null) =>
  (publicColumns[field] as unknown as SQL.Aliased & { decoder: { mapFromDriverValue(value: unknown): unknown } }).decoder.mapFromDriverValue(value);

test.each([
  ['2026-11-21 10:23:00.120', '2026-11-21T10:23:00.120Z'],
  ['2026-11-21 10:23:00', '2026-11-21T10:23:00.000Z'],
  ['2026-11-21 10:23:00.5', '2026-11-21T10:23:00.500Z'],
])('the driver value %s is %s', (value, iso) => {
  expect(decode('createdAt', value)).toBe(iso);
  expect(decode('updatedAt', value)).toBe(iso);
});

test('a missing updatedAt stays null', () => {
  expect(decode('updatedAt', null)).toBeNull();
});

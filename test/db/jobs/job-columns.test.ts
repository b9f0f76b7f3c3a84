/**
 * DATETIMEs as the Job's ISO 8601 strings (db/jobs/job-columns.ts): the driver's usual
 * `YYYY-MM-DD hh:mm:ss.mmm` is rewritten as text; any other form it may hand over (no
 * milliseconds, as a DATETIME without fraction or another server gives it) goes through Date.
 */
import { toIso } from '../../../db/jobs/job-columns';

test.each([
  ['2026-11-21 10:23:00.120', '2026-11-21T10:23:00.120Z'],
  ['2026-11-21 10:23:00', '2026-11-21T10:23:00.000Z'],
  ['2026-11-21 10:23:00.5', '2026-11-21T10:23:00.500Z'],
])('the driver value %s is %s', (value, iso) => {
  expect(toIso(value)).toBe(iso);
});

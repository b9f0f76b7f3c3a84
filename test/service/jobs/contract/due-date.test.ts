/**
 * service/jobs/contract/due-date.ts at the calendar's edges the mutation run found unpinned: the 400-year
 * leap rule, month and day zero, minute 60, the bounds of an offset, and a fraction of a second
 * given with fewer than three digits. A partner sees `calendar` as a 400 naming dueDate.
 */
import { parseDueDate } from '../../../../service/jobs/contract/due-date';

test.each([
  ['2400-02-29', '2400-02-29T00:00:00.000Z', 'a leap day in a year divisible by 400'],
  ['2028-01-31', '2028-01-31T00:00:00.000Z', 'the 31st of January in a leap year'],
  ['2030-01-10T10:00:00+23:00', '2030-01-09T11:00:00.000Z', 'an offset of +23:00'],
  ['2030-01-10T10:00:00-05:59', '2030-01-10T15:59:00.000Z', 'an offset of 59 minutes'],
  ['2030-01-01T00:00:00.5Z', '2030-01-01T00:00:00.500Z', 'half a second written as .5'],
  ['2030-01-01T00:00:00.05Z', '2030-01-01T00:00:00.050Z', 'fifty milliseconds written as .05'],
])('%s is accepted as %s (%s)', (value, iso) => {
  expect(parseDueDate(value)).toEqual({ date: new Date(iso) });
});

test.each([
  ['2100-02-29', 'a leap day in a century year not divisible by 400'],
  ['2030-00-10', 'month 00'],
  ['2030-01-00', 'day 00'],
  ['2030-01-10T10:60:00Z', 'minute 60'],
  ['2030-01-10T10:00:00+24:00', 'an offset of 24 hours'],
  ['2030-01-10T10:00:00+05:60', 'an offset of 60 minutes'],
])('%s is not a calendar date (%s)', (value) => {
  expect(parseDueDate(value)).toEqual({ problem: 'calendar' });
});

import { z } from 'zod';

const DUE_DATE_PROBLEMS = {
  format:
    'submissionDueDate must be an ISO 8601 date (2026-12-31) or date-time with a time zone (2026-12-31T17:00:00Z)',
  calendar: 'submissionDueDate is not a real calendar date',
  range: 'submissionDueDate must be from 1970-01-01 to 9999-12-31 in UTC',
} as const;

/** A calendar date (midnight UTC) or a date-time with an explicit offset; nothing ambiguous (parseDueDate below). */
export const dueDate = z
  .string({ error: 'submissionDueDate must be a string' })
  .transform((value, ctx) => {
    const parsed = parseDueDate(value);
    if ('date' in parsed) return parsed.date;
    ctx.addIssue({ code: 'custom', message: DUE_DATE_PROBLEMS[parsed.problem] });
    return z.NEVER;
  })
  .meta({
    description: 'A date (midnight UTC) or a date-time with Z or an offset, seconds optional; from 1970 to 9999',
    // As much of parseDueDate as JSON Schema says: the forms (the formats check the calendar) and the years.
    pattern: '^(19[7-9][0-9]|[2-9][0-9]{3})-',
    // The longest form DATE_TIME takes: 9999-12-31T23:59:59.123456789+23:59.
    maxLength: 35,
    // Each form a string too: a generated client reads a form without a type as unknown.
    anyOf: [
      { type: 'string', format: 'date', maxLength: 10 },
      { type: 'string', format: 'date-time', pattern: '^[^t z]*(Z|[+-][0-9]{2}:[0-9]{2})$', maxLength: 35 },
      {
        type: 'string',
        maxLength: 22,
        pattern:
          '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$',
      },
    ],
  });

/** The deadlines a job may have, in UTC: from the Unix epoch to the last instant DATETIME holds. */
export const EARLIEST_DUE_DATE = new Date('1970-01-01T00:00:00.000Z');
export const LATEST_DUE_DATE = new Date('9999-12-31T23:59:59.999Z');

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

export type DueDate = { date: Date } | { problem: 'format' | 'calendar' | 'range' };

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!);

/** A calendar date (midnight UTC) or a date-time with an explicit offset. */
export function parseDueDate(value: string): DueDate {
  const match = DATE.exec(value) ?? DATE_TIME.exec(value);
  if (!match) return { problem: 'format' };
  const [, y, mo, d, h, mi, s, fraction = '', sign, offsetH, offsetM] = match;
  // A date alone has no time or offset: those parts are 0.
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutesPart] = [
    y,
    mo,
    d,
    h,
    mi,
    s,
    offsetH,
    offsetM,
  ].map((part) => Number(part ?? 0)) as [number, number, number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return { problem: 'calendar' };
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutesPart > 59)
    return { problem: 'calendar' };
  // Milliseconds are what is stored; further digits are cut, never rounded up into the next second.
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutesPart);
  // setUTCFullYear, unlike Date.UTC, takes years 0-99 as they are (Date.UTC maps them to 1900-1999).
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, second, ms);
  const utc = at.getTime() - offsetMinutes * 60_000;
  if (utc < EARLIEST_DUE_DATE.getTime() || utc > LATEST_DUE_DATE.getTime()) return { problem: 'range' };
  return { date: new Date(utc) };
}

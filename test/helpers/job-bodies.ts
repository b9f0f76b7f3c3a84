/** The smallest body POST /api/v1/jobs accepts: the four required fields, nothing else. */
export const MINIMAL_JOB = {
  title: 'Senior Data Engineer',
  department: 'Data & Analytics',
  type: 'contract-to-hire',
  description: 'Build and run our pipelines.',
} as const;

/**
 * submissionDueDate spellings a partner may send, each with the instant it is stored as: the
 * calendar's and the range's edges, offsets, and fractions of a second. Checked on parseDueDate
 * and through POST /api/v1/jobs.
 */
export const ACCEPTED_DUE_DATES: Array<[label: string, value: string, stored: string]> = [
  ['a leap day in a year divisible by 400', '2400-02-29', '2400-02-29T00:00:00.000Z'],
  ['29 February in a leap year', '2028-02-29T12:00:00-05:30', '2028-02-29T17:30:00.000Z'],
  ['the 31st of January in a leap year', '2028-01-31', '2028-01-31T00:00:00.000Z'],
  ['an offset of +23:00', '2030-01-10T10:00:00+23:00', '2030-01-09T11:00:00.000Z'],
  ['an offset of 59 minutes', '2030-01-10T10:00:00-05:59', '2030-01-10T15:59:00.000Z'],
  ['half a second written as .5', '2030-01-01T00:00:00.5Z', '2030-01-01T00:00:00.500Z'],
  ['fifty milliseconds written as .05', '2030-01-01T00:00:00.05Z', '2030-01-01T00:00:00.050Z'],
  ['the first instant allowed', '1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
  ['the last date allowed', '9999-12-31', '9999-12-31T00:00:00.000Z'],
  ['the last instant allowed, digits past milliseconds cut', '9999-12-31T23:59:59.9999Z', '9999-12-31T23:59:59.999Z'],
  ['year 9999 with a positive offset', '9999-12-31T23:59:59+01:00', '9999-12-31T22:59:59.000Z'],
];

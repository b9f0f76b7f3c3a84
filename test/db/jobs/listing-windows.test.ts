/**
 * db/jobs/listing.ts's paging without a database: which end an offset page is counted from and the
 * exact rows it steps over, when it first walks job_day_counts to the day holding its first row,
 * and that walk over many days. `read` is a stub that serves day counts as the table would.
 */
import { offsetWindow, startAtDay, type DayReads } from '../../../db/jobs/listing';
import { planList } from '../../../db/jobs/listing/plan';
import { DEFAULT_STATUSES } from '../../../domain/job';

const DAY_MS = 86_400_000;
/** 250 days of 2024, oldest first: 2024-01-01 to 2024-09-06. */
const OLDEST_FIRST = Array.from({ length: 250 }, (_, i) =>
  new Date(Date.UTC(2024, 0, 1) + i * DAY_MS).toISOString().slice(0, 10),
);
const NEWEST_FIRST = [...OLDEST_FIRST].reverse();

/** job_day_counts for the default statuses: `days` in the order the walk reads them, `perDay` jobs each; records each read's arguments. */
function dayCounts(days: readonly string[], perDay: number | number[]) {
  const statements: Array<Parameters<DayReads>[0]> = [];
  const read: DayReads = (asked) => {
    statements.push(asked);
    const { past, days: count } = asked;
    const start = past === undefined ? 0 : days.indexOf(past) + 1;
    return Promise.resolve(
      days
        .slice(start, start + count)
        .map((day, i) => ({ day, n: Array.isArray(perDay) ? perDay[start + i]! : perDay })),
    );
  };
  return { read, statements };
}

const unread = () => jest.fn<ReturnType<DayReads>, Parameters<DayReads>>(() => Promise.resolve([]));
const listing = planList({});

test.each([
  ['page 2 of 10 steps over the 10 rows before it', 100, 10, { after: null, skip: 10, take: 10 }],
  [
    'page 9 of 10 is read from the end, stepping over the 10 rows after it',
    100,
    80,
    { after: null, skip: 10, take: 10, fromEnd: true },
  ],
  [
    'the last, partial page takes the 5 rows left, from the end, stepping over none',
    95,
    90,
    { after: null, skip: 0, take: 5, fromEnd: true },
  ],
  ['the middle page steps over 45 rows either way, and reads forward', 100, 45, { after: null, skip: 45, take: 10 }],
])('%s', async (_name, total, offset, window) => {
  const read = unread();
  expect(await offsetWindow(read, listing, { offset, limit: 10, total })).toEqual(window);
  expect(read).not.toHaveBeenCalled();
});

test('a page 990 rows deep steps over them: no day counts are read below 1,000', async () => {
  const read = unread();
  expect(await offsetWindow(read, listing, { offset: 990, limit: 10, total: 100_000 })).toEqual({
    after: null,
    skip: 990,
    take: 10,
  });
  expect(read).not.toHaveBeenCalled();
});

test('a page 1,000 rows deep starts at its day and steps over that day only', async () => {
  const { read } = dayCounts(['2024-03-10', '2024-03-09'], 600);
  // 600 rows on 03-10, so the page is 400 rows into 03-09: rows created before 03-10 start.
  expect(await offsetWindow(read, listing, { offset: 1000, limit: 10, total: 100_000 })).toEqual({
    after: null,
    skip: 400,
    take: 10,
    from: new Date('2024-03-10T00:00:00.000Z'),
  });
});

test('a deep page of a type-filtered listing never starts from day counts, which count every type', async () => {
  const read = unread();
  expect(
    await offsetWindow(read, planList({ type: ['contract'] }), { offset: 5000, limit: 10, total: 100_000 }),
  ).toEqual({
    after: null,
    skip: 5000,
    take: 10,
  });
  expect(read).not.toHaveBeenCalled();
});

test('a page that begins a day starts at that day and steps over nothing', async () => {
  const { read } = dayCounts(['2024-03-10', '2024-03-09', '2024-03-08'], [600, 400, 500]);
  // 03-10 and 03-09 hold exactly the 1,000 rows before the page: it is the first row of 03-08.
  expect(await startAtDay(read, DEFAULT_STATUSES, { after: null, skip: 1000, take: 10 })).toEqual({
    after: null,
    skip: 0,
    take: 10,
    from: new Date('2024-03-09T00:00:00.000Z'),
  });
});

test.each([
  {
    name: 'a page 2,345 rows into 250 days of 10 jobs reads the counts 100 days at a time and starts 5 rows into its day',
    // 234 days (2,340 rows) pass: the page starts in the 235th newest day, 2024-01-16, so before 01-17.
    days: NEWEST_FIRST,
    fromEnd: false,
    from: new Date('2024-01-17T00:00:00.000Z'),
    pasts: ['2024-05-30', '2024-02-20'],
  },
  {
    name: 'from the end, the walk reads oldest days first and the page starts at the start of its own day',
    // The 235th oldest day, 2024-08-22: read upwards from its first moment.
    days: OLDEST_FIRST,
    fromEnd: true,
    from: new Date('2024-08-22T00:00:00.000Z'),
    pasts: ['2024-04-09', '2024-07-18'],
  },
])('$name', async ({ days, fromEnd, from, pasts }) => {
  const { read, statements } = dayCounts(days, 10);
  const window = { after: null, skip: 2345, take: 10, ...(fromEnd ? { fromEnd } : {}) };
  expect(await startAtDay(read, DEFAULT_STATUSES, window)).toEqual({ ...window, skip: 5, from });
  // The first read starts at the newest (or oldest) day; each next one after the last day read.
  expect(statements).toEqual(
    [undefined, ...pasts].map((past) => ({ statuses: DEFAULT_STATUSES, fromEnd, past, days: 100 })),
  );
});

test('when the day counts run out before the page (a write since the total), the page is a plain skip', async () => {
  const { read, statements } = dayCounts(NEWEST_FIRST, 10);
  const window = { after: null, skip: 2600, take: 10 };
  // 250 days hold 2,500 rows: the third read returns 50 days and the walk stops there.
  expect(await startAtDay(read, DEFAULT_STATUSES, window)).toEqual(window);
  expect(statements).toEqual([
    { statuses: DEFAULT_STATUSES, fromEnd: false, past: undefined, days: 100 },
    { statuses: DEFAULT_STATUSES, fromEnd: false, past: '2024-05-30', days: 100 },
    { statuses: DEFAULT_STATUSES, fromEnd: false, past: '2024-02-20', days: 100 },
  ]);
});

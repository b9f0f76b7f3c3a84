import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  char,
  customType,
  date,
  datetime,
  decimal,
  index,
  int,
  mediumtext,
  mysqlEnum,
  mysqlTable,
  primaryKey,
  smallint,
  text,
  tinyint,
  uniqueIndex,
  varchar,
  type MySqlColumn,
} from 'drizzle-orm/mysql-core';
import { JOB_STATUSES, JOB_TYPES, WORKPLACES, TEXT_LIMITS } from '../domain/job';
import { LIST_FILTERS } from '../domain/list-filters';
import { formatUuid, uuidToBuffer } from '../domain/uuid';

/** Ids are time-ordered UUIDs (v7, domain/uuid.ts) in BINARY(16). */
export const uuidBinary = customType<{ data: string; driverData: Buffer }>({
  dataType: () => 'binary(16)',
  toDriver: (value) => uuidToBuffer(value),
  fromDriver: (value) => formatUuid(value),
});

/** Lists of strings kept as JSON text. */
const stringList = customType<{ data: string[]; driverData: string }>({
  dataType: () => 'mediumtext',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value) as string[],
});

/** Timestamps are UTC with milliseconds; the pool runs every session in UTC (db/client.ts). */
export const timestamp = (name: string) => datetime(name, { mode: 'date', fsp: 3 });
const money = (name: string) => decimal(name, { precision: 12, scale: 2, mode: 'number' });

export const jobs = mysqlTable(
  'jobs',
  {
    id: uuidBinary('id').primaryKey(),

    // Public fields: the spec's Job object, projected by db/jobs/job-columns.ts.
    postingId: varchar('posting_id', { length: TEXT_LIMITS.postingId }),
    title: varchar('title', { length: TEXT_LIMITS.title }).notNull(),
    department: varchar('department', { length: TEXT_LIMITS.department }).notNull(),
    location: varchar('location', { length: TEXT_LIMITS.location }).notNull().default(''),
    workplace: mysqlEnum('workplace', WORKPLACES),
    state: char('state', { length: 2 }),
    type: mysqlEnum('type', JOB_TYPES).notNull(),
    description: mediumtext('description').notNull(),
    requirements: stringList('requirements').notNull(),
    responsibilities: stringList('responsibilities').notNull(),
    salaryMin: money('salary_min'),
    salaryMax: money('salary_max'),
    salaryCurrency: char('salary_currency', { length: 3 }),
    status: mysqlEnum('status', JOB_STATUSES).notNull().default('draft'),
    submissionDueDate: timestamp('submission_due_date'),
    clientName: varchar('client_name', { length: 200 }),
    vendorName: varchar('vendor_name', { length: 200 }),
    postedByName: varchar('posted_by_name', { length: 200 }),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at'),

    // Disclosure flags: salary and client/vendor names are public only when disclosed.
    salaryDisclosed: boolean('salary_disclosed').notNull().default(false),
    clientNameDisclosed: boolean('client_name_disclosed').notNull().default(false),
    vendorNameDisclosed: boolean('vendor_name_disclosed').notNull().default(false),

    // Internal columns: never selected by the API (see db/jobs/job-columns.ts).
    payRate: money('pay_rate'),
    billRate: money('bill_rate'),
    marginPct: decimal('margin_pct', { precision: 5, scale: 2, mode: 'number' }),
    billingCode: varchar('billing_code', { length: 32 }),
    recruiterId: varchar('recruiter_id', { length: 64 }),
    recruiterEmail: varchar('recruiter_email', { length: 254 }),
    recruiterPhone: varchar('recruiter_phone', { length: 32 }),
    clientContactName: varchar('client_contact_name', { length: 200 }),
    clientContactEmail: varchar('client_contact_email', { length: 254 }),
    clientContactPhone: varchar('client_contact_phone', { length: 32 }),
    vendorContactName: varchar('vendor_contact_name', { length: 200 }),
    vendorContactEmail: varchar('vendor_contact_email', { length: 254 }),
    internalNotes: text('internal_notes'),
    createdByConsumer: varchar('created_by_consumer', { length: 64 }),
    deletedAt: timestamp('deleted_at'),

    // Derived columns that let every listing filter use an index in the listing's own order.
    listed: boolean('listed').generatedAlwaysAs(sql`(\`status\` in ('active', 'open') and \`deleted_at\` is null)`, {
      mode: 'stored',
    }),
    // visible_status: the status, or NULL once soft-deleted, for explicit status filters.
    visibleStatus: mysqlEnum('visible_status', JOB_STATUSES).generatedAlwaysAs(
      sql`(if(\`deleted_at\` is null, \`status\`, null))`,
      { mode: 'stored' },
    ),
    // department_key: the department filter is exact but case-insensitive and ignores surrounding spaces.
    departmentKey: varchar('department_key', { length: TEXT_LIMITS.department }).generatedAlwaysAs(
      sql`(lower(trim(\`department\`)))`,
      { mode: 'stored' },
    ),
  },
  // The listing's indexes, one per lead and filter (db/jobs/listing.ts reads them): the default
  // listing's `listed` and explicit statuses' `visible_status`, each alone and before each filter's column.
  (t) => {
    const columns = t as unknown as Record<string, MySqlColumn>;
    const narrowing = Object.entries(LIST_FILTERS).filter(([name]) => name !== 'status');
    const listing = (name: string, lead: MySqlColumn, filter?: string) =>
      index(name).on(lead, ...(filter === undefined ? [] : [columns[filter]!]), t.createdAt, t.id);
    return [
      listing('jobs_listed_idx', t.listed),
      listing('jobs_visible_status_idx', t.visibleStatus),
      ...narrowing.flatMap(([name, { column }]) => [
        listing(`jobs_listed_${name}_idx`, t.listed, column),
        listing(`jobs_status_${name}_idx`, t.visibleStatus, column),
      ]),
    ];
  },
);

/** What job_counts records for a job without a workplace (a key column cannot be NULL). */
export const NO_WORKPLACE = 'none';

/** Listing totals kept by the database. */
export const jobCounts = mysqlTable(
  'job_counts',
  {
    byDepartment: boolean('by_department').notNull(),
    departmentKey: varchar('department_key', { length: TEXT_LIMITS.department }).notNull(),
    status: mysqlEnum('status', JOB_STATUSES).notNull(),
    type: mysqlEnum('type', JOB_TYPES).notNull(),
    workplace: mysqlEnum('workplace', [NO_WORKPLACE, ...WORKPLACES]).notNull(),
    // 0: folded; else the connection whose transactions added `n` (only it ever writes the row).
    slot: bigint('slot', { mode: 'number', unsigned: true }).notNull().default(0),
    // Signed: a connection's own row may go below zero, and a counter must never fail a write.
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.byDepartment, t.departmentKey, t.status, t.type, t.workplace, t.slot] }),
    // The fold finds the rows still to fold without reading the folded ones.
    index('job_counts_slot_idx').on(t.slot),
  ],
);

export type NewJobRow = typeof jobs.$inferInsert;

/** The change feed's log: one row per job, written by triggers on `jobs`. */
export const jobChanges = mysqlTable(
  'job_changes',
  {
    jobId: uuidBinary('job_id').primaryKey(),
    seq: bigint('seq', { mode: 'number', unsigned: true }),
    // When the last change was written (the statement's NOW(6)).
    changedAt: datetime('changed_at', { mode: 'date', fsp: 6 }),
    // Once listable, a job's removal must reach partners as a tombstone; a draft that was never listable never appears in the feed at all.
    everPublic: boolean('ever_public').notNull().default(false),
  },
  (t) => [
    uniqueIndex('job_changes_seq_idx').on(t.seq),
    // The sequencer reads pending rows (seq NULL) in the order they changed: no sort.
    index('job_changes_pending_idx').on(t.seq, t.changedAt),
    // The feed reads `ever_public AND seq > ?` in seq order: one index range, no sort.
    index('job_changes_feed_idx').on(t.everPublic, t.seq),
  ],
);

/** Listable jobs per day of created_at. */
export const jobDayCounts = mysqlTable(
  'job_day_counts',
  {
    day: date('day', { mode: 'string' }).notNull(),
    status: mysqlEnum('status', JOB_STATUSES).notNull(),
    slot: bigint('slot', { mode: 'number', unsigned: true }).notNull().default(0),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  // Day first: days are read newest (or oldest) first, grouped in index order, and the read stops at the page's day.
  (t) => [primaryKey({ columns: [t.day, t.status, t.slot] }), index('job_day_counts_slot_idx').on(t.slot)],
);

/** The last number the sequencer gave out; its one row is also the sequencers' lock. */
export const jobChangeSequence = mysqlTable('job_change_sequence', {
  id: tinyint('id').primaryKey(),
  lastSeq: bigint('last_seq', { mode: 'number', unsigned: true }).notNull().default(0),
  // The mirror check's digests hold every job numbered through here: an older release numbers without keeping them.
  digestsThrough: bigint('digests_through', { mode: 'number', unsigned: true }).notNull().default(0),
});

/**
 * The feed's lineage: every history its numbers belong to, in minting order (domain/feed.ts). A new
 * one is minted when this table's creation time differs from the last one's: a restore recreates it.
 */
export const jobChangeHistories = mysqlTable(
  'job_change_histories',
  {
    id: int('id', { unsigned: true }).autoincrement().primaryKey(),
    history: char('history', { length: 16 }).notNull(),
    firstSeq: bigint('first_seq', { mode: 'number', unsigned: true }).notNull(),
    // information_schema's CREATE_TIME of this table when the history was minted ('' for the first).
    tableCreated: varchar('table_created', { length: 32 }).notNull(),
  },
  (t) => [uniqueIndex('job_change_histories_history_idx').on(t.history)],
);

const bytes = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'varbinary(64)' });

/** Keys the service signs its tokens with (pagination cursors, feed positions). */
export const serviceSecrets = mysqlTable('service_secrets', {
  name: varchar('name', { length: 32 }).primaryKey(),
  secret: bytes('secret').notNull(),
});

/** Idempotency-Key records (db/jobs/idempotency-keys.ts, writeOnce). */
export const idempotencyKeys = mysqlTable(
  'idempotency_keys',
  {
    consumerId: varchar('consumer_id', { length: 64 }).notNull(),
    idempotencyKey: varchar('idempotency_key', { length: 255 }).notNull(),
    // SHA-256 (hex) of method, path and the canonical JSON body: "the same request" across retries.
    requestHash: char('request_hash', { length: 64 }).notNull(),
    // Written in the transaction that stores the job, so a committed row always has them.
    responseStatus: smallint('response_status'),
    responseLocation: varchar('response_location', { length: 200 }),
    responseBody: mediumtext('response_body'),
    createdAt: timestamp('created_at').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.consumerId, t.idempotencyKey] }),
    // Expired rows are deleted oldest first, a few at a time (the middleware's cleanup).
    index('idempotency_keys_expires_idx').on(t.expiresAt),
  ],
);

/**
 * The mirror check's digests (domain/mirror-digest.ts), kept by the feed's sequencer as it numbers
 * changes: each listable job's digest as it was numbered, in its fine bucket.
 */
export const jobDigests = mysqlTable(
  'job_digests',
  {
    jobId: uuidBinary('job_id').primaryKey(),
    bucket: smallint('bucket', { unsigned: true }).notNull(),
    digest: bigint('digest', { mode: 'bigint', unsigned: true }).notNull(),
  },
  // A bucket's jobs in id order: the narrowing call reads one range of it.
  (t) => [index('job_digests_bucket_idx').on(t.bucket, t.jobId)],
);

/** Each fine bucket's XOR of its jobs' digests, and how many jobs it holds: the check reads these 4096 rows. */
export const jobDigestBuckets = mysqlTable('job_digest_buckets', {
  bucket: smallint('bucket', { unsigned: true }).primaryKey(),
  digest: bigint('digest', { mode: 'bigint', unsigned: true }).notNull(),
  n: int('n').notNull(),
});

/** When the digests were last built: for job_digests' creation time then, which a restore from a dump changes. */
export const jobDigestBuilds = mysqlTable('job_digest_builds', {
  id: tinyint('id').primaryKey(),
  tableCreated: varchar('table_created', { length: 32 }).notNull(),
});

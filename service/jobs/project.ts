import type { Job, JobRow } from './job';

/**
 * Row to the spec's Job: the row already holds the Job's fields in its order and types
 * (columns.ts); only `workplace` is left out, rather than null, when the row has none.
 */
export function projectJob(row: JobRow): Job {
  return { ...row, workplace: row.workplace ?? undefined };
}

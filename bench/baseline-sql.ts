/**
 * The raw baseline's statements for a job by id and a create, written out by hand: the text and
 * parameters the service sends (db/jobs/listing.ts). bench/check.ts captures the
 * service's statements for every scenario and prints a warning when these drift from them.
 * (Listings use the service's own statement builders: bench/baseline.ts.)
 */

export interface Statement {
  sql: string;
  params: unknown[];
}

const COLUMNS = [
  '`id`',
  '`posting_id`',
  '`title`',
  '`department`',
  '`location`',
  '`workplace`',
  '`state`',
  '`type`',
  '`description`',
  '`requirements`',
  '`responsibilities`',
  "case when `salary_disclosed` then json_object('min', `salary_min`, 'max', `salary_max`, 'currency', `salary_currency`) end",
  '`status`',
  '`submission_due_date`',
  'case when `client_name_disclosed` then `client_name` end',
  'case when `vendor_name_disclosed` then `vendor_name` end',
  '`posted_by_name`',
  '`created_at`',
  '`updated_at`',
];
const SELECT = COLUMNS.join(', ');
const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ');

export function findJob(id: Buffer, consumerId: string | undefined): Statement {
  return consumerId === undefined
    ? {
        sql: `select ${SELECT} from \`jobs\` where (\`jobs\`.\`id\` = ? and \`jobs\`.\`deleted_at\` is null and \`jobs\`.\`status\` <> ?) limit ?`,
        params: [id, 'draft', 1],
      }
    : {
        sql: `select ${SELECT} from \`jobs\` where (\`jobs\`.\`id\` = ? and \`jobs\`.\`deleted_at\` is null and (\`jobs\`.\`status\` <> ? or \`jobs\`.\`created_by_consumer\` = ?)) limit ?`,
        params: [id, 'draft', consumerId, 1],
      };
}

/** The columns a create sets; the others take their defaults. */
export function insertJob(row: Record<string, unknown>): Statement {
  const names = Object.keys(row);
  return {
    sql: `insert into \`jobs\` (${names.map((name) => `\`${name}\``).join(', ')}) values (${placeholders(names)})`,
    params: Object.values(row),
  };
}

/**
 * The raw baseline's SQL, written out by hand: the same statements, text and parameters, that
 * the service sends through drizzle (service/jobs/repository.ts). bench/run.ts captures the
 * service's statements for every scenario and prints a warning when these drift from them.
 */

export interface Statement {
  sql: string;
  params: unknown[];
}

export interface ListFilter {
  status?: string[];
  type?: string[];
  workplace?: string[];
  department?: string;
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
// The keyset page joins its ids back to the table, so every column is qualified.
const SELECT_QUALIFIED = COLUMNS.map((column) => column.replace(/`([a-z_]+)`/g, '`jobs`.`$1`')).join(', ');
const ORDER = 'order by `jobs`.`created_at` desc, `jobs`.`id` desc';

const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ');

/** drizzle's and(): one condition as it is, several in parentheses joined by "and". */
function and(parts: Array<[string, unknown[]]>): [string, unknown[]] {
  const sql = parts.length === 1 ? parts[0]![0] : `(${parts.map(([text]) => text).join(' and ')})`;
  return [sql, parts.flatMap(([, params]) => params)];
}

function conditions(filter: ListFilter): Array<[string, unknown[]]> {
  const parts: Array<[string, unknown[]]> = [
    filter.status ? [`\`jobs\`.\`visible_status\` in (${placeholders(filter.status)})`, filter.status] : ['`jobs`.`listed` = ?', [true]],
  ];
  if (filter.type) parts.push([`\`jobs\`.\`type\` in (${placeholders(filter.type)})`, filter.type]);
  if (filter.workplace) parts.push([`\`jobs\`.\`workplace\` in (${placeholders(filter.workplace)})`, filter.workplace]);
  if (filter.department !== undefined) parts.push(['`jobs`.`department_key` = lower(?)', [filter.department]]);
  return parts;
}

export function countJobs(filter: ListFilter): Statement {
  const [where, params] = and(conditions(filter));
  return { sql: `select count(*) from \`jobs\` where ${where}`, params };
}

export function offsetPage(filter: ListFilter, limit: number, offset: number): Statement {
  const [where, params] = and(conditions(filter));
  return offset > 0
    ? { sql: `select ${SELECT} from \`jobs\` where ${where} ${ORDER} limit ? offset ?`, params: [...params, limit, offset] }
    : { sql: `select ${SELECT} from \`jobs\` where ${where} ${ORDER} limit ?`, params: [...params, limit] };
}

/** `after`: the position's created_at as the driver string (UTC) and its id as 16 bytes. */
export function keysetPage(filter: ListFilter, limit: number, after: { createdAt: string; id: Buffer } | null): Statement {
  const parts = conditions(filter);
  if (after) {
    parts.push([
      '(`jobs`.`created_at` < ? or (`jobs`.`created_at` = ? and `jobs`.`id` < ?))',
      [after.createdAt, after.createdAt, after.id],
    ]);
  }
  const [where, params] = and(parts);
  return {
    sql: `select ${SELECT_QUALIFIED} from (select \`id\` from \`jobs\` where ${where} ${ORDER} limit ?) \`page_ids\` inner join \`jobs\` on \`jobs\`.\`id\` = \`page_ids\`.\`id\``,
    params: [...params, limit + 1],
  };
}

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

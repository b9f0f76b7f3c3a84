import { getTableName, sql } from 'drizzle-orm';
import type { MySqlTable } from 'drizzle-orm/mysql-core';
import { select, type Queryable } from '../sql';

/**
 * When `table` was created, as the server says ('' without it), and whether that is at least 2 s
 * ago: a restore from a dump recreates a table, and one still loading may not have the next yet.
 */
export async function tableCreated(db: Queryable, table: MySqlTable): Promise<{ created: string; settled: boolean }> {
  const [row] = await select(
    db,
    {
      created: sql<string>`coalesce(cast(create_time as char), '')`,
      settled: sql<number>`coalesce(create_time <= now() - interval 2 second, 1)`,
    },
    (query) =>
      query
        .from(sql`information_schema.tables`)
        .where(sql`table_schema = database() and table_name = ${getTableName(table)}`),
  );
  return { created: row?.created ?? '', settled: row?.settled === 1 };
}

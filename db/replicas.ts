import { withReplicas } from 'drizzle-orm/mysql-core';
import { createDatabase, type Database, type DatabaseHandle, type PoolOptions } from './client';

/**
 * The database with optional read replicas (DATABASE_READ_URLS). Without replicas this is
 * createDatabase. With them, drizzle's withReplicas sends every select to a replica picked at
 * random and every write (insert, update, delete, execute, transaction) to the primary; each
 * replica gets a pool of the same size as the primary's. `pool` is the primary's.
 */
export function openDatabase(url: string, readUrls: readonly string[] = [], options: PoolOptions = {}): DatabaseHandle {
  const primary = createDatabase(url, options);
  if (readUrls.length === 0) return primary;
  const replicas = readUrls.map((readUrl) => createDatabase(readUrl, options));
  const [first, ...rest] = replicas.map((replica) => replica.db);
  return {
    db: withReplicas(primary.db, [first!, ...rest]),
    pool: primary.pool,
    close: async (...args: Parameters<DatabaseHandle['close']>) => {
      await Promise.all([primary, ...replicas].map((handle) => handle.close(...args)));
    },
  };
}

/**
 * Where reads that must see the latest committed writes go: the primary of a database opened
 * with replicas, else the database itself (every read already goes to the primary).
 */
export function primaryOf(db: Database): Database {
  return (db as Database & { $primary?: Database }).$primary ?? db;
}

/** Where a read that may lag goes: a replica picked at random, as drizzle's select would, else `db` itself. */
export function readerOf(db: Database): Database {
  const replicas = (db as { $replicas?: Database[] }).$replicas;
  return replicas?.length ? replicas[Math.floor(Math.random() * replicas.length)]! : db;
}

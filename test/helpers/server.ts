import type mysql from 'mysql2/promise';
import { connectionOptions } from '../../db/client';

/** The one setting that says where the tests' MySQL/MariaDB server is (no database in it). */
export function testServerUrl(): string {
  return (process.env.TEST_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306').replace(/\/+$/, '');
}

/** Host and port of the test server, for tests that put a relay or a second server beside it. */
export function testServerAddress(): { host: string; port: number } {
  const parsed = new URL(testServerUrl());
  return { host: parsed.hostname, port: Number(parsed.port || 3306) };
}

/** Connection options for the server itself (no database selected). */
export function testServerOptions(): mysql.ConnectionOptions {
  const { database: _none, ...options } = connectionOptions(`${testServerUrl()}/mysql`);
  return options;
}

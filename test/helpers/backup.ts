import { spawnSync } from 'node:child_process';
import { testServerUrl } from './server';

/** The client's connection flags for the test server, from TEST_DATABASE_URL. */
function serverFlags(): string[] {
  const url = new URL(testServerUrl());
  return [
    `--host=${url.hostname}`,
    `--port=${url.port || 3306}`,
    `--user=${decodeURIComponent(url.username || 'root')}`,
    ...(url.password ? [`--password=${decodeURIComponent(url.password)}`] : []),
  ];
}

function run(command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, { input, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.error?.message}`);
  return result.stdout;
}

/** A backup exactly as docs/operations.md takes it ("Backup and restore"). */
export function dumpDatabase(name: string): string {
  return run('mariadb-dump', [
    ...serverFlags(),
    '--single-transaction',
    '--routines',
    '--triggers',
    '--hex-blob',
    name,
  ]);
}

/** The documented restore: the database emptied, then the backup loaded into it. */
export function restoreDatabase(name: string, dump: string): void {
  run('mariadb', [...serverFlags(), '-e', `DROP DATABASE \`${name}\`; CREATE DATABASE \`${name}\``]);
  run('mariadb', [...serverFlags(), name], dump);
}

/** The backup loaded over the database as it is (each table dropped and recreated by the dump): a restore while the service still runs. */
export function loadDump(name: string, dump: string): void {
  run('mariadb', [...serverFlags(), name], dump);
}

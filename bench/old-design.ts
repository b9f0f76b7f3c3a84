/**
 * Today's design for W's side-by-side: the dispatcher as of commit 5748254 (twenty walks, five-second
 * slices, a statement per delivery), checked out in a temporary worktree and built there once.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const TODAY_COMMIT = '5748254';
const ROOT = path.resolve(__dirname, '..', '..');

/** The built dispatcher of `commit`: its main.js, absolute. */
export function oldDispatcherMain(commit = TODAY_COMMIT): string {
  const dir = path.join(os.tmpdir(), `job-listings-dispatcher-${commit}`);
  // Where that commit kept the dispatcher's entry point.
  const main = path.join(dir, 'dist', 'service', 'webhooks', 'main.js');
  if (existsSync(main)) return main;
  if (!existsSync(dir))
    execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  if (!existsSync(path.join(dir, 'node_modules')))
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { cwd: dir, stdio: 'inherit' },
  );
  return main;
}

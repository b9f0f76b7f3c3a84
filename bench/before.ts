/**
 * --before: another checkout of this repository (another commit, or a worktree with changes of its
 * own) as a second reference for the data-layer scenarios. Its service runs from its own dist with
 * its own Dockerfile's flags, on jobs_bench_<size>_before, which its own migrate command migrates
 * and bench/tables.ts seeds with the same jobs, ids included. This is what the header says of it.
 */
import { execFileSync } from 'node:child_process';

export interface BeforeCheckout {
  dir: string;
  /** git rev-parse HEAD there, or why there is none. */
  commit: string;
  /** Tracked files there differ from its commit: the service is not that commit's alone. */
  changes: boolean;
}

export function describeCheckout(dir: string): BeforeCheckout {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    return {
      dir,
      commit: git('rev-parse', 'HEAD'),
      changes: git('status', '--porcelain', '--untracked-files=no') !== '',
    };
  } catch (error) {
    return { dir, commit: `unknown (${(error as Error).message.split('\n')[0]})`, changes: false };
  }
}

/** The checkout as the run's header names it. */
export function checkoutLine(checkout: BeforeCheckout): string {
  return `${checkout.dir} at ${checkout.commit}${checkout.changes ? ' with uncommitted changes' : ''}`;
}

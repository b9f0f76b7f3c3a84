/**
 * Per-process CPU time from Linux's /proc, for the processes the benchmark started itself: each
 * is measured on its own.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on every common Linux). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU time (user + system, every thread) the process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / clockTicks();
}

/** CPU time the whole machine has spent busy (everything but idle and iowait) so far, in microseconds. */
export function machineBusyMicros(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = fields.map(Number);
  const busy = ticks.reduce((sum, n) => sum + n, 0) - ticks[3]! - ticks[4]!;
  return (busy * 1e6) / clockTicks();
}

/** The database server's process id (mariadbd or mysqld), when it runs on this machine. */
export function databasePid(): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const name = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (name === 'mariadbd' || name === 'mysqld') return Number(entry);
    } catch {
      // the process ended meanwhile
    }
  }
  return undefined;
}

/**
 * Lets every thread of each process run only on `cpus` (taskset's list, e.g. "1" or "0-3"), and
 * schedules them as batch work (no preemption on every wake-up) while they share a core, so two
 * servers on one core switch every few milliseconds, not every request; `shared: false` undoes it.
 */
export function pin(pids: number[], cpus: string, shared: boolean): void {
  for (const pid of pids) {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    execFileSync('chrt', [shared ? '-b' : '-o', '-a', '-p', '0', String(pid)], { stdio: 'ignore' });
  }
}

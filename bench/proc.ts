/** CPU time from Linux's /proc, per process the bench started (each measured on its own) and for the whole machine. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on every common Linux). */
export function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

/** The fields of /proc/<pid>/stat after the command name (in parentheses, which may hold spaces). */
export const statFields = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

/** CPU time (user + system, every thread) the process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const fields = statFields(pid);
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks();
}

/** CPU time the whole machine has spent busy (everything but idle and iowait) so far, in microseconds. */
export function machineBusyMicros(): number {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return ((ticks.reduce((sum, n) => sum + n, 0) - ticks[3]! - ticks[4]!) * 1e6) / clockTicks();
}

/** The processes for which `test` holds (processes that end meanwhile are left out). */
export function processes(test: (pid: number) => boolean): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return test(pid);
      } catch {
        return false;
      }
    });
}

/** The database server's process id (mariadbd or mysqld), when it runs on this machine. */
export const databasePid = (): number | undefined =>
  processes((pid) => ['mariadbd', 'mysqld'].includes(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()))[0];

/**
 * Lets every thread of each process run only on `cpus` (taskset's list), as batch work while they
 * share a core (no preemption on every wake-up: two servers on one core switch every few
 * milliseconds, not every request); `shared: false` undoes it.
 */
export function pin(pids: number[], cpus: string, shared: boolean): void {
  for (const pid of pids) {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    execFileSync('chrt', [shared ? '-b' : '-o', '-a', '-p', '0', String(pid)], { stdio: 'ignore' });
  }
}

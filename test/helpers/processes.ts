import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const REGISTER_TS = path.join(__dirname, 'register-ts.js');

export interface ServiceProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The URL from the "listening" line, or the reason the process exited before printing it. */
  listening: Promise<{ url: string } | { exitCode: number | null; stderr: string }>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit; SIGKILL when it has not exited after `killAfterMs`. */
  stop(killAfterMs?: number): Promise<number | null>;
}

/**
 * `node service/server.ts` in a process of its own (TypeScript transpiled on load by
 * register-ts.js), with `env` on top of this process's environment.
 */
export function startServiceProcess(env: NodeJS.ProcessEnv, script = 'service/server.ts'): ServiceProcess {
  const child = spawn(process.execPath, ['-r', REGISTER_TS, path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  // 'close', not 'exit': only then has all of the process's output been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const listening = new Promise<{ url: string } | { exitCode: number | null; stderr: string }>((resolve) => {
    const onData = () => {
      const match = /Jobs service listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        child.stdout.off('data', onData);
        resolve({ url: match[1]! });
      }
    };
    child.stdout.on('data', onData);
    void exited.then((exitCode) => resolve({ exitCode, stderr: err }));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    listening,
    exited,
    async stop(killAfterMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // A process that ignores SIGTERM must not outlive the test (jest would wait for it).
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

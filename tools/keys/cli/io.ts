/** Where a command writes and what it reads from its surroundings; tests pass their own. */
export interface Io {
  /** Results only: the key line of issue/rotate, list's table or JSON. */
  out: (text: string) => void;
  /** Everything said to the operator: progress, warnings, errors. */
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    env: process.env,
    cwd: process.cwd(),
  };
}

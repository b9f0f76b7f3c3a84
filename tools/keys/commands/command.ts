import type { Io } from '../cli/io';

/** One sub-command: `run` returns (or resolves) for exit 0 and throws UsageError (2) or Failure (1). */
export interface Command {
  name: string;
  summary: string;
  help: string;
  run(args: string[], io: Io): void | Promise<void>;
}

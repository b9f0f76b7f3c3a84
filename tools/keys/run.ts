/** `keys <command> ...`: finds the command, runs it, turns its ending into an exit code. */
import { Failure, UsageError } from './cli/errors';
import type { Io } from './cli/io';
import { COMMANDS } from './commands';

export const HELP = `Usage: npm run -s keys -- <command> [options]     (or: jobs-keys <command> [options])

Manages the Job Listings API's partner keys: partners.yaml (consumers and ACL groups) and
partner-keys.yaml (credentials as decK environment references), and, with --apply, Kong itself.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(10)}${c.summary}`).join('\n')}

A compromised key:  keys disable <partner> --apply --admin-url URL   (one request, effective in seconds)
Every key of it:    keys revoke <partner> --all --apply --admin-url URL
Kong vs the files:  keys status --admin-url URL   (exit 3 if they differ; every --apply makes them equal)

"keys <command> --help" describes each. Exit codes: 0 done, 1 failed, 2 wrong usage, 3 (status) Kong differs.`;

export async function run(argv: string[], io: Io): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(HELP);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err(`error: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    await command.run(args, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\nsee: keys ${command.name} --help`);
      return err.exitCode;
    }
    if (err instanceof Failure) {
      io.err(`error: ${err.message}`);
      return err.exitCode;
    }
    io.err(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

/** The ways a command ends badly, and their exit codes. */

/** The command line is wrong (unknown option, missing argument, bad value): exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** The command was understood but could not be done (bad file, unknown partner, Kong refused): exit 1. */
export class Failure extends Error {
  readonly exitCode: number = 1;
}

/** Kong and the files disagree (keys status): exit 3, so cron and CI can tell it from a failure to look. */
export class DriftFound extends Failure {
  override readonly exitCode = 3;
}

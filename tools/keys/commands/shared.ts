/** What the mutating commands have in common: checking the name, applying to Kong, writing the files, printing a key. */
import { applySteps, describeOutcome, type Outcome, type Step } from '../admin/apply';
import type { AdminClient } from '../admin/client';
import { Failure, UsageError } from '../cli/errors';
import type { Hints } from '../cli/hints';
import type { Io } from '../cli/io';
import { PartnerName } from '../partner';
import type { PartnerStore } from '../state/store';

export function partnerName(raw: string | undefined): string {
  const result = PartnerName.safeParse(raw);
  if (!result.success) throw new UsageError(`partner name "${raw}": ${result.error.issues[0]?.message ?? 'invalid'}`);
  return result.data;
}

/** Runs the steps on Kong when --apply was given (null without it). */
export async function applyToKong(
  io: Io,
  client: AdminClient | null,
  steps: Step[],
  rollback?: (done: Step[]) => Step | undefined,
): Promise<Outcome | null> {
  if (!client || steps.length === 0) return null;
  const outcome = await applySteps(client, steps, {
    ...(rollback ? { rollback } : {}),
    progress: (line) => io.err(line),
  });
  if (!outcome.ok) {
    io.err(`error: ${outcome.error?.message ?? 'the Admin API request failed'}`);
    io.err(`What Kong was asked, in order:`);
    for (const line of describeOutcome(client, outcome)) io.err(line);
  }
  return outcome;
}

/** Writes the edited files. If that fails after Kong was changed, says so, since Kong and the files now disagree. */
export function saveFiles(io: Io, store: PartnerStore, kongChanged: boolean): void {
  let written: string[];
  try {
    written = store.save();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Failure(
      kongChanged
        ? `Kong WAS changed (see above) but the files were not written: ${message}. Until they are, the next sync of partners.yaml would undo the change; fix the cause and re-run the same command without --apply (file edit only)`
        : `the files were not written: ${message}`,
    );
  }
  io.err(written.length > 0 ? `wrote ${written.join(' and ')}` : 'files already up to date: nothing written');
}

/** The key, once, on stdout as the line to store; everything else goes to stderr, so a redirect captures exactly this line. */
export function printKey(io: Io, variable: string, key: string): void {
  io.out(`${variable}=${key}`);
  io.err(
    [
      `The key above is shown once and is not stored anywhere: put it in the secret manager as ${variable}`,
      `(the env file the stack's syncs read) and give it to the partner over a secure channel.`,
    ].join('\n'),
  );
}

/** The state files whose sync carries a change to Kong. */
export type SyncedFile = 'partners.yaml' | 'partner-keys.yaml';

/**
 * When the change is Kong's, said the same way by every command that changes what Kong lets in:
 * with --apply, now; without, one line saying it is NOT in effect and the command that makes it so
 * (`variables`: the keys that command needs in its environment).
 */
export function whenEffective(
  run: { io: Io; hints: Hints; name: string },
  files: readonly SyncedFile[],
  variables: readonly string[] = [],
): void {
  const { io, hints, name } = run;
  if (hints.applied) return io.err('In effect now: Kong took the change (--apply); the files record it.');
  const env = variables.length > 0 ? ` with ${variables.join(', ')} in its environment` : '';
  io.err(
    `NOT in effect: Kong does not have this change; ${hints.command(['reconcile', name], 'apply')}${env} makes it so now (or the next sync of ${files.join(' and ')}).`,
  );
}

/** Ends a command whose Kong requests failed before any file was written (exit 1). */
export function notWritten(): never {
  throw new Failure('nothing was written: partners.yaml and partner-keys.yaml are unchanged');
}

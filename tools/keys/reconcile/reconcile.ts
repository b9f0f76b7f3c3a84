/** Makes Kong equal to the files for one partner (every --apply ends with it), and says what differed. */
import { applySteps, describeOutcome } from '../admin/apply';
import type { AdminClient } from '../admin/client';
import { readLive } from '../admin/live';
import type { Hints } from '../cli/hints';
import type { Io } from '../cli/io';
import type { Partner } from '../state/store';
import { differences, type Difference } from './plan';

/** The command(s) that end a difference, spelled with the operator's flags. */
export function remedy(name: string, d: Difference, hints: Hints): string {
  const reconcile = hints.command(['reconcile', name], 'apply');
  if (!d.blocked) return `${reconcile}   (${d.steps.map((s) => s.what).join('; ')})`;
  const drop = hints.command(['revoke', name, '--credential', d.blocked.credential], 'apply');
  return `export ${d.blocked.variable} from the secret manager, then ${reconcile}; or drop that key: ${drop}`;
}

/** Reads Kong, sends what makes it equal to the files; false when something is left (said on stderr). */
export async function reconcilePartner(
  { io, client, hints }: { io: Io; client: AdminClient; hints: Hints },
  name: string,
  want: Partner | null,
): Promise<boolean> {
  const live = await readLive(client, { ...(want ? { id: want.id } : {}), name });
  const found = differences(name, want, live, io.env);
  if (found.length === 0) {
    io.err(`Kong matches the files for ${name}.`);
    return true;
  }
  io.err(`Kong differed from the files for ${name}; making it match (the files are the truth):`);
  for (const d of found) io.err(`  ${d.live}`);
  const outcome = await applySteps(
    client,
    found.flatMap((d) => d.steps),
    { progress: (line) => io.err(line) },
  );
  if (!outcome.ok) {
    io.err(`error: ${outcome.error?.message ?? 'the Admin API request failed'}`);
    io.err('What Kong was asked, in order:');
    for (const line of describeOutcome(client, outcome)) io.err(line);
  }
  const blocked = found.filter((d) => d.blocked);
  for (const d of blocked) io.err(`  left: ${d.live}; ${d.blocked?.reason}: ${remedy(name, d, hints)}`);
  return outcome.ok && blocked.length === 0;
}

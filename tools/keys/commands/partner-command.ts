/** What the commands that change a partner share; with --apply each ends by making Kong's copy of the partner equal to the files. */
import type { ParseArgsConfig } from 'node:util';
import type { Outcome, Step } from '../admin/apply';
import type { AdminClient } from '../admin/client';
import { adminClient, APPLY_OPTIONS, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { Failure } from '../cli/errors';
import { hintsFor, type Hints } from '../cli/hints';
import type { Io } from '../cli/io';
import { reconcilePartner } from '../reconcile/reconcile';
import { PartnerStore, type Partner } from '../state/store';
import type { Command } from './command';
import { applyToKong, notWritten, partnerName, printKey, saveFiles } from './shared';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Change {
  /** The Admin API requests, in order (sent only with --apply). */
  steps: Step[];
  /** The request that undoes a half-done change, given the steps Kong took. */
  rollback?: (done: Step[]) => Step | undefined;
  /** Edits the files. */
  record(outcome: Outcome | null): void;
  partial?: boolean;
  /** A new key Kong holds once applied: printed even if writing the files fails, so no live key is lost. */
  key?: { variable: string; key: string };
}

export interface PartnerRun<V> {
  io: Io;
  values: V;
  positionals: string[];
  /** The partner named on the command line, checked. */
  name: string;
  client: AdminClient | null;
  /** The commands to suggest, with the operator's flags. */
  hints: Hints;
  store: PartnerStore;
  /** The partner as the files have it (fails when there is none). */
  partner: () => Partner;
  /** Applies `change` to Kong (with --apply), then records it in the files: the outcome, or null without --apply. */
  applyThenWrite: (change: Change) => Promise<Outcome | null>;
}

export function partnerCommand<O extends Options>(spec: {
  name: string;
  summary: string;
  help: string;
  options?: O;
  /** The arguments after the options' parsing, the partner's name first. */
  positionals?: readonly string[];
  run(
    ctx: PartnerRun<ReturnType<typeof parse<O & typeof FILE_OPTIONS & typeof APPLY_OPTIONS>>['values']>,
  ): void | Promise<void>;
}): Command {
  const options = { ...FILE_OPTIONS, ...APPLY_OPTIONS, ...(spec.options ?? {}) } as O &
    typeof FILE_OPTIONS &
    typeof APPLY_OPTIONS;
  return {
    name: spec.name,
    summary: spec.summary,
    help: spec.help,
    async run(args, io) {
      const { values, positionals } = parse(args, options, spec.positionals ?? ['partner']);
      if ((values as { help?: boolean }).help) return io.out(spec.help);
      const name = partnerName(positionals[0]);
      const client = adminClient(values, io);
      const store = PartnerStore.load(storePaths(values, io));
      const hints = hintsFor(values, io);
      await spec.run({
        io,
        values,
        positionals,
        name,
        client,
        hints,
        store,
        partner: () => store.get(name),
        async applyThenWrite(change) {
          const outcome = await applyToKong(io, client, change.steps, change.rollback);
          if (outcome && !outcome.ok && !change.partial) notWritten();
          change.record(outcome);
          try {
            saveFiles(io, store, outcome !== null);
          } catch (err) {
            if (change.key && outcome) printKey(io, change.key.variable, change.key.key);
            throw err;
          }
          return outcome;
        },
      });
      if (client && !(await reconcilePartner({ io, client, hints }, name, store.find(name) ?? null))) {
        throw new Failure(
          `Kong still differs from the files for ${name} (above); ${hints.command(['status'], 'read')} shows it`,
        );
      }
    },
  };
}

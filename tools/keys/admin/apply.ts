/** Runs a command's Admin API requests in order and keeps account of each: done, already so, failed, not attempted, rolled back. */
import { AdminError, type AdminClient, type AdminRequest } from './client';
import { getConsumer } from './requests';

export interface Step {
  /** In words: "add group disabled to acme". */
  what: string;
  request: AdminRequest;
  /** The consumer the request is about, to tell "no such consumer" from "no such group/credential" on a 404. */
  consumer: { id: string; name: string };
  /** A DELETE whose target may already be gone: a 404 for it (the consumer existing) counts as done. */
  absentIsDone?: boolean;
}

export type StepStatus = 'done' | 'already' | 'failed' | 'not attempted' | 'rolled back' | 'rollback failed';

export interface StepResult {
  step: Step;
  status: StepStatus;
}

export interface Outcome {
  ok: boolean;
  results: StepResult[];
  error?: AdminError;
}

export function succeeded(outcome: Outcome, step: Step): boolean {
  return outcome.results.some((r) => r.step === step && (r.status === 'done' || r.status === 'already'));
}

/** After a 404: does the consumer exist? If not, the error says so instead of "Not Found". */
async function explainNotFound(client: AdminClient, step: Step): Promise<'consumer-exists' | AdminError> {
  try {
    await client.send(getConsumer(step.consumer.id));
    return 'consumer-exists';
  } catch (err) {
    if (err instanceof AdminError && err.kind === 'not-found') {
      return new AdminError(
        'not-found',
        `Kong at ${client.base} has no consumer ${step.consumer.name} (${step.consumer.id}): is --admin-url the right Kong, and has partners.yaml been synced to it?`,
        404,
      );
    }
    return err instanceof AdminError ? err : new AdminError('unreachable', String(err));
  }
}

export async function applySteps(
  client: AdminClient,
  steps: Step[],
  opts: { rollback?: (done: Step[]) => Step | undefined; progress?: (line: string) => void } = {},
): Promise<Outcome> {
  const results: StepResult[] = [];
  let error: AdminError | undefined;
  for (const step of steps) {
    if (error) {
      results.push({ step, status: 'not attempted' });
      continue;
    }
    try {
      await client.send(step.request);
      results.push({ step, status: 'done' });
      opts.progress?.(`Kong: ${step.what}: done (${client.describe(step.request)})`);
    } catch (err) {
      let failure = err instanceof AdminError ? err : new AdminError('unreachable', String(err));
      if (failure.kind === 'not-found') {
        const explained = await explainNotFound(client, step);
        if (explained === 'consumer-exists' && step.absentIsDone) {
          results.push({ step, status: 'already' });
          opts.progress?.(`Kong: ${step.what}: already so (${client.describe(step.request)} found nothing to remove)`);
          continue;
        }
        if (explained !== 'consumer-exists') failure = explained;
      }
      error = failure;
      results.push({ step, status: 'failed' });
    }
  }
  if (error && opts.rollback) {
    const undo = opts.rollback(results.filter((r) => r.status === 'done').map((r) => r.step));
    if (undo) {
      try {
        await client.send(undo.request);
        results.push({ step: undo, status: 'rolled back' });
      } catch {
        results.push({ step: undo, status: 'rollback failed' });
      }
    }
  }
  return { ok: !error, results, ...(error ? { error } : {}) };
}

/** The account of an outcome, one line per request. */
export function describeOutcome(client: AdminClient, outcome: Outcome): string[] {
  return outcome.results.map((r) => `  ${r.status.padEnd(15)} ${client.describe(r.step.request)}  (${r.step.what})`);
}

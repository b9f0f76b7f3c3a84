/**
 * Before anything is timed: the reference must answer what the service answers (same status, same
 * bytes, same ETag on a GET), or its figures compare nothing. A difference is printed and recorded
 * in the row, never hidden; the run goes on. The before checkout's service may differ by nature
 * (fields it lacks): a refusal there makes its row not applicable.
 */
import { performance } from 'node:perf_hooks';
import { headersForTarget, samplePath, type Scenario } from './scenarios';
import type { Server } from './servers';

export interface ScenarioCheck {
  /** "identical", or what differs. */
  body: string;
  /** The slower of the two answers, in ms. */
  ms: number;
}

interface Answer {
  status: number;
  text: string;
  etag: string | null;
  ms: number;
}

async function ask(server: Server, scenario: Scenario, path: string, gatewaySecret: string): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${server.url}${path}`, {
    method: scenario.method,
    headers: headersForTarget(scenario, 'service', gatewaySecret),
    body: scenario.body,
  });
  const text = await response.text();
  return { status: response.status, text, etag: response.headers.get('etag'), ms: performance.now() - started };
}

/** A create's id and times differ by nature: compared as placeholders. */
function withoutNewIdentity(text: string): string {
  const { id, createdAt } = (JSON.parse(text) as { data?: { id?: string; createdAt?: string } }).data ?? {};
  return id && createdAt ? text.split(id).join('<id>').split(createdAt).join('<createdAt>') : text;
}

export function difference(service: Answer, other: Answer, name: string, method: Scenario['method']): string {
  if (service.status !== other.status) return `service answered ${service.status}, ${name} ${other.status}`;
  const [a, b] =
    method === 'POST' ? [withoutNewIdentity(service.text), withoutNewIdentity(other.text)] : [service.text, other.text];
  if (a === b) return method === 'GET' && service.etag !== other.etag ? `ETag ${service.etag} vs ${other.etag}` : '';
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 40), at + 40));
  return `at byte ${at} (service ${a.length} bytes, ${name} ${b.length}): service ${around(a)} ${name} ${around(b)}`;
}

/** The scenario asked of both (get by id: three ids); `reference` named `name` in what differs. */
export async function checkScenario(
  scenario: Scenario,
  service: Server,
  reference: Server,
  gatewaySecret: string,
): Promise<ScenarioCheck | { unavailable: string }> {
  let ms = 0;
  for (const index of scenario.ids ? [0, 1, 2] : [0]) {
    const path = samplePath(scenario, index);
    const ours = await ask(service, scenario, path, gatewaySecret);
    const theirs = await ask(reference, scenario, path, gatewaySecret);
    ms = Math.max(ms, ours.ms, theirs.ms);
    if (reference.name === 'before' && theirs.status >= 300 && ours.status < 300)
      return {
        unavailable: `not applicable: the before service answers ${theirs.status} ${theirs.text.slice(0, 160)}`,
      };
    const differs = difference(ours, theirs, reference.name, scenario.method);
    if (differs) return { body: `differs from the ${reference.name}: ${differs}`, ms };
  }
  return { body: scenario.method === 'POST' ? 'identical (new id and createdAt aside)' : 'identical', ms };
}

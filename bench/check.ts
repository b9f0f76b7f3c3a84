/**
 * Before timing, the reference must answer what the service answers (status, bytes, a GET's ETag):
 * a difference goes in the row. A before checkout's refusal (a filter it lacks) makes its row n/a.
 */
import { headersForTarget, samplePath, type Scenario } from './scenarios';
import type { Server } from './servers';

export type ScenarioCheck = { body: string };

async function ask(server: Server, scenario: Scenario, path: string, secret: string) {
  const { method, body } = scenario;
  const response = await fetch(`${server.url}${path}`, {
    method,
    body,
    headers: headersForTarget(scenario, 'service', secret),
  });
  return { status: response.status, text: await response.text(), etag: response.headers.get('etag') };
}
type Answer = Awaited<ReturnType<typeof ask>>;

/** A create's id and time differ by nature: compared as placeholders. */
function withoutNewIdentity(text: string): string {
  const { id, createdAt } = (JSON.parse(text) as { data?: { id?: string; createdAt?: string } }).data ?? {};
  return id && createdAt ? text.split(id).join('<id>').split(createdAt).join('<createdAt>') : text;
}

function difference(service: Answer, other: Answer, name: string, method: Scenario['method']): string {
  if (service.status !== other.status) return `service answered ${service.status}, ${name} ${other.status}`;
  const [a, b] = [service.text, other.text].map((text) => (method === 'POST' ? withoutNewIdentity(text) : text));
  if (a === b) return method === 'GET' && service.etag !== other.etag ? `ETag ${service.etag} vs ${other.etag}` : '';
  let at = 0;
  while (at < a!.length && a![at] === b![at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 40), at + 40));
  return `at byte ${at} (service ${a!.length} bytes, ${name} ${b!.length}): service ${around(a!)} ${name} ${around(b!)}`;
}

/** The scenario asked of both (get by id: three ids). */
export async function checkScenario(
  scenario: Scenario,
  service: Server,
  reference: Server,
  secret: string,
): Promise<ScenarioCheck | { unavailable: string }> {
  for (const index of scenario.ids ? [0, 1, 2] : [0]) {
    const path = samplePath(scenario, index);
    const [ours, theirs] = [await ask(service, scenario, path, secret), await ask(reference, scenario, path, secret)];
    if (reference.name === 'before' && theirs.status >= 300 && ours.status < 300)
      return {
        unavailable: `not applicable: the before service answers ${theirs.status} ${theirs.text.slice(0, 160)}`,
      };
    const differs = difference(ours, theirs, reference.name, scenario.method);
    if (differs) return { body: `differs from the ${reference.name}: ${differs}` };
  }
  return { body: scenario.method === 'POST' ? 'identical (new id and createdAt aside)' : 'identical' };
}

/** Where Kong differs from the files for one partner, and the Admin API requests that make Kong follow the files. */
import type { Step } from '../admin/apply';
import type { LivePartner } from '../admin/live';
import {
  addGroup,
  createConsumer,
  createCredential,
  deleteConsumer,
  deleteCredential,
  putConsumer,
  removeGroup,
} from '../admin/requests';
import { fingerprint } from '../fingerprint';
import { GROUP_DISABLED } from '../partner';
import type { Partner } from '../state/store';

export interface Difference {
  /** What Kong has, in words; keys only by credential id and fingerprint. */
  live: string;
  /** The requests that make Kong equal to the files; empty when the tool cannot (see `blocked`). */
  steps: Step[];
  /** Why the tool cannot fix it alone, and what the operator does instead. */
  blocked?: { reason: string; variable: string; credential: string };
  /** Order of repair: what lets a key in goes first, what lets one in again goes last. */
  rank: number;
}

const RANK = { cut: 0, identity: 1, grant: 2, key: 3, reenable: 4 } as const;

function credentialText(c: { id: string; key: string }): string {
  return `credential ${c.id} (${fingerprint(c.key)})`;
}

function keysText(live: LivePartner): string {
  const n = live.credentials.length;
  return n === 0
    ? 'no key'
    : `${n === 1 ? 'key' : 'keys'} ${live.credentials.map(credentialText).join(', ')} that ${n === 1 ? 'gets' : 'get'} through`;
}

/** Everything of `want` that Kong lacks, on a consumer Kong does not have (or has just lost). */
function create(want: Partner, env: NodeJS.ProcessEnv): Difference[] {
  const consumer = { id: want.id, name: want.name };
  const create: Step = {
    what: `create consumer ${want.name}`,
    request: createConsumer({ ...consumer, ...(want.customId !== undefined ? { customId: want.customId } : {}) }),
    consumer,
  };
  const groups = [...want.groups].sort((a, b) => Number(b === GROUP_DISABLED) - Number(a === GROUP_DISABLED));
  return [
    {
      live: `Kong has no consumer ${want.name} (${want.id}): none of its keys get through`,
      steps: [
        create,
        ...groups.map((g) => ({ what: `add group ${g} to ${want.name}`, request: addGroup(want.id, g), consumer })),
      ],
      rank: RANK.grant,
    },
    ...want.credentials.map((c) => missingCredential(want, c, env)),
  ];
}

/** The request that gives `want` its credential `id` with `key`, as the files have it. */
function credentialStep(want: Partner, id: string, key: string): Step {
  return {
    what: `create credential ${id} for ${want.name}`,
    request: createCredential(want.id, id, key),
    consumer: { id: want.id, name: want.name },
  };
}

function missingCredential(want: Partner, c: { id: string; variable: string }, env: NodeJS.ProcessEnv): Difference {
  const key = env[c.variable];
  const live = `credential ${c.id} of ${want.name} is in partner-keys.yaml but not in Kong: its key (${c.variable}) gets 401`;
  return key
    ? { live, steps: [credentialStep(want, c.id, key)], rank: RANK.key }
    : {
        live,
        steps: [],
        blocked: { reason: `${c.variable} is not in this environment`, variable: c.variable, credential: c.id },
        rank: RANK.key,
      };
}

/** The differences between the files' partner (null: in neither file) and Kong's (null: Kong has none). */
export function differences(
  name: string,
  want: Partner | null,
  live: LivePartner | null,
  env: NodeJS.ProcessEnv,
): Difference[] {
  if (!live) return want ? create(want, env) : [];
  const liveConsumer = { id: live.id, name: live.name };
  if (!want) {
    return [
      {
        live: `consumer ${live.name} (${live.id}) is in Kong but in neither file, with ${keysText(live)}`,
        steps: [
          {
            what: `delete consumer ${live.name} (its groups and keys go with it)`,
            request: deleteConsumer(live.id),
            consumer: liveConsumer,
            absentIsDone: true,
          },
        ],
        rank: RANK.cut,
      },
    ];
  }
  if (live.id !== want.id) {
    return [
      {
        live: `Kong's consumer ${name} has id ${live.id}, the files say ${want.id}; it has ${keysText(live)}`,
        steps: [
          {
            what: `delete consumer ${live.name} ${live.id} (its groups and keys go with it)`,
            request: deleteConsumer(live.id),
            consumer: liveConsumer,
            absentIsDone: true,
          },
        ],
        rank: RANK.cut,
      },
      ...create(want, env).map((d) => ({ ...d, rank: Math.max(d.rank, RANK.identity) })),
    ];
  }
  const consumer = { id: want.id, name: want.name };
  const found: Difference[] = [];
  if (live.name !== want.name || live.customId !== want.customId) {
    found.push({
      live: `Kong's consumer ${want.id} is ${live.name} (custom_id ${live.customId ?? 'none'}), the files say ${want.name} (custom_id ${want.customId ?? 'none'})`,
      steps: [
        {
          what: `set username and custom_id of ${want.id}`,
          request: putConsumer({ ...consumer, ...(want.customId !== undefined ? { customId: want.customId } : {}) }),
          consumer,
        },
      ],
      rank: RANK.identity,
    });
  }
  for (const c of live.credentials.filter((c) => !want.credentials.some((w) => w.id === c.id))) {
    found.push({
      live: `${credentialText(c)} of ${name} gets through Kong; partner-keys.yaml does not have it`,
      steps: [
        {
          what: `delete ${credentialText(c)} of ${name}`,
          request: deleteCredential(live.id, c.id),
          consumer,
          absentIsDone: true,
        },
      ],
      rank: RANK.cut,
    });
  }
  for (const c of want.credentials) {
    const held = live.credentials.find((l) => l.id === c.id);
    const key = env[c.variable];
    // Only the environment holds the files' key: without it the two cannot be compared.
    if (!held || !key || held.key === key) continue;
    found.push({
      live: `${credentialText(held)} of ${name} gets through Kong, but ${c.variable} holds another key (${fingerprint(key)}): that one gets 401`,
      steps: [
        {
          what: `delete ${credentialText(held)} of ${name}`,
          request: deleteCredential(live.id, c.id),
          consumer,
          absentIsDone: true,
        },
        credentialStep(want, c.id, key),
      ],
      rank: RANK.cut,
    });
  }
  for (const g of want.groups.filter((g) => !live.groups.includes(g))) {
    const disabled = g === GROUP_DISABLED;
    found.push({
      live: disabled
        ? `${name} is disabled in partners.yaml but NOT in Kong: its keys get through`
        : `${name} lacks group ${g} in Kong; partners.yaml gives it`,
      steps: [{ what: `add group ${g} to ${name}`, request: addGroup(want.id, g), consumer }],
      rank: disabled ? RANK.cut : RANK.grant,
    });
  }
  for (const g of live.groups.filter((g) => !want.groups.includes(g))) {
    const disabled = g === GROUP_DISABLED;
    found.push({
      live: disabled
        ? `${name} is disabled in Kong (its keys get 403); partners.yaml has it enabled`
        : `${name} has group ${g} in Kong; partners.yaml does not give it`,
      steps: [
        { what: `remove group ${g} from ${name}`, request: removeGroup(want.id, g), consumer, absentIsDone: true },
      ],
      rank: disabled ? RANK.reenable : RANK.cut,
    });
  }
  for (const c of want.credentials.filter((c) => !live.credentials.some((l) => l.id === c.id)))
    found.push(missingCredential(want, c, env));
  return found.sort((a, b) => a.rank - b.rank);
}

/** What Kong has for a partner right now: its consumer, groups and credentials, read through the Admin API. */
import { AdminError, type AdminClient, type AdminRequest } from './client';
import { getConsumer, listCredentials, listGroups, listPartnerConsumers } from './requests';

export interface LiveCredential {
  id: string;
  /** Held only to fingerprint it; never printed. */
  key: string;
}

export interface LivePartner {
  id: string;
  name: string;
  customId?: string;
  groups: string[];
  credentials: LiveCredential[];
}

function field(row: unknown, name: string): unknown {
  return row && typeof row === 'object' ? (row as Record<string, unknown>)[name] : undefined;
}

/** Every row of a paged collection, following Kong's `offset` until there is none. */
async function all(client: AdminClient, request: (offset?: string) => AdminRequest): Promise<unknown[]> {
  const rows: unknown[] = [];
  let offset: string | undefined;
  do {
    const req = request(offset);
    const { body } = await client.send(req);
    const data = field(body, 'data');
    if (!Array.isArray(data))
      throw new AdminError(
        'server',
        `Kong answered ${client.describe(req)} without a data list: is --admin-url Kong's Admin API?`,
      );
    rows.push(...(data as unknown[]));
    const next = field(body, 'offset');
    offset = typeof next === 'string' && next ? next : undefined;
  } while (offset);
  return rows;
}

/** The consumer by id or username, or null when Kong has none. */
async function consumer(
  client: AdminClient,
  idOrName: string,
): Promise<{ id: string; name: string; customId?: string } | null> {
  try {
    const { body } = await client.send(getConsumer(idOrName));
    const customId = field(body, 'custom_id');
    return {
      id: String(field(body, 'id')),
      name: String(field(body, 'username')),
      ...(typeof customId === 'string' ? { customId } : {}),
    };
  } catch (err) {
    if (err instanceof AdminError && err.kind === 'not-found') return null;
    throw err;
  }
}

async function withEntities(
  client: AdminClient,
  c: { id: string; name: string; customId?: string },
): Promise<LivePartner> {
  const groups = (await all(client, (o) => listGroups(c.id, o))).map((row) => String(field(row, 'group')));
  const credentials = (await all(client, (o) => listCredentials(c.id, o))).map((row) => ({
    id: String(field(row, 'id')),
    key: String(field(row, 'key')),
  }));
  return { ...c, groups, credentials };
}

/** The partner as Kong has it: looked up by the files' consumer id, else by name (a consumer made by hand). */
export async function readLive(
  client: AdminClient,
  partner: { id?: string; name: string },
): Promise<LivePartner | null> {
  const found = (partner.id ? await consumer(client, partner.id) : null) ?? (await consumer(client, partner.name));
  return found ? withEntities(client, found) : null;
}

/** The names of every consumer Kong carries with partners.yaml's tag. */
export async function livePartnerNames(client: AdminClient): Promise<string[]> {
  return (await all(client, listPartnerConsumers)).map((row) => String(field(row, 'username')));
}

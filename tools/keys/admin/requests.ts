/** The Admin API requests of the keys tool, one function each (Kong Gateway 3.9). */
import { CONSUMER_TAGS, KEYS_TAG, PARTNER_TAG } from '../partner';
import type { AdminRequest } from './client';

const seg = encodeURIComponent;

export function createConsumer(c: { id: string; name: string; customId?: string }): AdminRequest {
  return {
    method: 'POST',
    path: '/consumers',
    body: {
      id: c.id,
      username: c.name,
      ...(c.customId !== undefined ? { custom_id: c.customId } : {}),
      tags: [...CONSUMER_TAGS],
    },
  };
}

export function getConsumer(consumerId: string): AdminRequest {
  return { method: 'GET', path: `/consumers/${seg(consumerId)}` };
}

/** Deleting a consumer cascades to its ACLs and credentials (on_delete = "cascade" in both daos). */
export function deleteConsumer(consumerId: string): AdminRequest {
  return { method: 'DELETE', path: `/consumers/${seg(consumerId)}` };
}

export function addGroup(consumerId: string, group: string): AdminRequest {
  return {
    method: 'PUT',
    path: `/consumers/${seg(consumerId)}/acls/${seg(group)}`,
    body: { group, tags: [PARTNER_TAG] },
  };
}

export function removeGroup(consumerId: string, group: string): AdminRequest {
  return { method: 'DELETE', path: `/consumers/${seg(consumerId)}/acls/${seg(group)}` };
}

export function createCredential(consumerId: string, credentialId: string, key: string): AdminRequest {
  return {
    method: 'POST',
    path: `/consumers/${seg(consumerId)}/key-auth`,
    body: { id: credentialId, key, tags: [KEYS_TAG] },
    secrets: [key],
  };
}

export function deleteCredential(consumerId: string, credentialId: string): AdminRequest {
  return { method: 'DELETE', path: `/consumers/${seg(consumerId)}/key-auth/${seg(credentialId)}` };
}

/** Replaces the consumer's username and custom_id, keeping its id (and so its groups and credentials). */
export function putConsumer(c: { id: string; name: string; customId?: string }): AdminRequest {
  return {
    method: 'PUT',
    path: `/consumers/${seg(c.id)}`,
    body: {
      username: c.name,
      ...(c.customId !== undefined ? { custom_id: c.customId } : { custom_id: null }),
      tags: [...CONSUMER_TAGS],
    },
  };
}

/** One page of a collection (Kong pages by `offset`; size at most 1000). */
function page(path: string, offset?: string): AdminRequest {
  const sep = path.includes('?') ? '&' : '?';
  return { method: 'GET', path: `${path}${sep}size=1000${offset ? `&offset=${seg(offset)}` : ''}` };
}

export function listGroups(consumerId: string, offset?: string): AdminRequest {
  return page(`/consumers/${seg(consumerId)}/acls`, offset);
}

export function listCredentials(consumerId: string, offset?: string): AdminRequest {
  return page(`/consumers/${seg(consumerId)}/key-auth`, offset);
}

/** Every consumer carrying partners.yaml's tag: the partners Kong has. */
export function listPartnerConsumers(offset?: string): AdminRequest {
  return page(`/consumers?tags=${seg(PARTNER_TAG)}`, offset);
}

/** The Admin API requests of the keys tool, one function each (Kong Gateway 3.9). */
import { CONSUMER_TAGS, KEYS_TAG, PARTNER_TAG } from '../partner';
import type { AdminRequest } from './client';

const seg = encodeURIComponent;

export function createConsumer(c: { id: string; name: string; customId?: string }): AdminRequest {
  return {
    method: 'POST',
    path: '/consumers',
    body: { id: c.id, username: c.name, ...(c.customId !== undefined ? { custom_id: c.customId } : {}), tags: [...CONSUMER_TAGS] },
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
  return { method: 'PUT', path: `/consumers/${seg(consumerId)}/acls/${seg(group)}`, body: { group, tags: [PARTNER_TAG] } };
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

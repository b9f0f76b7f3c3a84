/**
 * The Admin API requests of the keys tool, one function each (Kong Gateway 3.9):
 * - consumers: kong/api/endpoints.lua's generated endpoints (POST /consumers creates, 409 on a
 *   taken id/username/custom_id; GET and DELETE /consumers/{id});
 * - ACL groups: kong/plugins/acl/api.lua lets /consumers/{c}/acls/{group} name the group instead
 *   of its id; PUT then creates or replaces it (idempotent) and DELETE removes it (404 if absent);
 * - key-auth credentials: kong/plugins/key-auth/daos.lua (admin_api_nested_name "key-auth"):
 *   POST /consumers/{c}/key-auth creates (the key is unique: 409 if taken), DELETE
 *   /consumers/{c}/key-auth/{id} removes (404 if absent or another consumer's).
 * Every entity is tagged so that only its own state file's sync ever sees it (partner.ts).
 */
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

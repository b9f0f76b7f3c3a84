import { DEMO_WRITER_2_ID, DEMO_WRITER_ID } from '../../db/seed-data';

/** Identity headers as the gateway sends them after authenticating a key. */
export function consumerHeaders(id: string, username: string, groups: string[]): Record<string, string> {
  return {
    'X-Consumer-ID': id,
    'X-Consumer-Username': username,
    'X-Consumer-Custom-ID': username,
    'X-Consumer-Groups': groups.join(', '),
  };
}

export const reader = consumerHeaders('6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01', 'demo-reader', ['jobs:read']);
export const writer = consumerHeaders(DEMO_WRITER_ID, 'demo-writer', ['jobs:read', 'jobs:write']);
export const writer2 = consumerHeaders(DEMO_WRITER_2_ID, 'demo-writer-2', ['jobs:read', 'jobs:write']);

export const json = { 'Content-Type': 'application/json' };

import type { ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import { badRequest } from '../errors';

export const CHANGES_LIMIT = { min: 1, max: 500, default: 100 } as const;
const LIMIT_MESSAGE = `limit must be an integer from ${CHANGES_LIMIT.min} to ${CHANGES_LIMIT.max}`;

export const ChangesQuery = z.object({
  // Opaque (tokens.ts); absent reads the feed from the beginning.
  since: z.string().max(200, 'since is not valid: pass meta.nextSince back exactly as it was given').optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, LIMIT_MESSAGE)
    .transform(Number)
    .pipe(z.number().int().min(CHANGES_LIMIT.min, LIMIT_MESSAGE).max(CHANGES_LIMIT.max, LIMIT_MESSAGE))
    .default(CHANGES_LIMIT.default),
});
export type ChangesQuery = z.infer<typeof ChangesQuery>;

const TOLERATED = new Set(['api_key']);
const ALLOWED = Object.keys(ChangesQuery.shape);

/** Validates GET /api/v1/jobs/changes's query string, with the listing's rules and messages. */
export function parseChangesQuery(query: ParsedUrlQuery): ChangesQuery {
  const input: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (TOLERATED.has(name)) continue;
    if (!ALLOWED.includes(name)) {
      const clipped = name.length > 40 ? `${name.slice(0, 40)}…` : name;
      throw badRequest(`Unknown query parameter "${clipped}". Allowed: ${ALLOWED.join(', ')}`);
    }
    if (Array.isArray(value)) throw badRequest(`Query parameter "${name}" was given more than once; send one value`);
    // Stryker disable next-line StringLiteral: Node's querystring never yields undefined (a bare `?a` is ''); the fallback is for the type
    input[name] = value ?? '';
  }
  const parsed = ChangesQuery.safeParse(input);
  if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
  return parsed.data;
}

import type { HeaderDeclaration } from '../headers';
import { z } from 'zod';

/** The error bodies every route may answer with, and a documented error answer. */

// Errors may carry more than `error` (the gateway adds `request_id` to its own answers).
export const ErrorBody = z
  .looseObject({ error: z.string() })
  .meta({ description: 'Every error: a human-readable message' });

export const ScopeErrorBody = z
  .looseObject({ error: z.string(), requiredScope: z.enum(['jobs:read', 'jobs:write']).optional() })
  .meta({ description: 'Key disabled, or (with requiredScope) a scope the key lacks' });

export const ValidationErrorBody = z
  .looseObject({
    error: z.string(),
    details: z.array(z.strictObject({ field: z.string(), message: z.string() })).optional(),
  })
  .meta({
    description: 'Validation failed (with every problem in details), malformed JSON, or a body that is not an object',
  });

/** A documented error answer: its description and the body it carries, as an example. */
export const errorResponse = (description: string, error: string, headers?: Record<string, HeaderDeclaration>) => ({
  description,
  body: ErrorBody,
  example: { error },
  ...(headers ? { headers } : {}),
});

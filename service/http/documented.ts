import type { z } from 'zod';

/**
 * Schemas whose document states their rule in another shape: a refinement JSON Schema cannot carry,
 * given as the shapes it allows (built from the same parts), which validators check and a generated
 * client types. openapi.ts puts the shape in their place; the schema itself still validates.
 */
export const documented = new WeakMap<z.ZodType, z.ZodType>();

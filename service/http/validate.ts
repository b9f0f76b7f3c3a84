import type { ParsedUrlQuery } from 'node:querystring';
import type { z } from 'zod';
import {
  badRequest,
  clip,
  notFound,
  repeatedParameter,
  unknownParameter,
  validationFailed,
  type FieldProblem,
} from '../errors';
import type { QueryString, RequestBody } from './input';

// api_key is the gateway's business (and never reaches us through it); tolerated, never echoed.
const TOLERATED = 'api_key';

/** The parameters an unknown-parameter error lists: the two ways to page named as the alternatives they are, so a partner learns both. */
export function allowedParameters(spec: QueryString): string[] {
  const names = Object.keys(spec.parameters.shape);
  const apart = spec.apart;
  return apart
    ? names
        .filter((name) => name !== apart.first)
        .map((name) => (name === apart.second ? `${apart.second} or ${apart.first}` : name))
    : names;
}

/** Reads a query string by its contract; throws the 400 that names the first problem. */
export function queryReader<T extends z.ZodObject>(spec: QueryString<T>): (raw: ParsedUrlQuery) => z.output<T> {
  const names = Object.keys(spec.parameters.shape);
  const apart = spec.apart;
  const allowed = allowedParameters(spec);
  const lists = spec.lists ?? [];
  return (raw) => {
    const input: Record<string, string> = {};
    for (const [name, value] of Object.entries(raw)) {
      if (name === TOLERATED) continue;
      if (!names.includes(name)) throw unknownParameter(name, allowed);
      // Node's querystring yields a string or an array of them, never undefined.
      if (!Array.isArray(value)) input[name] = value!;
      // Repeated, as OpenAPI's default (form, exploded) sends an array: the comma list it means.
      else if (lists.includes(name)) input[name] = value.join(',');
      else throw repeatedParameter(name, lists);
    }
    if (apart && apart.first in input && apart.second in input) throw badRequest(apart.message);
    const parsed = spec.parameters.safeParse(input);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
    return parsed.data;
  };
}

/** Reads a JSON object body by its contract; throws one 400 with every problem. */
export function bodyReader<T extends z.ZodObject>(
  spec: RequestBody<T>,
): (body: Record<string, unknown>) => z.output<T> {
  const fields = new Set(Object.keys(spec.schema.shape));
  return (body) => {
    const problems: FieldProblem[] = [];
    for (const field of Object.keys(body)) {
      if (fields.has(field)) continue;
      const name = clip(field, 64);
      problems.push({
        field: name,
        message: spec.internal(field) ? `${name} cannot be set through the API` : `${name} is not a known field`,
      });
    }
    const parsed = spec.schema.safeParse(body);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.path.map(String).join('.');
        if (!problems.some((problem) => problem.field === field)) problems.push({ field, message: issue.message });
      }
    }
    if (problems.length > 0 || !parsed.success) throw validationFailed(problems);
    return parsed.data;
  };
}

/** Reads a path's parameters; a path they do not fit names nothing, so it is a 404 with the first message. */
export function paramsReader<T extends z.ZodObject>(schema: T): (raw: Record<string, string>) => z.output<T> {
  return (raw) => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw notFound(parsed.error.issues[0]!.message);
    return parsed.data;
  };
}

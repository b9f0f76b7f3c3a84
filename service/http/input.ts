import type { z } from 'zod';

/** A query string's contract: its parameters, and the rules between them. */
export interface QueryString<T extends z.ZodObject = z.ZodObject> {
  parameters: T;
  /** Two parameters that cannot be sent together; an unknown-parameter error lists only the one in use. */
  apart?: { first: string; second: string; message: string };
  /** The parameters that take several values: repeated (`state=CA&state=TX`) or as a comma list (`state=CA,TX`), the same. */
  lists?: readonly string[];
}

/** A JSON object body's contract: its fields, and which unknown ones exist but are not the client's. */
export interface RequestBody<T extends z.ZodObject = z.ZodObject> {
  schema: T;
  description: string;
  example: unknown;
  /** A field the organisation keeps to itself (its name or a likeness of it): refused as not settable. */
  internal(field: string): boolean;
  /** The body may be left out altogether (no Content-Length, no Transfer-Encoding): read as `{}`. */
  optional?: boolean;
}

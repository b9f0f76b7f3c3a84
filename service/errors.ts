/** Seconds a client is asked to wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = '5';

/** A failure the client caused or may retry; the error middleware turns it into JSON. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface FieldProblem {
  field: string;
  message: string;
}

export const badRequest = (message: string) => new HttpError(400, message);
export const validationFailed = (details: FieldProblem[]) =>
  new HttpError(400, 'Validation failed', { details });
export const jobNotFound = () => new HttpError(404, 'Job not found');
/** A method the path does not serve; Allow names the ones it does. */
export const methodNotAllowed = (allow: readonly string[]) => new HttpError(405, 'Method not allowed', {}, { Allow: allow.join(', ') });

/** A small client for Kong's Admin API. */
export interface AdminOptions {
  url: string;
  token?: string;
  /** Per request, in milliseconds. */
  timeoutMs: number;
}

export const DEFAULT_TIMEOUT_MS = 5000;

export type AdminErrorKind = 'not-found' | 'conflict' | 'refused' | 'server' | 'timeout' | 'unreachable';

export class AdminError extends Error {
  constructor(
    readonly kind: AdminErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface AdminRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
  /** Values to hide if Kong echoes them back in an error (a UNIQUE violation quotes the key). */
  secrets?: string[];
}

export interface AdminResponse {
  status: number;
  body: unknown;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
]);

function redact(text: string, secrets: string[] | undefined): string {
  return (secrets ?? []).reduce((t, s) => (s ? t.split(s).join('[key]') : t), text);
}

/** Kong's error bodies: {"message": "..."} (kong/api/endpoints.lua), with name/fields on schema errors. */
function kongMessage(body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') {
    return (body as { message: string }).message;
  }
  return typeof body === 'string' && body ? body.slice(0, 200) : 'no message';
}

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export class AdminClient {
  readonly base: string;

  constructor(readonly options: AdminOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  describe(req: AdminRequest): string {
    return `${req.method} ${req.path}`;
  }

  async send(req: AdminRequest): Promise<AdminResponse> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (req.body) headers['Content-Type'] = 'application/json';
    if (this.options.token) headers['Kong-Admin-Token'] = this.options.token;
    const what = `${this.describe(req)} on ${this.base}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.base + req.path, {
        method: req.method,
        headers,
        ...(req.body ? { body: JSON.stringify(req.body) } : {}),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'manual',
      });
      text = await res.text();
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new AdminError(
          'timeout',
          `Kong did not answer ${what} within ${this.options.timeoutMs} ms (--timeout); it may or may not have made the change`,
        );
      }
      const code = errorCode(err);
      if (code && UNREACHABLE.has(code)) {
        throw new AdminError(
          'unreachable',
          `cannot reach Kong's Admin API at ${this.base} (${code}): check --admin-url and that Kong is running`,
        );
      }
      throw new AdminError(
        'unreachable',
        `cannot reach Kong's Admin API at ${this.base}: ${redact((err as Error).message, req.secrets)}`,
      );
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (a proxy's error page): kept as text for the message
    }
    if (res.status < 300) return { status: res.status, body };
    const message = redact(kongMessage(body), req.secrets);
    if (res.status === 404) throw new AdminError('not-found', `Kong answered 404 Not Found to ${what}`, 404);
    if (res.status === 409) throw new AdminError('conflict', `Kong answered 409 Conflict to ${what}: ${message}`, 409);
    if (res.status === 401 || res.status === 403) {
      throw new AdminError(
        'refused',
        `Kong refused ${what} with ${res.status}: check --admin-token (${message})`,
        res.status,
      );
    }
    if (res.status >= 500) {
      throw new AdminError(
        'server',
        `Kong failed with ${res.status} on ${what}: ${message}; it may or may not have made the change`,
        res.status,
      );
    }
    throw new AdminError('refused', `Kong refused ${what} with ${res.status}: ${message}`, res.status);
  }
}

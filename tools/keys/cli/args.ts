/** Command-line parsing (node:util parseArgs) and the options several commands share. */
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AdminClient, DEFAULT_TIMEOUT_MS } from '../admin/client';
import type { StorePaths } from '../state/store';
import { UsageError } from './errors';
import type { Io } from './io';

type Options = NonNullable<ParseArgsConfig['options']>;

export const FILE_OPTIONS = {
  file: { type: 'string' },
  'keys-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export const ADMIN_OPTIONS = {
  'admin-url': { type: 'string' },
  'admin-token': { type: 'string' },
  timeout: { type: 'string' },
} as const satisfies Options;

export const APPLY_OPTIONS = { apply: { type: 'boolean' }, ...ADMIN_OPTIONS } as const satisfies Options;

export const FILE_HELP = `  --file PATH          partners.yaml to edit (default: ./partners.yaml)
  --keys-file PATH     partner-keys.yaml to edit (default: ./partner-keys.yaml)
  -h, --help           this help`;

export const APPLY_HELP = `  --apply              also make the change on a running Kong through its Admin API, at once, then
                       make Kong's copy of the partner equal to the files (keys, groups, disabled)
  --admin-url URL      Kong's Admin API (or KONG_ADMIN_URL), e.g. http://127.0.0.1:8001
  --admin-token TOKEN  sent as Kong-Admin-Token (or KONG_ADMIN_TOKEN, which keeps it out of ps and shell history)
  --timeout MS         per Admin API request (or KONG_ADMIN_TIMEOUT_MS; default ${DEFAULT_TIMEOUT_MS})`;

type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/** parseArgs, strict: an unknown option, a missing value or the wrong number of arguments is a UsageError. */
export function parse<O extends Options>(args: string[], options: O, positionals: readonly string[] | null): Parsed<O> {
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (positionals && !(parsed.values as { help?: boolean }).help && parsed.positionals.length !== positionals.length) {
    throw new UsageError(
      parsed.positionals.length > positionals.length
        ? `unexpected argument "${parsed.positionals[positionals.length]}"`
        : `missing ${positionals
            .slice(parsed.positionals.length)
            .map((p) => `<${p}>`)
            .join(' ')}`,
    );
  }
  return parsed;
}

export function storePaths(values: { file?: string; 'keys-file'?: string }, io: Io): StorePaths {
  return {
    partners: path.resolve(io.cwd, values.file ?? 'partners.yaml'),
    keys: path.resolve(io.cwd, values['keys-file'] ?? 'partner-keys.yaml'),
  };
}

/** The Admin API client when --apply is given; null otherwise. Inconsistent options are usage errors. */
export function adminClient(
  values: { apply?: boolean; 'admin-url'?: string; 'admin-token'?: string; timeout?: string },
  io: Io,
): AdminClient | null {
  if (!values.apply) {
    for (const option of ['admin-url', 'admin-token', 'timeout'] as const) {
      if (values[option] !== undefined)
        throw new UsageError(`--${option} needs --apply (without it nothing is sent to Kong)`);
    }
    return null;
  }
  return connect(values, io, '--apply needs');
}

/** The Admin API client from --admin-url, --admin-token and --timeout (or their KONG_ variables). */
export function connect(
  values: { 'admin-url'?: string; 'admin-token'?: string; timeout?: string },
  io: Io,
  needs?: string,
): AdminClient {
  const url = adminUrl(values['admin-url'], io, needs);
  const rawTimeout = values.timeout ?? io.env.KONG_ADMIN_TIMEOUT_MS;
  const timeoutMs = rawTimeout === undefined ? DEFAULT_TIMEOUT_MS : Number(rawTimeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new UsageError(`--timeout: expected milliseconds between 1 and 600000, found ${rawTimeout}`);
  }
  const token = values['admin-token'] ?? io.env.KONG_ADMIN_TOKEN;
  return new AdminClient({ url, timeoutMs, ...(token ? { token } : {}) });
}

/** The Admin API's URL from --admin-url or KONG_ADMIN_URL, checked. */
export function adminUrl(option: string | undefined, io: Io, needs = 'this command needs'): string {
  const url = option ?? io.env.KONG_ADMIN_URL;
  if (!url) throw new UsageError(`${needs} --admin-url URL (or KONG_ADMIN_URL)`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--admin-url: not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`--admin-url: expected http:// or https://, found ${parsed.protocol}`);
  return url;
}

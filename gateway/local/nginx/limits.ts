/**
 * nginx settings the local gateway applies before Kong runs, with nginx's defaults
 * (kong/templates/kong_defaults.lua, nginx's own docs):
 * - large_client_header_buffers 4 8k: a request line over 8 KiB is 414, a header line over 8 KiB
 *   (or more than 32 KiB of headers) is 494, which Kong answers as 400;
 * - client_max_body_size (KONG_NGINX_HTTP_CLIENT_MAX_BODY_SIZE, nginx size syntax: 512, 8k, 10m,
 *   1g; 0 = no limit): a larger body is 413. Kong's default is 0 because nginx spills large bodies
 *   to temp files; the local gateway buffers bodies in memory, so when the setting is absent it
 *   refuses bodies over 8 MiB (LOCAL_DEFAULT_MAX_BODY) instead of growing without bound.
 */

import { loadBodyTimeout } from './body-timeout';

export const HEADER_LINE_LIMIT = 8 * 1024;
export const HEADER_TOTAL_LIMIT = 4 * HEADER_LINE_LIMIT;
export const LOCAL_DEFAULT_MAX_BODY = 8 * 1024 * 1024;

export interface NginxLimits {
  /** client_max_body_size in bytes; null = no limit. */
  maxBodyBytes: number | null;
  /** client_body_timeout in ms (body-timeout.ts). */
  bodyTimeoutMs: number;
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

export function parseNginxSize(value: string, setting: string): number {
  const m = /^\s*(\d+)([kKmMgG]?)\s*$/.exec(value);
  if (!m) throw new Error(`${setting}: "${value}" is not an nginx size (e.g. 512, 8k, 10m)`);
  return Number(m[1]) * (UNITS[(m[2] ?? '').toLowerCase()] ?? 1);
}

export function loadNginxLimits(env: NodeJS.ProcessEnv): NginxLimits {
  const raw = env.KONG_NGINX_HTTP_CLIENT_MAX_BODY_SIZE;
  const bodyTimeoutMs = loadBodyTimeout(env);
  if (raw === undefined || raw === '') return { maxBodyBytes: LOCAL_DEFAULT_MAX_BODY, bodyTimeoutMs };
  const bytes = parseNginxSize(raw, 'nginx_http_client_max_body_size');
  return { maxBodyBytes: bytes === 0 ? null : bytes, bodyTimeoutMs };
}

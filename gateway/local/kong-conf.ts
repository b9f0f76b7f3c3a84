/**
 * Reads settings from a kong.conf file (Kong's format: `name = value`, `#` starts a comment,
 * kong/conf_loader parses it the same way) so that `npm start` and the tests serve with the
 * project's gateway/kong/kong.conf. Only the settings that mean the same outside the container
 * are taken; each becomes the KONG_<NAME> variable Kong itself would read, and a variable that is
 * already set wins, as in Kong.
 */
import { readFileSync } from 'node:fs';

/** Settings of kong.conf the local gateway applies from the file. */
export const PORTABLE_SETTINGS = [
  'headers',
  'headers_upstream',
  'nginx_http_client_max_body_size',
  'nginx_proxy_client_body_timeout',
  'nginx_proxy_gzip',
  'nginx_proxy_gzip_types',
  'nginx_proxy_gzip_min_length',
  'nginx_proxy_gzip_comp_level',
  'nginx_proxy_gzip_proxied',
  'nginx_proxy_gzip_vary',
  'nginx_proxy_gzip_http_version',
] as const;

export function parseKongConf(text: string): Map<string, string> {
  const settings = new Map<string, string>();
  for (const line of text.split('\n')) {
    const content = line.replace(/(^|[^\\])#.*$/, '$1').trim();
    const eq = content.indexOf('=');
    if (eq <= 0) continue;
    settings.set(content.slice(0, eq).trim().toLowerCase(), content.slice(eq + 1).trim());
  }
  return settings;
}

/** The KONG_* variables for kong.conf's portable settings, unless `env` already sets them. */
export function kongConfEnv(file: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const settings = parseKongConf(readFileSync(file, 'utf8'));
  const out: NodeJS.ProcessEnv = {};
  for (const name of PORTABLE_SETTINGS) {
    const variable = `KONG_${name.toUpperCase()}`;
    const value = settings.get(name);
    if (value !== undefined && env[variable] === undefined) out[variable] = value;
  }
  return out;
}

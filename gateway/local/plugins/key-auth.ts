/**
 * key-auth as in Kong 3.9 (kong/plugins/key-auth/handler.lua), for key_in_header and key_in_query:
 * - for each key name in order: the header (case-insensitive), then the query argument;
 * - the first string value found is the key (an empty string counts as no key); a header or query
 *   argument sent twice is a duplicate key; a bare `?api_key` (no `=`) is not a string and is skipped;
 * - hide_credentials: as soon as a string key is found, the query argument (clear_query_arg, see
 *   query.ts) and the header of that name are removed from the request the service receives;
 * - success: the consumer's headers are set; failure with `anonymous`: the anonymous consumer's.
 */
import type { RequestContext } from '../request-context';
import type { Consumer, Credential } from '../types';
import { definePlugin, optBool, optString, optStringArray, type Exit } from './definition';

export interface KeyAuthConfig {
  keyNames: string[];
  hideCredentials: boolean;
  anonymous: string | null;
  keyInHeader: boolean;
  keyInQuery: boolean;
  runOnPreflight: boolean;
  realm: string | null;
}

/** `Key realm="<realm>"`, or plain `Key` when no realm is configured (3.9.1's do_authentication). */
function wwwAuthenticate(conf: KeyAuthConfig): string {
  return conf.realm ? `Key realm="${conf.realm}"` : 'Key';
}

export function setConsumer(ctx: RequestContext, consumer: Consumer | null, credential: Credential | null): void {
  ctx.consumer = consumer;
  ctx.credential = credential;
  const set = (name: string, value: string | undefined): void => {
    // Stryker disable next-line ConditionalExpression: the values come from parsed state files as string or undefined, never null; the null check mirrors Lua's nil
    if (value !== undefined && value !== null) ctx.setHeader(name, value);
    else ctx.clearHeader(name);
  };
  set('X-Consumer-ID', consumer?.id);
  set('X-Consumer-Custom-ID', consumer?.custom_id);
  set('X-Consumer-Username', consumer?.username);
  set('X-Credential-Identifier', credential?.id);
  if (credential) ctx.clearHeader('X-Anonymous-Consumer');
  else ctx.setHeader('X-Anonymous-Consumer', 'true');
}

type Failure = { status: number; message: string; headers?: Record<string, string> };

function authenticate(ctx: RequestContext, conf: KeyAuthConfig): Failure | null {
  let key: string | undefined;
  for (const name of conf.keyNames) {
    let v: string | string[] | true | Array<string | true> | undefined;
    if (conf.keyInHeader) v = ctx.getHeader(name);
    if (v === undefined && conf.keyInQuery) v = ctx.query.get(name);
    if (typeof v === 'string') {
      key = v;
      if (conf.hideCredentials) {
        ctx.clearQueryArg(name);
        ctx.clearHeader(name);
      }
      break;
    }
    if (Array.isArray(v)) {
      return { status: 401, message: 'Duplicate API key found', headers: { 'WWW-Authenticate': wwwAuthenticate(conf) } };
    }
  }
  if (key === undefined || key === '') {
    return { status: 401, message: 'No API key found in request', headers: { 'WWW-Authenticate': wwwAuthenticate(conf) } };
  }
  const credential = ctx.config.credentialsByKey.get(key);
  if (!credential) {
    return { status: 401, message: 'Unauthorized', headers: { 'WWW-Authenticate': wwwAuthenticate(conf) } };
  }
  setConsumer(ctx, credential.consumer, credential);
  return null;
}

export const keyAuth = definePlugin<KeyAuthConfig>({
  name: 'key-auth',
  priority: 1250,
  parseConfig(raw) {
    if (optBool(raw, 'key_in_body', false)) throw new Error('key_in_body: true is not reproduced by the local gateway');
    const keyNames = optStringArray(raw, 'key_names', ['apikey']);
    if (keyNames.length === 0) throw new Error('key_names: at least one name is required');
    return {
      keyNames,
      hideCredentials: optBool(raw, 'hide_credentials', false),
      anonymous: optString(raw, 'anonymous', null),
      keyInHeader: optBool(raw, 'key_in_header', true),
      keyInQuery: optBool(raw, 'key_in_query', true),
      runOnPreflight: optBool(raw, 'run_on_preflight', true),
      realm: optString(raw, 'realm', null),
    };
  },
  access(ctx, conf): Exit | undefined {
    if (!conf.runOnPreflight && ctx.method === 'OPTIONS') return undefined;
    const failure = authenticate(ctx, conf);
    if (!failure) return undefined;
    if (conf.anonymous === null) return ctx.error(failure.status, failure.message, failure.headers);
    const anonymous = ctx.config.consumersByIdOrUsername.get(conf.anonymous);
    if (!anonymous) {
      // 3.9.1's set_anonymous_consumer passes the nil it found to kong.client.authenticate, which
      // raises (kong/pdk/client.lua); Kong answers a Lua error as its generic 500.
      return ctx.error(500, 'An unexpected error occurred');
    }
    setConsumer(ctx, anonymous, null);
    return undefined;
  },
});

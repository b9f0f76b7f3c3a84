/**
 * Kong secret references of the bundled `env` vault: `{vault://env/<resource>[/<key>]}`.
 * Kong's env vault (kong/vaults/env/init.lua) turns dashes into underscores and upper-cases the
 * result, so `{vault://env/jobs-gateway-secret}` reads JOBS_GATEWAY_SECRET. With a `/<key>` part
 * the variable holds JSON and the key is taken from it. A reference Kong cannot resolve leaves the
 * field unset (Kong logs "unable to resolve reference").
 */

const REFERENCE = /^\{vault:\/\/([^/{}]+)\/([^/{}#?]+)(?:\/([^/{}#?]+))?\/?\}$/;

export function isVaultReference(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('{vault://') && value.endsWith('}');
}

export function envVaultVariable(resource: string): string {
  return resource.replace(/-/g, '_').toUpperCase();
}

/** Returns the secret, or an error message when Kong would not resolve it. */
export function resolveVaultReference(
  reference: string,
  env: NodeJS.ProcessEnv,
): { value: string } | { error: string } {
  const match = REFERENCE.exec(reference);
  if (!match) return { error: `invalid reference ${reference}` };
  const [, vault, resource, key] = match;
  if (vault !== 'env' || resource === undefined) {
    return { error: `vault "${vault}" is not reproduced by the local gateway (only Kong's env vault is)` };
  }
  const variable = envVaultVariable(resource);
  const raw = env[variable];
  if (raw === undefined) return { error: `could not get value from external vault (no value found (env ${variable}))` };
  if (key === undefined) return { value: raw };
  try {
    const parsed: unknown = JSON.parse(raw);
    const field = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[key] : undefined;
    if (typeof field === 'string') return { value: field };
  } catch {
    // fall through
  }
  return { error: `could not get value from external vault (no value found (env ${variable}, key ${key}))` };
}

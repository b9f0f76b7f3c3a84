// Operators: npm run -s webhooks -- list <partner id or username> | disable <subscription id> [reason] | reseal; never shows a secret.
import { openDatabase } from '../../db/client';
import { isUuid } from '../../domain/uuid';
import { disableSubscription, subscriptionsOf, type SubscriptionView } from '../../db/webhooks/subscriptions';
import { loadConfig } from '../config';
import { keyringOf } from '../webhooks/settings';
import { runReseal } from './reseal-secrets';

const USAGE =
  'usage: npm run -s webhooks -- list <partner consumer id or username> | disable <subscription id> [reason] | reseal';

const iso = (value: Date | null) => (value ? value.toISOString() : '-');

/** One line per subscription: what an operator needs to answer "why is my webhook not arriving?". */
export function describeSubscription(row: SubscriptionView): string {
  const failing = row.failingSince ? ` failing since ${iso(row.failingSince)}, next try ${iso(row.nextAttemptAt)}` : '';
  const disabled = row.status === 'disabled' ? ` (${row.disabledReason ?? 'disabled'})` : '';
  const error = row.lastError ? ` last error: ${row.lastError}` : '';
  return `${row.id}  ${row.status}${disabled}  ${row.url}  position ${row.position}  last delivered ${iso(row.lastDeliveredAt)}${failing}${error}`;
}

export async function runAdmin(args: string[], env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const [command, target, ...rest] = args;
  if (command === 'reseal' && !target) return reseal(env, out);
  if (!target || (command !== 'list' && command !== 'disable')) {
    out(USAGE);
    return 2;
  }
  const database = openDatabase(loadConfig(env).databaseUrl, [], { connectionLimit: 1 });
  try {
    if (command === 'list') {
      const rows = await subscriptionsOf(database.db, target);
      if (rows.length === 0) out(`no webhook subscriptions for ${target}`);
      for (const row of rows) out(describeSubscription(row));
      return 0;
    }
    const reason = rest.join(' ').trim() || 'disabled by an operator';
    if (!isUuid(target) || !(await disableSubscription(database.db, target, reason.slice(0, 200)))) {
      out(`no webhook subscription ${target}`);
      return 1;
    }
    out(`disabled ${target}: ${reason}`);
    return 0;
  } finally {
    await database.close();
  }
}

/** Re-seals every secret under WEBHOOK_SECRETS_KEY, opening with it and WEBHOOK_SECRETS_KEY_PREVIOUS (docs/operations.md, Rotating the webhook sealing key). */
async function reseal(env: NodeJS.ProcessEnv, out: (line: string) => void): Promise<number> {
  const config = loadConfig(env);
  const settings = config.webhooks;
  if (!settings.secretsKey) {
    out(
      'WEBHOOK_SECRETS_KEY is not set: reseal seals under it (and opens with it and WEBHOOK_SECRETS_KEY_PREVIOUS), as the service and the dispatchers are given them',
    );
    return 2;
  }
  const database = openDatabase(config.databaseUrl, [], { connectionLimit: 1 });
  try {
    return await runReseal(database.db, keyringOf({ ...settings, secretsKey: settings.secretsKey }), out);
  } finally {
    await database.close();
  }
}

if (require.main === module) {
  runAdmin(process.argv.slice(2), process.env, (line) => console.log(line)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`webhooks: ${(error as { code?: string }).code ?? (error as Error).message}`);
      process.exit(1);
    },
  );
}

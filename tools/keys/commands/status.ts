import { livePartnerNames, readLive } from '../admin/live';
import { ADMIN_OPTIONS, connect, FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { DriftFound } from '../cli/errors';
import { hintsFor } from '../cli/hints';
import { fingerprint } from '../fingerprint';
import { GROUP_DISABLED, GROUP_WRITE } from '../partner';
import { differences } from '../reconcile/plan';
import { remedy } from '../reconcile/reconcile';
import { PartnerStore } from '../state/store';
import type { Command } from './command';

const OPTIONS = { ...FILE_OPTIONS, ...ADMIN_OPTIONS } as const;

export const status: Command = {
  name: 'status',
  summary: 'compare every partner in the files with Kong; exit 3 if they differ',
  help: `Usage: keys status [--admin-url URL]

Reads every partner of partners.yaml and partner-keys.yaml, and every consumer Kong carries with
the jobs-partners tag, and compares them with Kong: consumer, credentials, ACL groups, disabled
or not. Prints each partner on stdout, and for each difference what is live and the command that
ends it. A key appears only as its credential id and a fingerprint (sha256:<8 hex>), never itself.
Changes nothing. Exit codes: 0 Kong equals the files, 3 they differ, 1 Kong could not be read,
2 wrong usage: fit for cron or CI.

Options:
  --admin-url URL      Kong's Admin API (or KONG_ADMIN_URL)
  --admin-token TOKEN  sent as Kong-Admin-Token (or KONG_ADMIN_TOKEN)
  --timeout MS         per Admin API request (or KONG_ADMIN_TIMEOUT_MS)
${FILE_HELP}`,
  async run(args, io) {
    const { values } = parse(args, OPTIONS, []);
    if (values.help) return io.out(this.help);
    const client = connect(values, io);
    const store = PartnerStore.load(storePaths(values, io));
    const hints = hintsFor(values, io);
    const files = store.partners();
    const orphans = (await livePartnerNames(client)).filter((n) => !files.some((p) => p.name === n)).sort();
    let differing = 0;
    for (const name of [...files.map((p) => p.name), ...orphans]) {
      const want = files.find((p) => p.name === name) ?? null;
      const live = await readLive(client, { ...(want ? { id: want.id } : {}), name });
      const found = differences(name, want, live, io.env);
      if (found.length === 0) {
        const keys = (live?.credentials ?? []).map((c) => `${c.id} (${fingerprint(c.key)})`);
        const state = `${live?.groups.includes(GROUP_WRITE) ? 'write' : 'read'}, ${live?.groups.includes(GROUP_DISABLED) ? 'disabled' : 'active'}`;
        io.out(
          `${name}: Kong matches the files (${state}; ${keys.length === 0 ? 'no key' : `keys ${keys.join(', ')}`})`,
        );
        continue;
      }
      differing++;
      io.out(`${name}: Kong DIFFERS from the files`);
      for (const d of found) io.out(`  live: ${d.live}\n  run:  ${remedy(name, d, hints)}`);
    }
    if (differing > 0)
      throw new DriftFound(
        `Kong differs from the files for ${differing} partner${differing === 1 ? '' : 's'} (above); the files are the truth`,
      );
    io.err(`Kong matches the files for all ${files.length} partner${files.length === 1 ? '' : 's'}.`);
  },
};

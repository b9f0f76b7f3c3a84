/** Service host names resolve as in Kong: the hosts file of its dns_hostsfile setting (KONG_DNS_HOSTSFILE; npm start uses gateway/local/hosts), then DNS. */
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export type HostsTable = Map<string, string>;

/** hosts(5): `address name [aliases...]`; the first IPv4 entry of a name wins over IPv6 ones. */
export function parseHostsFile(text: string): HostsTable {
  const table: HostsTable = new Map();
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (!address || isIP(address) === 0) continue;
    for (const name of names.map((n) => n.toLowerCase())) {
      if (!table.has(name) || (isIP(table.get(name)!) === 6 && isIP(address) === 4)) table.set(name, address);
    }
  }
  return table;
}

export function loadHostsFile(env: NodeJS.ProcessEnv): HostsTable {
  const file = env.KONG_DNS_HOSTSFILE || '/etc/hosts';
  try {
    return parseHostsFile(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`dns_hostsfile ${file}: ${(err as Error).message}`, { cause: err });
  }
}

export async function resolveHost(host: string, hosts: HostsTable): Promise<string> {
  return isIP(host) ? host : (hosts.get(host.toLowerCase()) ?? (await lookup(host)).address);
}

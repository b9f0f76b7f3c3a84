/**
 * Upstream host names are resolved the way Kong does: first the hosts file named by Kong's
 * `dns_hostsfile` setting (KONG_DNS_HOSTSFILE, default /etc/hosts), then DNS. The hosts file is
 * read when the configuration is (re)loaded, as Kong reads it when it starts.
 */
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export type HostsTable = Map<string, string>;

/** Parses hosts(5): `address name [aliases...]`, `#` comments; the first IPv4 entry of a name wins. */
export function parseHostsFile(text: string): HostsTable {
  const ipv4 = new Map<string, string>();
  const ipv6 = new Map<string, string>();
  for (const line of text.split('\n')) {
    const fields = line.replace(/#.*/, '').trim().split(/\s+/).filter(Boolean);
    const [address, ...names] = fields;
    if (!address || names.length === 0) continue;
    const family = isIP(address);
    if (family === 0) continue;
    const table = family === 4 ? ipv4 : ipv6;
    for (const name of names) {
      const key = name.toLowerCase();
      if (!table.has(key)) table.set(key, address);
    }
  }
  for (const [name, address] of ipv6) if (!ipv4.has(name)) ipv4.set(name, address);
  return ipv4;
}

export function loadHostsFile(env: NodeJS.ProcessEnv): HostsTable {
  const file = env.KONG_DNS_HOSTSFILE || '/etc/hosts';
  try {
    return parseHostsFile(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`dns_hostsfile ${file}: ${(err as Error).message}`);
  }
}

export async function resolveHost(host: string, hosts: HostsTable): Promise<string> {
  if (isIP(host)) return host;
  const fromFile = hosts.get(host.toLowerCase());
  if (fromFile) return fromFile;
  const { address } = await lookup(host);
  return address;
}

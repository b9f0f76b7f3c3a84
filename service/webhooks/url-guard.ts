import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Where a partner's URL may lead: https to public addresses; development settings may allow http and named addresses, never metadata. */
export interface UrlPolicy {
  allowHttp: boolean;
  /** CIDR ranges allowed although not public: only development settings and tests set them. */
  allowed: readonly string[];
}

export const PRODUCTION_POLICY: UrlPolicy = { allowHttp: false, allowed: [] };

/** A URL or an address the policy refuses; the message is safe to show the partner (it names nothing of our network). */
export class UrlRefused extends Error {
  override name = 'UrlRefused';
}

/** The one answer for a host we will not contact: never which address, nor whether the name exists. */
export const NOT_PUBLIC = 'url must resolve only to public addresses';

const METADATA = new BlockList();
for (const address of ['169.254.169.254', '169.254.170.2', '100.100.100.200']) METADATA.addAddress(address, 'ipv4');
METADATA.addAddress('fd00:ec2::254', 'ipv6');

// Each range that is not the public internet, with the word a refusal uses for it (RFC 6890's registries).
const RANGES: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a shared (CGNAT) address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'a reserved address'],
  ['192.0.2.0', 24, 'ipv4', 'a documentation address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['198.51.100.0', 24, 'ipv4', 'a documentation address'],
  ['203.0.113.0', 24, 'ipv4', 'a documentation address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['::', 96, 'ipv6', 'an IPv4-compatible address'],
  ['64:ff9b::', 96, 'ipv6', 'a NAT64 address'],
  ['64:ff9b:1::', 48, 'ipv6', 'a NAT64 address'],
  ['100::', 64, 'ipv6', 'a discard address'],
  ['2001::', 23, 'ipv6', 'a reserved address'],
  ['2001:db8::', 32, 'ipv6', 'a documentation address'],
  ['2002::', 16, 'ipv6', 'a 6to4 address'],
  ['fc00::', 7, 'ipv6', 'a unique local address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['fec0::', 10, 'ipv6', 'a site-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];
const RESERVED = RANGES.map(([network, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, reason };
});

const MAPPED = new BlockList();
MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** The 16 bytes of an IPv6 address (any form: `::`, an embedded dotted quad). */
function ipv6Bytes(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted
    ? address.slice(0, dotted.index) +
      ((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16) +
      ':' +
      ((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)
    : address;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const [front, back] = [groups(head), groups(tail)];
  const words = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  return words.flatMap((word) => [word >> 8, word & 255]);
}

/** ::ffff:a.b.c.d (in any spelling) as a.b.c.d: a mapped address is the IPv4 one it maps. */
export function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  if (isIP(address) === 4) return { address, family: 'ipv4' };
  if (!MAPPED.check(address, 'ipv6')) return { address, family: 'ipv6' };
  return { address: ipv6Bytes(address).slice(12).join('.'), family: 'ipv4' };
}

// Built once per policy: a dispatcher checks an IP literal's address at every delivery.
const allowedLists = new WeakMap<UrlPolicy, BlockList>();
function allowedList(policy: UrlPolicy): BlockList {
  const cached = allowedLists.get(policy);
  if (cached) return cached;
  const list = new BlockList();
  allowedLists.set(policy, list);
  for (const cidr of policy.allowed) {
    const [network, prefix] = cidr.split('/');
    const family = isIP(network ?? '') === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(network!, Number(prefix ?? (family === 'ipv4' ? 32 : 128)), family);
  }
  return list;
}

/** Why `address` may not be contacted under `policy`, or undefined when it may. */
export function addressProblem(address: string, policy: UrlPolicy): string | undefined {
  if (isIP(address) === 0) return 'not an IP address';
  const plain = unmapped(address);
  if (METADATA.check(plain.address, plain.family)) return `${address} is a cloud metadata address`;
  if (policy.allowed.length > 0 && allowedList(policy).check(plain.address, plain.family)) return undefined;
  const reserved = RESERVED.find(({ list }) => list.check(plain.address, plain.family));
  return reserved ? `${address} is ${reserved.reason}` : undefined;
}

/** Validates a URL's form under `policy`: scheme, no user-info, a host; throws UrlRefused naming the problem. */
export function checkUrlForm(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('url must be an absolute URL, e.g. https://example.com/webhooks');
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:'))
    throw new UrlRefused('url must use https');
  if (url.username || url.password) throw new UrlRefused('url must not contain a user name or password');
  if (url.hash) throw new UrlRefused('url must not contain a fragment (#)');
  const literal = hostAddress(url);
  if (literal !== undefined) {
    if (addressProblem(literal, policy)) throw new UrlRefused(NOT_PUBLIC);
  }
  return url;
}

/** The URL's host when it is an IP literal (without IPv6's brackets). */
export function hostAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? undefined : host;
}

export type Lookup = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

const systemLookup: Lookup = (hostname, callback) => dnsLookup(hostname, { all: true, verbatim: true }, callback);

/** Every address `hostname` resolves to, each checked: one refused address refuses the host. */
export function resolveChecked(
  hostname: string,
  policy: UrlPolicy,
  lookup: Lookup = systemLookup,
): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(hostname, (error, addresses) => {
      // Unresolvable, empty or not public: one answer, so a refusal never maps our resolver's view of names.
      if (error || addresses.length === 0 || addresses.some(({ address }) => addressProblem(address, policy)))
        return reject(new UrlRefused(NOT_PUBLIC));
      resolve(addresses);
    });
  });
}

/** The whole check a URL passes at create: its form, then every address its host resolves to. */
export async function checkUrl(raw: string, policy: UrlPolicy, lookup?: Lookup): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  if (hostAddress(url) === undefined) await resolveChecked(url.hostname, policy, lookup);
  return url;
}

/** A lookup for new connections that hands the socket only the addresses it checked (no second resolution to rebind). */
export function guardedLookup(policy: UrlPolicy, lookup?: Lookup) {
  return (hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void): void => {
    resolveChecked(hostname, policy, lookup).then(
      (addresses) =>
        options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family),
      (error: unknown) => callback(error),
    );
  };
}

/**
 * The SSRF guard's rules: which addresses a partner's URL may lead to, in every spelling, checked
 * at create (checkUrl) and at each connection (postEvent, through the guarded lookup).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { deliveryAgent, postEvent } from '../../../service/webhooks/post';
import {
  addressProblem,
  checkUrl,
  NOT_PUBLIC,
  PRODUCTION_POLICY,
  UrlRefused,
  type Lookup,
  type UrlPolicy,
} from '../../../service/webhooks/url-guard';

const DEV: UrlPolicy = { allowHttp: true, allowed: ['127.0.0.0/8', '::1/128'] };
/** A DNS answer for a name, as a resolver controlled by whoever registered the name would give it. */
const answering =
  (...addresses: string[]): Lookup =>
  (_host, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

test.each([
  ['127.0.0.1', 'a loopback address'],
  ['127.255.0.9', 'a loopback address'],
  ['10.0.0.1', 'a private address'],
  ['172.16.5.4', 'a private address'],
  ['192.168.1.1', 'a private address'],
  ['169.254.10.10', 'a link-local address'],
  ['169.254.169.254', 'a cloud metadata address'],
  ['100.64.0.1', 'a shared (CGNAT) address'],
  ['224.0.0.1', 'a multicast address'],
  ['0.0.0.0', 'an unspecified ("this network") address'],
  ['255.255.255.255', 'a reserved address'],
  ['::1', 'a loopback address'],
  ['::', 'an unspecified address'],
  ['fc00::1', 'a unique local address'],
  ['fd12:3456::1', 'a unique local address'],
  ['fe80::1', 'a link-local address'],
  ['ff02::1', 'a multicast address'],
  ['fd00:ec2::254', 'a cloud metadata address'],
  ['::ffff:127.0.0.1', 'a loopback address'],
  ['::ffff:7f00:1', 'a loopback address'],
  ['::ffff:10.1.1.1', 'a private address'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', 'a cloud metadata address'],
  ['::ffff:169.254.169.254', 'a cloud metadata address'],
])('%s is refused as %s', (address, reason) => {
  expect(addressProblem(address, PRODUCTION_POLICY)).toBe(`${address} is ${reason}`);
});

test.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => {
  expect(addressProblem(address, PRODUCTION_POLICY)).toBeUndefined();
});

test('development settings allow the addresses they name, never a metadata address', () => {
  expect(addressProblem('127.0.0.1', DEV)).toBeUndefined();
  expect(addressProblem('::1', DEV)).toBeUndefined();
  expect(addressProblem('::ffff:127.0.0.1', DEV)).toBeUndefined();
  expect(addressProblem('10.0.0.1', DEV)).toBe('10.0.0.1 is a private address');
  const everything: UrlPolicy = { allowHttp: true, allowed: ['0.0.0.0/0', '::/0'] };
  expect(addressProblem('169.254.169.254', everything)).toBe('169.254.169.254 is a cloud metadata address');
  expect(addressProblem('::ffff:169.254.169.254', everything)).toBe(
    '::ffff:169.254.169.254 is a cloud metadata address',
  );
  expect(addressProblem('fd00:ec2::254', everything)).toBe('fd00:ec2::254 is a cloud metadata address');
});

describe('checkUrl, at create', () => {
  const refused = (url: string, policy = PRODUCTION_POLICY, lookup?: Lookup) =>
    checkUrl(url, policy, lookup).then(
      () => 'accepted',
      (error: unknown) => (error instanceof UrlRefused ? error.message : `crashed: ${String(error)}`),
    );

  test.each([
    ['http://example.com/hooks', 'url must use https'],
    ['ftp://example.com/hooks', 'url must use https'],
    ['https://user:pass@example.com/hooks', 'url must not contain a user name or password'],
    ['https://user@example.com/hooks', 'url must not contain a user name or password'],
    ['not a url', 'url must be an absolute URL, e.g. https://example.com/webhooks'],
    ['https://127.0.0.1/hooks', NOT_PUBLIC],
    ['https://[::1]/hooks', NOT_PUBLIC],
    ['https://[::ffff:169.254.169.254]/latest', NOT_PUBLIC],
    ['https://169.254.169.254/latest/meta-data', NOT_PUBLIC],
    ['https://2130706433/hooks', NOT_PUBLIC],
    ['https://0x7f.1/hooks', NOT_PUBLIC],
  ])('%s: %s', async (url, message) => {
    expect(await refused(url)).toBe(message);
  });

  test('a name is refused when any address it resolves to is not public', async () => {
    expect(
      await refused('https://hooks.partner.example/in', PRODUCTION_POLICY, answering('93.184.215.14', '10.0.0.7')),
    ).toBe(NOT_PUBLIC);
    expect(
      await refused('https://metadata.partner.example/', PRODUCTION_POLICY, answering('::ffff:169.254.169.254')),
    ).toBe(NOT_PUBLIC);
    expect(await refused('https://hooks.partner.example/in', PRODUCTION_POLICY, answering('93.184.215.14'))).toBe(
      'accepted',
    );
  });

  test('localhost, resolved by the system, is refused; plain http to it only under development settings', async () => {
    expect(await refused('https://localhost/hooks')).toBe(NOT_PUBLIC);
    expect(await refused('http://localhost:9999/hooks', DEV)).toBe('accepted');
  });

  test('nothing of our network is told: a name that does not resolve, one that resolves to nothing, an internal one and a private literal get one answer', async () => {
    const none: Lookup = (_host, callback) => callback(null, []);
    const answers = [
      await refused('https://does-not-exist.invalid/hooks'),
      await refused('https://hooks.partner.example/in', PRODUCTION_POLICY, none),
      await refused('https://db.internal.example/in', PRODUCTION_POLICY, answering('10.0.0.7')),
      await refused('https://10.0.0.7/in'),
    ];
    expect(answers).toEqual(Array(4).fill('url must resolve only to public addresses'));
  });
});

describe('postEvent, at each connection', () => {
  let server: http.Server;
  let port: number;
  const hits: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url!);
      res
        .writeHead(
          req.url === '/redirect' ? 302 : 204,
          req.url === '/redirect' ? { Location: `http://127.0.0.1:${port}/inside` } : {},
        )
        .end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => hits.splice(0));

  test('a name that resolved to a public address at create but to loopback now (DNS rebinding) is never contacted', async () => {
    const outcome = await postEvent(`http://rebinding.partner.example:${port}/hooks`, {}, '{}', {
      policy: { allowHttp: true, allowed: [] },
      lookup: answering('127.0.0.1'),
    });
    expect(outcome).toEqual({
      ok: false,
      refused: true,
      error: 'connection failed',
      detail: `not contacted: ${NOT_PUBLIC}`,
    });
    expect(hits).toEqual([]);
  });

  test('the connection goes to the address that was checked', async () => {
    const outcome = await postEvent(`http://allowed.partner.example:${port}/hooks`, {}, '{}', {
      policy: DEV,
      lookup: answering('127.0.0.1'),
    });
    expect(outcome).toEqual({ ok: true, status: 204 });
    expect(hits).toEqual(['/hooks']);
  });

  test('an IP literal is checked before connecting; a redirect is an answer, not followed', async () => {
    expect(
      await postEvent(`http://127.0.0.1:${port}/hooks`, {}, '{}', { policy: { allowHttp: true, allowed: [] } }),
    ).toMatchObject({ ok: false, refused: true });
    expect(hits).toEqual([]);
    expect(await postEvent(`http://127.0.0.1:${port}/redirect`, {}, '{}', { policy: DEV })).toEqual({
      ok: false,
      status: 302,
      error: 'HTTP 302',
    });
    expect(hits).toEqual(['/redirect']);
  });

  test('plain http is refused without development settings', async () => {
    expect(
      await postEvent(`http://127.0.0.1:${port}/hooks`, {}, '{}', {
        policy: { allowHttp: false, allowed: ['127.0.0.0/8'] },
      }),
    ).toEqual({ ok: false, refused: true, error: 'connection failed', detail: 'not contacted: url must use https' });
    expect(hits).toEqual([]);
  });
});

describe("postEvent over TLS: the certificate is checked against the URL's name, the connection goes to the checked address", () => {
  let server: https.Server;
  let port: number;
  let ca: string;
  const names: Array<string | false | null> = [];
  beforeAll(async () => {
    // A certificate authority of the test's own and a certificate for hooks.partner.example only.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-tls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=webhook test CA');
    openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=hooks.partner.example');
    writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:hooks.partner.example\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'leaf.crt',
      '-days',
      '1',
      '-extfile',
      'san.ext',
    );
    ca = readFileSync(path.join(dir, 'ca.crt'), 'utf8');
    server = https.createServer(
      { key: readFileSync(path.join(dir, 'leaf.key')), cert: readFileSync(path.join(dir, 'leaf.crt')) },
      (req, res) => {
        names.push((req.socket as TLSSocket).servername);
        res.writeHead(204).end();
      },
    );
    rmSync(dir, { recursive: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => names.splice(0));
  // The dispatcher's pool with the test's CA trusted; closed after each test.
  let agents: ReturnType<typeof deliveryAgent>[] = [];
  const trusting = () => {
    const agent = deliveryAgent(HTTPS_ONLY, { lookup: answering('127.0.0.1'), tls: { ca } });
    agents.push(agent);
    return agent;
  };
  afterEach(async () => {
    await Promise.all(agents.map((agent) => agent.destroy()));
    agents = [];
  });
  const HTTPS_ONLY: UrlPolicy = { allowHttp: false, allowed: ['127.0.0.0/8'] };

  test("a receiver whose certificate names the URL's host is delivered to, with the name sent in SNI", async () => {
    expect(
      await postEvent(`https://hooks.partner.example:${port}/in`, {}, '{}', { policy: HTTPS_ONLY, agent: trusting() }),
    ).toEqual({ ok: true, status: 204 });
    expect(names).toEqual(['hooks.partner.example']);
  });

  test('a certificate for another name, or from an authority the dispatcher does not trust, is a failed delivery', async () => {
    const other = await postEvent(`https://other.partner.example:${port}/in`, {}, '{}', {
      policy: HTTPS_ONLY,
      agent: trusting(),
    });
    expect(other).toEqual({ ok: false, error: 'TLS failed', detail: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    const untrusted = await postEvent(`https://hooks.partner.example:${port}/in`, {}, '{}', {
      policy: HTTPS_ONLY,
      lookup: answering('127.0.0.1'),
    });
    expect(untrusted).toMatchObject({
      ok: false,
      error: 'TLS failed',
      detail: expect.stringMatching(
        /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)$/,
      ),
    });
    expect(names).toEqual([]);
  });
});

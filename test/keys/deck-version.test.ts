/**
 * `keys sync` and the decK it runs: which versions are refused (older than 1.7.0, whose credential
 * listing ignores select tags) and the command each accepted decK gets. The refusal of the
 * installed decK 1.4.0, end to end against a real Kong, is in test/kong/keys-lifecycle.test.ts.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deckArgs, isSafeDeck, parseDeckVersion } from '../../tools/keys/deck';
import { keys, workspace, type Workspace } from './support';

test('deck version output of old and new releases is read', () => {
  expect(parseDeckVersion('decK 1.4.0 (unknown) \n')).toEqual([1, 4, 0]);
  expect(parseDeckVersion('decK v1.43.0 (5f6a7b8)\n')).toEqual([1, 43, 0]);
  expect(parseDeckVersion('something else')).toBeNull();
});

test('1.7.0 is the first decK allowed to sync', () => {
  for (const old of [
    [1, 4, 0],
    [1, 6, 9],
    [0, 99, 0],
  ])
    expect([old, isSafeDeck(old)]).toEqual([old, false]);
  for (const ok of [
    [1, 7, 0],
    [1, 7, 1],
    [1, 43, 0],
    [2, 0, 0],
  ])
    expect([ok, isSafeDeck(ok)]).toEqual([ok, true]);
});

test('decK with gateway commands syncs with `deck gateway sync FILE`; an older one with `deck sync -s FILE`; the token is a header', () => {
  const url = 'http://127.0.0.1:8001';
  expect(deckArgs({ bin: 'deck', version: '1.43.0', gatewayCommands: true }, 'sync', 'partners.yaml', { url })).toEqual(
    ['gateway', 'sync', 'partners.yaml', '--kong-addr', url],
  );
  expect(
    deckArgs({ bin: 'deck', version: '1.20.0', gatewayCommands: false }, 'sync', 'partners.yaml', { url, token: 't' }),
  ).toEqual(['sync', '-s', 'partners.yaml', '--kong-addr', url, '--headers', 'Kong-Admin-Token:t']);
});

describe("keys sync with a decK that reports a given version (a script standing in for decK's version answer)", () => {
  let ws: Workspace;
  let bin: string;
  beforeEach(() => {
    ws = workspace();
    bin = mkdtempSync(path.join(os.tmpdir(), 'deck-bin-'));
  });
  afterEach(() => {
    ws.remove();
    rmSync(bin, { recursive: true, force: true });
  });

  /** A `deck` that answers `version` with `version` and records every other call. */
  function deckReporting(version: string): { path: string; calls: () => string[] } {
    const file = path.join(bin, 'deck');
    const log = path.join(bin, 'calls');
    writeFileSync(
      file,
      `#!/bin/sh\nif [ "$1" = version ]; then echo "decK ${version} (test)"; exit 0; fi\necho "$*" >> "${log}"\n[ "$1" = gateway ] && [ "$2" = --help ] && exit 0\nexit 0\n`,
    );
    chmodSync(file, 0o755);
    return {
      path: file,
      calls: () =>
        readFileSync(log, { encoding: 'utf8', flag: 'a+' }).trim() ? readFileSync(log, 'utf8').trim().split('\n') : [],
    };
  }

  test('1.6.0 is refused before anything is sent, naming the minimum', async () => {
    const deck = deckReporting('v1.6.0');
    const r = await keys(ws, ['sync', 'partners.yaml', '--admin-url', 'http://127.0.0.1:8001', '--deck', deck.path]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('decK 1.6.0 is older than 1.7.0');
    expect(deck.calls()).toEqual([]);
  });

  test('a newer decK syncs each file on its own, in order, against the given Admin API', async () => {
    const deck = deckReporting('v1.43.0');
    const r = await keys(ws, [
      'sync',
      'kong.yaml',
      'partners.yaml',
      '--admin-url',
      'http://127.0.0.1:8001',
      '--deck',
      deck.path,
    ]);
    expect(r.code).toBe(0);
    expect(deck.calls()).toEqual([
      'gateway --help',
      `gateway sync ${path.join(ws.dir, 'kong.yaml')} --kong-addr http://127.0.0.1:8001`,
      `gateway sync ${path.join(ws.dir, 'partners.yaml')} --kong-addr http://127.0.0.1:8001`,
    ]);
  });

  test('no file, or no Admin API, is a usage error', async () => {
    expect((await keys(ws, ['sync', '--admin-url', 'http://127.0.0.1:8001'])).code).toBe(2);
    expect((await keys(ws, ['sync', 'partners.yaml'])).code).toBe(2);
  });
});

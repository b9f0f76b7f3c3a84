/**
 * Shared by the keys-tool tests: temporary copies of the committed state files, the tool run
 * in-process with its output captured, the files read back, and decK's offline validation.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { run } from '../../tools/keys/run';
import { forEachTest } from '../helpers/hooked';
import type { Parsed } from '../helpers/parsed';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface Workspace {
  dir: string;
  partners: string;
  keys: string;
  read(): { partners: string; keys: string };
  /** Both files as data. */
  state(): { partners: Parsed; keys: Parsed };
  write(which: 'partners' | 'keys', text: string): void;
  remove(): void;
}

/** A temp dir holding copies of the committed partners.yaml and partner-keys.yaml. */
export function workspace(): Workspace {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keys-tool-'));
  const partners = path.join(dir, 'partners.yaml');
  const keys = path.join(dir, 'partner-keys.yaml');
  copyFileSync(path.join(ROOT, 'partners.yaml'), partners);
  copyFileSync(path.join(ROOT, 'partner-keys.yaml'), keys);
  const ws: Workspace = {
    dir,
    partners,
    keys,
    read: () => ({ partners: readFileSync(partners, 'utf8'), keys: readFileSync(keys, 'utf8') }),
    state: () => ({ partners: parse(readFileSync(partners, 'utf8')), keys: parse(readFileSync(keys, 'utf8')) }),
    write: (which, text) => writeFileSync(which === 'partners' ? partners : keys, text),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  return ws;
}

/** A fresh workspace for each test of the file or block it is called in, removed after the test. */
export function workspacePerTest(): Workspace {
  return forEachTest('the workspace', workspace, (ws) => ws.remove());
}

export interface RunResult {
  code: number;
  out: string;
  err: string;
}

/** `keys <args>` in the workspace, with only the environment given (never the machine's KONG_* settings). */
export async function keys(ws: Workspace, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(args, { out: (t) => out.push(t), err: (t) => err.push(t), env, cwd: ws.dir });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Runs `keys <args>`, checks its exit code, that stderr says each of `messages`, and that both files are as they were. */
export async function expectFilesKept(
  ws: Workspace,
  args: string[],
  code: number,
  ...messages: string[]
): Promise<RunResult> {
  const before = ws.read();
  const result = await keys(ws, args);
  expect(result.code).toBe(code);
  for (const message of messages) expect(result.err).toContain(message);
  expect(ws.read()).toEqual(before);
  return result;
}

/** The VARIABLE=key line issue and rotate print on stdout. */
export function printedKey(result: RunResult): { variable: string; key: string } {
  const m = /^(DECK_[A-Z0-9_]+)=(jl_live_[A-Za-z0-9_-]+)$/.exec(result.out.trim());
  if (!m) throw new Error(`no key line on stdout: ${JSON.stringify(result.out)} (stderr: ${result.err})`);
  return { variable: m[1] as string, key: m[2] as string };
}

/**
 * `deck validate -s file` (decK's offline check: schema, duplicates, references). decK renders
 * templates first, so every DECK_ variable the keys file references is set to a placeholder.
 */
export function deckValidate(file: string): void {
  const text = readFileSync(file, 'utf8');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  for (const m of text.matchAll(/env "(DECK_[A-Z0-9_]+)"/g)) env[m[1] as string] = 'placeholder-for-validation';
  try {
    execFileSync('deck', ['validate', '-s', file], { env, stdio: 'pipe' });
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer };
    throw new Error(`deck validate -s ${file} failed: ${String(e.stderr ?? '')}${String(e.stdout ?? '')}`, {
      cause: err,
    });
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

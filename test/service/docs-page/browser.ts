/**
 * Debian's Chromium (/usr/bin/chromium, apt package `chromium`) driven by playwright-core: no
 * browser download, a fresh profile per launch, nothing that phones home.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** `bypassCSP` only for injecting a test tool (axe) into the page; never where requests are checked. */
export async function launchChromium(opts: { bypassCSP?: boolean } = {}): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'docs-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
    bypassCSP: opts.bypassCSP ?? false,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

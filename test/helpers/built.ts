import { execFileSync } from 'node:child_process';
import { mkdirSync, rmdirSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const LOCK = path.join(ROOT, 'dist', '.build-lock');

/** `tsc -b tsconfig.build.json`, one at a time: two builds writing dist/ at once would each read the other's half-written files. */
export async function buildDist(): Promise<void> {
  mkdirSync(path.dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 240_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${LOCK} held for 4 minutes: remove it if no build is running`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    execFileSync(path.join(ROOT, 'node_modules', '.bin', 'tsc'), ['-b', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: 'ignore',
    });
  } finally {
    rmdirSync(LOCK);
  }
}

/**
 * Operator commands answer at once on a built checkout: every npm script that runs compiled code
 * builds incrementally (tsc -b with a tsbuildinfo), so an up-to-date dist/ costs a timestamp check.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildDist } from './helpers/built';

const ROOT = path.join(__dirname, '..');
const scripts: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
const BUILD = 'tsc -b tsconfig.build.json';

test('every script that runs dist/ builds it incrementally first, never a full compile', () => {
  const runsDist = Object.entries(scripts).filter(([, command]) => /node dist\//.test(command));
  expect(runsDist.length).toBeGreaterThan(8);
  const full = runsDist.filter(
    ([, command]) => !(command.startsWith(`${BUILD} && node dist/`) || /--tsBuildInfoFile /.test(command)),
  );
  expect(full).toEqual([]);
  const options = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')).compilerOptions;
  expect(options).toMatchObject({ incremental: true, tsBuildInfoFile: expect.stringMatching(/^dist\//) });
});

test('npm run keys -- list takes 3 s or less once built', async () => {
  await buildDist();
  const started = Date.now();
  const run = spawnSync('npm', ['run', '-s', 'keys', '--', 'list'], { cwd: ROOT, encoding: 'utf8' });
  const seconds = (Date.now() - started) / 1000;
  expect(run.status).toBe(0);
  expect(seconds).toBeLessThanOrEqual(3);
}, 180_000);

/**
 * docs/guides/keeping-a-mirror.md's Python lines, run as written on a mirror from a full sync:
 * they give the check's digest and buckets. Needs python3 (Debian's python3-minimal is enough).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { reader } from '../../../helpers/consumers';
import { call } from '../../../helpers/http';
import { sharedTestService } from '../../../helpers/service';

const service = sharedTestService({ name: 'mirror_digest_guide', seed: true });
const guide = readFileSync(path.resolve(__dirname, '../../../../docs/guides/keeping-a-mirror.md'), 'utf8');
const snippet = /```python\n([\s\S]*?)```/.exec(guide)![1]!;

test("the guide's Python computes the check's digests from a mirror", async () => {
  let since = '';
  const jobs: Record<string, unknown> = {};
  for (;;) {
    const page = await call(`${service.url}/api/v1/jobs/changes?limit=500&since=${since}`, { headers: reader });
    for (const entry of page.body.data as Array<{ id: string; removed?: true }>)
      if (entry.removed) delete jobs[entry.id];
      else jobs[entry.id] = entry;
    since = page.body.meta.nextSince;
    if (!page.body.meta.hasMore) break;
  }
  const answer = await call(`${service.url}/api/v1/jobs/changes/digest?buckets=64`, { headers: reader });
  expect(answer.body.data.since).toBe(since);
  const program = `${snippet}\nimport sys\njobs = json.load(sys.stdin)\nprint(json.dumps(buckets(jobs, 64)))\n`;
  const run = spawnSync('python3', ['-c', program], { input: JSON.stringify(jobs), encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual(answer.body.data.buckets);
});

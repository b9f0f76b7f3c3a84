/**
 * The mirror check's two operations at their edges: the bucket counts and buckets they take, and a
 * bucket walked page by page (meta.nextAfter) giving exactly its listable jobs.
 */
import { reader } from '../../../helpers/consumers';
import { call, expectJsonError } from '../../../helpers/http';
import { bucketOf } from '../../../helpers/mirror-digest';
import { sharedTestService } from '../../../helpers/service';

const service = sharedTestService({ name: 'mirror_check_routes', seed: true });
const get = (path: string) => call(`${service.url}${path}`, { headers: reader });
const BUCKETS_RULE = 'buckets must be a power of two from 1 to 4096';

test.each(['3', '0', '8192', 'abc', '-2', '2.0'])(
  'buckets=%s is a 400 naming the rule, on both operations',
  async (n) => {
    expectJsonError(await get(`/api/v1/jobs/changes/digest?buckets=${n}`), 400, BUCKETS_RULE);
    expectJsonError(await get(`/api/v1/jobs/changes/digest/0?buckets=${n}`), 400, BUCKETS_RULE);
  },
);

test('a bucket past the count asked for, or not a number, is a 404; an unknown parameter a 400', async () => {
  const notFound = 'Bucket not found: buckets are numbered from 0 to buckets - 1';
  expectJsonError(await get('/api/v1/jobs/changes/digest/8?buckets=8'), 404, notFound);
  expectJsonError(await get('/api/v1/jobs/changes/digest/x'), 404, notFound);
  expect((await get('/api/v1/jobs/changes/digest?bucket=1')).status).toBe(400);
});

test('one answer: as many buckets as asked, the default 256, whose XOR is the digest', async () => {
  const { body } = await get('/api/v1/jobs/changes/digest');
  expect(body.data.buckets).toHaveLength(256);
  const all = (body.data.buckets as string[]).reduce((x, hex) => x ^ BigInt(`0x${hex}`), 0n);
  expect(all.toString(16).padStart(16, '0')).toBe(body.data.digest);
  expect((await get('/api/v1/jobs/changes/digest?buckets=4096')).body.data.buckets).toHaveLength(4096);
});

test("a bucket walked with nextAfter gives exactly its listable jobs, once each; another bucket's id as after is a 400", async () => {
  let after = '';
  const walked: string[] = [];
  for (let guard = 0; guard < 100; guard++) {
    const res = await get(`/api/v1/jobs/changes/digest/1?buckets=2&limit=3${after ? `&after=${after}` : ''}`);
    expect(res.status).toBe(200);
    walked.push(...(res.body.data as Array<{ id: string }>).map((job) => job.id));
    after = res.body.meta.nextAfter ?? '';
    if (!after) break;
  }
  const listed = (await get('/api/v1/jobs?status=active,open,paused,closed&limit=100')).body.data as Array<{
    id: string;
  }>;
  const want = listed.map((job) => job.id).filter((id) => bucketOf(id, 2) === 1);
  expect(walked.length).toBeGreaterThan(3);
  expect([...walked].sort()).toEqual([...want].sort());
  const other = listed.find((job) => bucketOf(job.id, 2) === 0)!.id;
  expectJsonError(
    await get(`/api/v1/jobs/changes/digest/1?buckets=2&after=${other}`),
    400,
    'after must be meta.nextAfter of the previous page of this bucket, exactly as it was given',
  );
});

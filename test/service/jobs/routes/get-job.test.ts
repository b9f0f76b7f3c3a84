import { JOB_FIELDS } from '../../../../domain/job';
import { call, expectJsonError } from '../../../helpers/http';
import { json, reader, writer, writer2 } from '../../../helpers/consumers';
import { sharedTestService } from '../../../helpers/service';

const service = sharedTestService({ name: 'get', seed: true });
const get = (id: string, headers: Record<string, string> = reader) =>
  call(`${service.url}/api/v1/jobs/${id}`, { headers });

async function idWhere(condition: string): Promise<string> {
  const [row] = await service.database.query<Array<{ h: string }>>(
    `select lower(hex(id)) as h from jobs where ${condition} order by created_at desc limit 1`,
  );
  const h = row!.h;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

describe('GET /api/v1/jobs/:id', () => {
  test('returns the job in the spec field order', async () => {
    const id = await idWhere(`status = 'active' and workplace is not null and deleted_at is null`);
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(Object.keys(res.body.data)).toEqual(JOB_FIELDS);
    expect(res.body.data.id).toBe(id);
  });

  test('leaves workplace out for an older posting that has none', async () => {
    const id = await idWhere(`status = 'open' and workplace is null and deleted_at is null`);
    const res = await get(id);
    expect(res.status).toBe(200);
    expect('workplace' in res.body.data).toBe(false);
    expect(Object.keys(res.body.data)).toEqual(JOB_FIELDS.filter((f) => f !== 'workplace'));
  });

  test('paused and closed jobs are fetchable by id', async () => {
    for (const status of ['paused', 'closed']) {
      const res = await get(await idWhere(`status = '${status}' and deleted_at is null`));
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe(status);
    }
  });

  test('salary and client name appear only when disclosed', async () => {
    const hidden = await get(
      await idWhere(
        `status in ('active','open') and deleted_at is null and not salary_disclosed and not client_name_disclosed`,
      ),
    );
    expect(hidden.body.data.salary).toBeNull();
    expect(hidden.body.data.clientName).toBeNull();
    const shown = await get(
      await idWhere(
        `status in ('active','open') and deleted_at is null and salary_disclosed and client_name_disclosed`,
      ),
    );
    expect(shown.body.data.salary).toEqual({ min: expect.any(Number), max: expect.any(Number), currency: 'USD' });
    expect(shown.body.data.salary.min).toBeLessThanOrEqual(shown.body.data.salary.max);
    expect(typeof shown.body.data.clientName).toBe('string');
  });

  test('timestamps are ISO 8601 UTC with milliseconds', async () => {
    const res = await get(
      await idWhere(
        `status = 'active' and deleted_at is null and updated_at is not null and submission_due_date is not null`,
      ),
    );
    for (const field of ['createdAt', 'updatedAt', 'submissionDueDate']) {
      expect(res.body.data[field]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });

  test.each([
    ['an unknown uuid', '0190f5d8-0000-7000-8000-000000000000'],
    ['not a uuid', 'not-a-uuid'],
    ['SQL-looking', encodeURIComponent("1' OR '1'='1")],
    ['a very long id', 'a'.repeat(5000)],
  ])('404 Job not found for %s', async (_label, id) => {
    const res = await get(id);
    expectJsonError(res, 404, 'Job not found');
  });

  test('404 for a soft-deleted job', async () => {
    const res = await get(await idWhere(`deleted_at is not null`));
    expectJsonError(res, 404, 'Job not found');
  });

  test('upper-case ids find the same job', async () => {
    const id = await idWhere(`status = 'active' and deleted_at is null`);
    expect((await get(id.toUpperCase())).body.data.id).toBe(id);
  });
});

describe('draft privacy', () => {
  let draftId: string;

  beforeAll(async () => {
    const res = await call(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json },
      body: JSON.stringify({
        title: 'Draft role',
        department: 'Engineering',
        type: 'contract',
        description: 'Not yet public',
      }),
    });
    expect(res.status).toBe(201);
    draftId = res.body.data.id;
  });

  test('the creating consumer sees its draft by id', async () => {
    const res = await get(draftId, writer);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('draft');
  });

  test('another consumer, or a request with no consumer, gets 404', async () => {
    expect(await get(draftId, writer2)).toMatchObject({ status: 404, body: { error: 'Job not found' } });
    expect(await get(draftId, reader)).toMatchObject({ status: 404, body: { error: 'Job not found' } });
    expect(await get(draftId, {})).toMatchObject({ status: 404, body: { error: 'Job not found' } });
  });

  test('drafts never appear in listings, even for their creator', async () => {
    const res = await call(`${service.url}/api/v1/jobs?limit=100&status=active,open,paused,closed`, {
      headers: writer,
    });
    expect(res.body.data.map((j: { id: string }) => j.id)).not.toContain(draftId);
  });

  test('seeded drafts belong to the demo writers', async () => {
    const seededDraft = await idWhere(
      `status = 'draft' and deleted_at is null and created_by_consumer = '${writer['X-Consumer-ID']}'`,
    );
    expect((await get(seededDraft, writer)).status).toBe(200);
    expect((await get(seededDraft, writer2)).status).toBe(404);
  });
});

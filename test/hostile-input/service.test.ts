import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import { call, expectJsonError } from '../helpers/http';
import { json, reader, writer } from '../helpers/consumers';
import { sharedTestService } from '../helpers/service';
import { jobRowCount } from '../helpers/database';
import { ACCEPTED_DUE_DATES, MINIMAL_JOB } from '../helpers/job-bodies';

/**
 * Hostile input at the service: bodies, codings, fields and query arrays a client can send, each answered with
 * a JSON error that names the problem and stores nothing. Each case marked "repro" was answered
 * 500, or accepted, before the input checks it pins. The same inputs through the gateway are
 * gateway.test.ts; slow and broken clients on the wire are slow-and-broken-clients.test.ts.
 */

const service = sharedTestService({ name: 'hostile' });

const valid = MINIMAL_JOB;

const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
  call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json, ...headers }, body });

/** Sends a request that must be refused, and checks it stored nothing. */
async function refused(body: string | Uint8Array, headers: Record<string, string> = {}) {
  const before = await jobRowCount(service.database);
  const res = await post(body, headers);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await jobRowCount(service.database)).toBe(before);
  return res;
}

/** A create whose only change from `valid` is `patch`; must be a 400 naming `field`. */
async function invalidField(patch: Record<string, unknown>, field: string) {
  const res = await refused(JSON.stringify({ ...valid, ...patch }));
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('Validation failed');
  expect(res.body.details).toContainEqual({ field, message: expect.any(String) });
  return res.body.details.find((detail: { field: string }) => detail.field === field).message as string;
}

const created = async (patch: Record<string, unknown>) => {
  const res = await post(JSON.stringify({ ...valid, ...patch }));
  expect(res.status).toBe(201);
  return res.body.data;
};

describe('Content-Encoding', () => {
  const curlBody = '{"title":"a","department":"d","type":"contract","description":"x"}';

  test('repro: br on a body that is not compressed is a 415 naming what is accepted', async () => {
    const res = await refused(curlBody, { 'Content-Encoding': 'br' });
    expectJsonError(res, 415, 'Unsupported Content-Encoding "br": send the body uncompressed or gzip-compressed');
    expect(res.headers.get('accept-encoding')).toBe('gzip');
  });

  test.each([
    ['br (really compressed)', 'br', brotliCompressSync(curlBody)],
    ['deflate (really compressed)', 'deflate', deflateSync(curlBody)],
    ['deflate on plain text', 'deflate', curlBody],
    ['an unknown coding', 'x', curlBody],
    ['two stacked codings', 'gzip, gzip', gzipSync(gzipSync(curlBody))],
    ['compress', 'compress', curlBody],
  ])('%s: 415', async (_label, encoding, body) => {
    const res = await refused(body, { 'Content-Encoding': encoding });
    expect(res.status).toBe(415);
    expect(res.body.error).toMatch(/^Unsupported Content-Encoding/);
  });

  test('gzip is decoded, in any letter case, and x-gzip is gzip (RFC 9110 §8.4.1.3)', async () => {
    for (const encoding of ['gzip', 'GZip', 'x-gzip', 'identity, gzip']) {
      const res = await post(gzipSync(JSON.stringify({ ...valid, title: `Gzipped ${encoding}` })), {
        'Content-Encoding': encoding,
      });
      expect(res.status).toBe(201);
      expect(res.body.data.title).toBe(`Gzipped ${encoding}`);
    }
  });

  test('identity (or an empty header) means no coding', async () => {
    expect((await post(JSON.stringify(valid), { 'Content-Encoding': 'identity' })).status).toBe(201);
    expect((await post(JSON.stringify(valid), { 'Content-Encoding': '' })).status).toBe(201);
  });

  test.each([
    ['plain text', curlBody],
    ['a truncated gzip stream', gzipSync(curlBody).subarray(0, 20)],
    ['gzip followed by junk', Buffer.concat([gzipSync(curlBody), Buffer.from('junk')])],
  ])('a body that claims gzip but is %s: 400', async (_label, body) => {
    const res = await refused(body, { 'Content-Encoding': 'gzip' });
    expectJsonError(res, 400, 'Request body is not valid gzip data, although Content-Encoding says gzip');
  });

  test('the 100 KB limit applies after decompression', async () => {
    const large = gzipSync(JSON.stringify({ ...valid, description: 'x'.repeat(101 * 1024) }));
    expect(large.length).toBeLessThan(2048);
    const res = await refused(large, { 'Content-Encoding': 'gzip' });
    expectJsonError(res, 413, 'Request body too large: the limit is 100 KB');
  });

  test('a zip bomb (95 KB that inflates to ~95 MB) is a 413, and the service carries on', async () => {
    const bomb = gzipSync(Buffer.alloc(95 * 1024 * 1024, 0x20), { level: 9 });
    expect(bomb.length).toBeLessThan(100 * 1024);
    const res = await refused(bomb, { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect((await post(JSON.stringify(valid))).status).toBe(201);
  });

  test('a compressed body over 100 KB on the wire is a 413 too', async () => {
    const random = Buffer.from(Array.from({ length: 110 * 1024 }, (_, i) => (i * 7919) % 251));
    const res = await refused(random, { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(413);
  });
});

describe('charset and bytes', () => {
  test.each(['latin1', 'utf-16', 'iso-8859-1'])('charset=%s is a 415: JSON is UTF-8', async (charset) => {
    const res = await refused(JSON.stringify(valid), { 'Content-Type': `application/json; charset=${charset}` });
    expectJsonError(res, 415, 'Unsupported charset: JSON bodies must be UTF-8');
  });

  test('bytes that are not UTF-8 are a 400, not replacement characters', async () => {
    const body = Buffer.concat([
      Buffer.from('{"title":"caf'),
      Buffer.from([0xe9]),
      Buffer.from(`","department":"d","type":"contract","description":"x"}`),
    ]);
    const res = await refused(body);
    expectJsonError(res, 400, 'Request body is not valid UTF-8');
  });

  test('a UTF-8 byte order mark is ignored', async () => {
    const res = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(valid))]));
    expect(res.status).toBe(201);
  });

  test('an empty body is a 400 that asks for an object', async () => {
    const res = await refused('');
    expectJsonError(res, 400, 'Request body is empty: send a JSON object');
  });

  test('deeply nested JSON is an ordinary 400', async () => {
    const res = await refused(`{"requirements":${'['.repeat(40000)}${']'.repeat(40000)}}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Validation failed');
  });
});

describe('duplicate keys', () => {
  test('repro: a repeated top-level key is a 400 naming it (not "last one wins")', async () => {
    const res = await refused(
      '{"title":"Safe title","title":"Other title","department":"d","type":"contract","description":"x"}',
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Validation failed',
      details: [{ field: 'title', message: 'title appears more than once; send each field once' }],
    });
  });

  test('keys are compared decoded, and nested keys are named by their path', async () => {
    const escaped = await refused(
      '{"title":"a","t\\u0069tle":"b","department":"d","type":"contract","description":"x"}',
    );
    expect(escaped.body.details[0].field).toBe('title');
    const nested = await refused(
      `{"title":"a","department":"d","type":"contract","description":"x","salary":{"min":1,"currency":"USD","currency":"EUR"}}`,
    );
    expect(nested.body.details[0].field).toBe('salary.currency');
    const inArray = await refused('{"title":"a","requirements":["x",{"k":1,"k":2}]}');
    expect(inArray.body.details[0].field).toBe('requirements.1.k');
  });

  test('the same key in different objects, and braces or quotes inside strings, are not duplicates', async () => {
    const body = {
      ...valid,
      title: 'Quotes " and braces } { ] [ , : in a title',
      description: '{"title": "not a key"}',
      salary: { min: 1, max: 2, currency: 'USD' },
    };
    expect((await post(JSON.stringify(body))).status).toBe(201);
  });
});

describe('submissionDueDate', () => {
  test.each([
    ['repro: year 10000 once converted to UTC', '9999-12-31T23:59:59-01:00', /from 1970-01-01 to 9999-12-31 in UTC/],
    ['repro: an impossible date-time', '2026-02-31T10:00:00Z', /not a real calendar date/],
    ['repro: year 0', '0000-01-01', /from 1970-01-01 to 9999-12-31 in UTC/],
    ['April 31st with an offset', '2026-04-31T10:00:00+02:00', /not a real calendar date/],
    ['29 February in a common year', '2027-02-29', /not a real calendar date/],
    ['29 February 2100 (not a leap year)', '2100-02-29T00:00:00Z', /not a real calendar date/],
    ['hour 24', '2026-06-01T24:00:00Z', /not a real calendar date/],
    ['second 60', '2026-06-30T23:59:60Z', /not a real calendar date/],
    ['month 13', '2026-13-01', /not a real calendar date/],
    ['an offset of 24 hours', '2026-06-01T10:00:00+24:00', /not a real calendar date/],
    ['before 1970 in UTC', '1970-01-01T00:30:00+01:00', /from 1970-01-01/],
    ['year 0099 (Date would read it as 1999)', '0099-06-01', /from 1970-01-01/],
    ['a five-digit year', '10000-01-01', /ISO 8601/],
  ])('%s (%s) is a 400 naming the field', async (_label, value, message) => {
    expect(await invalidField({ submissionDueDate: value }, 'submissionDueDate')).toMatch(message);
  });

  test.each(ACCEPTED_DUE_DATES)('%s (%s) is stored as %s', async (_label, value, stored) => {
    expect((await created({ submissionDueDate: value })).submissionDueDate).toBe(stored);
  });
});

describe('control characters', () => {
  test.each([
    ['repro: NUL in the title', { title: 'Data\u0000Engineer' }, 'title'],
    ['a line break inside the title', { title: 'Data\nEngineer' }, 'title'],
    ['ESC in the department', { department: 'Eng\u001b[31m' }, 'department'],
    ['DEL in the location', { location: 'Austin\u007f' }, 'location'],
    ['a C1 control (NEL) in the posting id', { postingId: 'A\u0085B' }, 'postingId'],
    ['a line separator in a requirement', { requirements: ['SQL\u2028Python'] }, 'requirements.0'],
    ['BEL in the description', { description: 'Ring\u0007' }, 'description'],
    ['NUL in the description', { description: 'a\u0000b' }, 'description'],
    ['a lone surrogate in the title', { title: 'Broken \ud800 text' }, 'title'],
  ])('%s is a 400', async (_label, patch, field) => {
    await invalidField(patch, field);
  });

  test('the description keeps tabs and line breaks; edges of single-line fields are trimmed', async () => {
    const job = await created({ title: 'Data Engineer\r\n', description: 'Line one\r\nLine two\n\tIndented' });
    expect(job.title).toBe('Data Engineer');
    expect(job.description).toBe('Line one\r\nLine two\n\tIndented');
  });
});

describe('salary.currency', () => {
  test.each([
    ['repro: a made-up code', 'ZZQ'],
    ['gold', 'XAU'],
    ['the testing code', 'XTS'],
    ['"no currency"', 'XXX'],
    ['a withdrawn code (the kuna, 2023)', 'HRK'],
    ['a fund code', 'USN'],
    ['lower case', 'eur'],
  ])('%s (%s) is a 400', async (_label, currency) => {
    expect(await invalidField({ salary: { min: 1, currency } }, 'salary.currency')).toMatch(/ISO 4217/);
  });

  test.each(['USD', 'EUR', 'JPY', 'XOF', 'XCG', 'ZWG'])('%s is accepted', async (currency) => {
    expect((await created({ salary: { min: 1, currency } })).salary).toEqual({ min: 1, max: null, currency });
  });
});

describe('query arrays: a list filter repeated is its comma list, bounded as that list is', () => {
  const list = (query: string) => call(`${service.url}/api/v1/jobs?${query}`, { headers: reader });
  const codes = (n: number) =>
    Array.from({ length: n }, (_, i) => String.fromCharCode(65 + (i % 26), 65 + Math.floor(i / 26)));

  test('101 distinct codes repeated are refused as 101 in one comma list are', async () => {
    const message = 'state takes at most 100 codes';
    expectJsonError(
      await list(
        codes(101)
          .map((code) => `state=${code}`)
          .join('&'),
      ),
      400,
      message,
    );
    expectJsonError(await list(`state=${codes(101).join(',')}`), 400, message);
    expect(
      (
        await list(
          codes(100)
            .map((code) => `state=${code}`)
            .join('&'),
        )
      ).status,
    ).toBe(200);
  });

  test('a value repeated 500 times counts once', async () => {
    const many = await list(`${'status=open&'.repeat(500)}limit=5`);
    const once = await list('status=open&limit=5');
    expect(many.status).toBe(200);
    expect(many.body).toEqual(once.body);
  });

  test('an empty or spaced value among the repeats is the 400 it is in a comma list', async () => {
    expectJsonError(
      await list('status=open&status='),
      400,
      'status must be one of active, open, paused, closed (or a comma-separated list of them); got ""',
    );
    expectJsonError(
      await list('status=open&status=+paused'),
      400,
      'status takes its values without spaces around them; got " paused"',
    );
  });

  test('PHP and Rails spellings (state[]=CA) are unknown parameters, not arrays', async () => {
    const res = await list('state[]=CA&state[]=TX');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Unknown query parameter "state\[\]"/);
  });

  test.each(['limit=5&limit=5', 'page=1&page=1', 'department=x&department=x', 'cursor=&cursor='])(
    'a scalar repeated, even with one value, is a 400: %s',
    async (query) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/was given more than once; send one value/);
    },
  );
});

/**
 * Real answers of every operation, recorded through the gateways (test/helpers/recorded-answers.ts),
 * replayed through the response check that reads only docs/openapi.json: bodies and headers.
 */
import { readFileSync } from 'node:fs';
import { OPENAPI_PATH } from '../../../scripts/openapi';
import { templateOf, validateResponse } from '../../helpers/openapi';
import { RECORDED_ANSWERS_PATH, type RecordedAnswer } from '../../helpers/recorded-answers';

const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
const answers = JSON.parse(readFileSync(RECORDED_ANSWERS_PATH, 'utf8')) as RecordedAnswer[];
const named = (answer: RecordedAnswer) => `${answer.method} ${templateOf(answer.url)} ${answer.status}`;

function replay(answer: RecordedAnswer): void {
  const contentType = answer.headers['content-type'] as string | undefined;
  const body = contentType?.includes('json') && answer.text !== '' ? JSON.parse(answer.text) : undefined;
  validateResponse({
    method: answer.method,
    url: answer.url,
    status: answer.status,
    contentType,
    body,
    text: answer.text,
    headers: answer.headers,
    direct: false,
  });
}

describe('recorded real answers, replayed through docs/openapi.json', () => {
  test.each(answers.map((answer) => [named(answer), answer] as const))(
    '%s is what the document describes, headers included',
    (_name, answer) => {
      expect(() => replay(answer)).not.toThrow();
    },
  );

  test('every operation of the document, HEAD included, has a recorded success', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== 'parameters')
        .map((method) => `${method} ${path}`),
    );
    const succeeded = new Set(
      answers.filter((a) => a.status < 300).map((a) => `${a.method.toLowerCase()} ${templateOf(a.url)}`),
    );
    expect(operations.filter((operation) => !succeeded.has(operation))).toEqual([]);
  });

  test('they came through a gateway: its request ids on all, its rate limits on every success', () => {
    expect(answers.filter((a) => a.headers['x-kong-request-id'] === undefined).map(named)).toEqual([]);
    expect(answers.filter((a) => a.status < 400 && a.headers['ratelimit-limit'] === undefined).map(named)).toEqual([]);
  });

  test('an undeclared header, or a declared one off its schema, is refused', () => {
    const list = answers.find((a) => named(a) === 'GET /api/v1/jobs 200')!;
    expect(() => replay({ ...list, headers: { ...list.headers, 'x-powered-by': 'Koa' } })).toThrow(
      /x-powered-by is not declared/,
    );
    expect(() => replay({ ...list, headers: { ...list.headers, 'ratelimit-limit': 'many' } })).toThrow(
      /RateLimit-Limit.*does not match/,
    );
    expect(() => replay({ ...list, headers: { ...list.headers, etag: 'abc' } })).toThrow(/ETag.*does not match/);
  });
});

/**
 * Real answers, recorded from the e2e suites' traffic through the gateways and replayed through the
 * response check by test/service/api/recorded-answers.test.ts. To record them again:
 *   RECORD_ANSWERS=/tmp/answers npx jest test/e2e test/service/webhooks/routes/gateway.test.ts
 *   node -r ./test/helpers/register-ts.js test/helpers/recorded-answers.ts /tmp/answers
 * keeps the shortest answer of each operation and status in test/fixtures/recorded-answers.json.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SECRET_EXAMPLE } from '../../service/webhooks/contract';
import { templateOf } from './openapi';

export interface RecordedAnswer {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export const RECORDED_ANSWERS_PATH = path.resolve(__dirname, '../fixtures/recorded-answers.json');

// A subscription's signing secret is shown once, in the answer that creates or rotates it: never kept as it was.
const scrub = (text: string) => text.replace(/whsec_[A-Za-z0-9+/=]+/g, SECRET_EXAMPLE);

/** Writes an answer to RECORD_ANSWERS's directory, when it is set. */
export function recordAnswer(baseUrl: string, answer: Omit<RecordedAnswer, 'url'> & { url: string }): void {
  const dir = process.env.RECORD_ANSWERS;
  if (!dir || !new URL(answer.url, baseUrl).pathname.startsWith('/api/v1')) return;
  mkdirSync(dir, { recursive: true });
  const { method, url, status, headers, text } = answer;
  appendFileSync(
    path.join(dir, `${process.pid}.ndjson`),
    `${scrub(JSON.stringify({ method, url, status, headers, text }))}\n`,
  );
}

// node -r ./test/helpers/register-ts.js test/helpers/recorded-answers.ts <dir>: the shortest answer of each operation and status.
if (require.main === module) {
  const dir = process.argv[2]!;
  const kept = new Map<string, RecordedAnswer>();
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean)) {
      const answer = JSON.parse(line) as RecordedAnswer;
      const template = templateOf(answer.url);
      if (template === undefined) continue;
      const key = `${answer.method.toLowerCase()} ${template} ${answer.status}`;
      // The document's own answer is docs/openapi.json again: its recording keeps the headers and the document's first field.
      if (template === '/api/v1/openapi.json' && answer.text !== '')
        answer.text = JSON.stringify({ openapi: JSON.parse(answer.text).openapi });
      const before = kept.get(key);
      if (!before || answer.text.length < before.text.length) kept.set(key, answer);
    }
  }
  const sorted = [...kept.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, answer]) => answer);
  writeFileSync(RECORDED_ANSWERS_PATH, `${JSON.stringify(sorted, null, 1)}\n`);
  console.log(`${sorted.length} answers in ${path.relative(process.cwd(), RECORDED_ANSWERS_PATH)}`);
}

/**
 * The e2e suites' raw HTTP client (test/local-gateway/support.ts's send) with every answer
 * checked against docs/openapi.json, headers included, as call() checks the service suites' answers.
 * With RECORD_ANSWERS=<dir>, each checked answer is also written there (test/helpers/recorded-answers.ts).
 */
import { queryString, send as rawSend } from '../local-gateway/support';
import { validateResponse } from './openapi';
import { recordAnswer } from './recorded-answers';

export const send: typeof rawSend = async (baseUrl, opts) => {
  const res = await rawSend(baseUrl, opts);
  const answer = {
    method: opts.method ?? 'GET',
    url: opts.path + queryString(opts.query),
    status: res.status,
    contentType: res.headers['content-type'],
    body: res.json,
    text: res.text,
    headers: res.headers,
  };
  validateResponse(answer);
  recordAnswer(baseUrl, answer);
  return res;
};

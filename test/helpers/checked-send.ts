/**
 * The e2e suites' raw HTTP client (test/local-gateway/support.ts's send) with every answer
 * checked against docs/openapi.json, as call() checks the service suites' answers.
 */
import { queryString, send as rawSend } from '../local-gateway/support';
import { validateResponse } from './openapi';

export const send: typeof rawSend = async (baseUrl, opts) => {
  const res = await rawSend(baseUrl, opts);
  const contentType = res.headers['content-type'];
  validateResponse({
    method: opts.method ?? 'GET',
    url: opts.path + queryString(opts.query),
    status: res.status,
    contentType,
    body: res.json,
    text: res.text,
  });
  return res;
};

/**
 * Checks a response against the committed OpenAPI document (docs/openapi.json), the contract
 * partners are given. test/helpers/http.ts's call() and the e2e suites' send() run it on every
 * response they receive, so a body or header the document does not describe fails the test that got it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { GATEWAY_HEADERS, RATE_LIMIT_HEADERS } from '../../service/headers';
import type { Parsed } from './parsed';

const DOCUMENT_PATH = path.resolve(__dirname, '../../docs/openapi.json');

type Document = { paths: Record<string, Record<string, Parsed>>; components: Parsed };

let loaded: { document: Document; ajv: Ajv2020; matchers: Array<{ template: string; pattern: RegExp }> } | undefined;

function load() {
  if (loaded) return loaded;
  const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as Document;
  // strict: false because the document is OpenAPI, not only JSON Schema (paths, openapi, ...).
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi.json');
  // Literal paths first (/jobs/changes before /jobs/{id}), as the service's router matches them.
  const matchers = Object.keys(document.paths)
    .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    }));
  loaded = { document, ajv, matchers };
  return loaded;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export interface CheckedResponse {
  method: string;
  url: string;
  status: number;
  contentType: string | null | undefined;
  body: unknown;
  text: string;
  /** The answer's headers, lower-case names; when given, each must be declared with a value its schema takes, and each required one sent. */
  headers?: Record<string, string | string[] | undefined>;
  /** Straight from the service, so the headers the gateway adds are not required of it; unset: when it has no gateway id. */
  direct?: boolean;
}

const GATEWAY_ADDS = new Set(Object.keys({ ...GATEWAY_HEADERS, ...RATE_LIMIT_HEADERS }));

// What any HTTP answer may carry and no API declares: framing, the date, the connection.
const TRANSPORT = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'date',
  'connection',
  'keep-alive',
  'vary',
  'server',
  'via',
]);

function checkHeaders(
  where: string,
  declared: Record<string, Parsed> | undefined,
  response: CheckedResponse & { headers: NonNullable<CheckedResponse['headers']> },
  at: string,
) {
  const { ajv, document } = load();
  const sent = response.headers;
  for (const [name, spec] of Object.entries(declared ?? {})) {
    if (spec.required !== true || sent[name.toLowerCase()] !== undefined) continue;
    if ((response.direct ?? sent['x-kong-request-id'] === undefined) && GATEWAY_ADDS.has(name)) continue;
    throw new Error(`${where}: header ${name} is required by docs/openapi.json but was not sent (${at})`);
  }
  const byName = new Map(Object.keys(declared ?? {}).map((name) => [name.toLowerCase(), name]));
  for (const [lower, raw] of Object.entries(sent)) {
    if (TRANSPORT.has(lower) || raw === undefined) continue;
    const name = byName.get(lower);
    if (name === undefined) throw new Error(`${where}: header ${lower} is not declared in docs/openapi.json (${at})`);
    const spec = declared![name];
    const pointer = spec.$ref ? (spec.$ref as string) : `#/${at}/${pointer_(name)}`;
    const schema = (
      spec.$ref
        ? (spec.$ref as string)
            .slice(2)
            .split('/')
            .reduce((node: Parsed, part) => node[part], document)
        : spec
    ).schema;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const typed = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    const validate = ajv.getSchema(`openapi.json${pointer}/schema`)!;
    if (!validate(typed))
      throw new Error(
        `${where}: header ${name}: ${JSON.stringify(value)} does not match docs/openapi.json: ${ajv.errorsText(validate.errors)}`,
      );
  }
}
const pointer_ = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** The document's path template a URL's path falls under (literal paths first), if any. */
export function templateOf(url: string): string | undefined {
  const pathname = new URL(url, 'http://x').pathname;
  return load().matchers.find((m) => m.pattern.test(pathname))?.template;
}

/** Throws when the response is not one the document describes. */
export function validateResponse(response: CheckedResponse): void {
  const { document, ajv, matchers } = load();
  const method = response.method.toUpperCase();
  const pathname = new URL(response.url, 'http://x').pathname;
  // Only the documented API: health probes and the like are not part of it.
  if (!pathname.startsWith('/api/v1')) return;
  const where = `${method} ${pathname} -> ${response.status}`;
  if (method === 'HEAD' && response.text !== '') throw new Error(`${where}: a HEAD response has a body`);
  const match = matchers.find((m) => m.pattern.test(pathname));
  const operation = match ? document.paths[match.template]?.[method.toLowerCase()] : undefined;
  let schemaPointer: string;
  if (!match || !operation) {
    // Unknown paths (404) and methods the document does not list (405) still answer the error shape.
    if (response.status < 400) throw new Error(`${where}: no operation in docs/openapi.json answers this`);
    if (method === 'HEAD') return;
    schemaPointer = '#/components/schemas/Error';
  } else {
    const responses = operation.responses as Record<string, Parsed>;
    const key =
      String(response.status) in responses ? String(response.status) : response.status >= 400 ? 'default' : undefined;
    if (!key || !(key in responses)) throw new Error(`${where}: status not documented in docs/openapi.json`);
    let described = responses[key];
    let at = pointer('paths', match.template, method.toLowerCase(), 'responses', key);
    if (described.$ref) {
      at = (described.$ref as string).slice(2);
      described = at.split('/').reduce((node: Parsed, part) => node[part], document);
    }
    if (response.headers)
      checkHeaders(where, described.headers, { ...response, headers: response.headers }, `${at}/headers`);
    if (method === 'HEAD') return;
    if (!described.content) {
      if (response.text !== '') throw new Error(`${where}: documented without a body, but one was sent`);
      return;
    }
    schemaPointer = `#/${at}/content/${pointer('application/json')}/schema`;
  }
  if (!(response.contentType ?? '').includes('application/json')) {
    throw new Error(`${where}: Content-Type is ${response.contentType}, the document says application/json`);
  }
  const validate = ajv.getSchema(`openapi.json${schemaPointer}`);
  if (!validate) throw new Error(`${where}: no schema at ${schemaPointer}`);
  if (!validate(response.body)) {
    throw new Error(
      `${where}: body does not match docs/openapi.json (${schemaPointer}): ${ajv.errorsText(validate.errors)}\n${response.text.slice(0, 500)}`,
    );
  }
}

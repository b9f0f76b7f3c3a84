/**
 * Checks a response against the committed OpenAPI document (docs/openapi.json), the contract
 * partners are given. test/helpers/http.ts's call() and the e2e suites' send() run it on every
 * response they receive, so a body the document does not describe fails the test that got it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const DOCUMENT_PATH = path.resolve(__dirname, '../../docs/openapi.json');

/* eslint-disable @typescript-eslint/no-explicit-any */
type Document = { paths: Record<string, Record<string, any>>; components: any };

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
}

/** Throws when the response is not one the document describes. */
export function validateResponse(response: CheckedResponse): void {
  const { document, ajv, matchers } = load();
  const method = response.method.toUpperCase();
  const pathname = new URL(response.url, 'http://x').pathname;
  // Only the documented API: health probes and the like are not part of it.
  if (!pathname.startsWith('/api/v1')) return;
  const where = `${method} ${pathname} -> ${response.status}`;
  if (method === 'HEAD') {
    if (response.text !== '') throw new Error(`${where}: a HEAD response has a body`);
    return;
  }
  const match = matchers.find((m) => m.pattern.test(pathname));
  const operation = match ? document.paths[match.template]?.[method.toLowerCase()] : undefined;
  let schemaPointer: string;
  if (!match || !operation) {
    // Unknown paths (404) and methods the document does not list (405) still answer the error shape.
    if (response.status < 400) throw new Error(`${where}: no operation in docs/openapi.json answers this`);
    schemaPointer = '#/components/schemas/Error';
  } else {
    const responses = operation.responses as Record<string, any>;
    const key = String(response.status) in responses ? String(response.status) : response.status >= 400 ? 'default' : undefined;
    if (!key || !(key in responses)) throw new Error(`${where}: status not documented in docs/openapi.json`);
    let described = responses[key];
    let at = pointer('paths', match.template, method.toLowerCase(), 'responses', key);
    if (described.$ref) {
      at = (described.$ref as string).slice(2);
      described = at.split('/').reduce((node: any, part) => node[part], document);
    }
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
    throw new Error(`${where}: body does not match docs/openapi.json (${schemaPointer}): ${ajv.errorsText(validate.errors)}\n${response.text.slice(0, 500)}`);
  }
}

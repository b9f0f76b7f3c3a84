import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { apiDocument } from '../service/api/routes';
import { loadConfig } from '../service/config';

/** docs/openapi.json, from both scripts/ (ts-jest) and dist/scripts/ (compiled). */
export const OPENAPI_PATH = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../docs/openapi.json' : '../docs/openapi.json',
);

/** The document as committed: the default settings but PUBLIC_URL (unset: a placeholder server), two-space JSON and a final newline. */
export function renderOpenApi(publicUrl = process.env.PUBLIC_URL): string {
  const { webhooks, publicUrl: url } = loadConfig(publicUrl ? { PUBLIC_URL: publicUrl } : {});
  return `${JSON.stringify(apiDocument({ webhooks, publicUrl: url }), null, 2)}\n`;
}

// npm run openapi: writes the document; `-- --check` only says whether the committed one is current.
if (require.main === module) {
  const text = renderOpenApi();
  if (process.argv.includes('--check')) {
    const current = readFileSync(OPENAPI_PATH, 'utf8') === text;
    console.log(current ? 'docs/openapi.json is up to date' : 'docs/openapi.json is stale: run npm run openapi');
    process.exit(current ? 0 : 1);
  }
  writeFileSync(OPENAPI_PATH, text);
  console.log(`Wrote ${path.relative(process.cwd(), OPENAPI_PATH) || OPENAPI_PATH}`);
}

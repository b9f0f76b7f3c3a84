/**
 * docs/openapi.json through a partner's linters, with the project's rule files (.spectral.yaml,
 * redocly.yaml): Spectral's OAS and OWASP API Security rulesets, and Redocly's recommended rules.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Document, Spectral, type ISpectralDiagnostic, type RulesetDefinition } from '@stoplight/spectral-core';
import * as functions from '@stoplight/spectral-functions';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { parse } from 'yaml';
import { OPENAPI_PATH } from '../../../scripts/openapi';
import type { Parsed } from '../../helpers/parsed';

const ROOT = path.resolve(__dirname, '../../..');

/** .spectral.yaml as the CLI reads it: the named rulesets and core functions, resolved here. */
function spectralRuleset(): RulesetDefinition {
  const file = parse(readFileSync(path.join(ROOT, '.spectral.yaml'), 'utf8'));
  const named: Record<string, unknown> = { 'spectral:oas': oas, '@stoplight/spectral-owasp-ruleset': owasp };
  const rules = Object.fromEntries(
    Object.entries<Parsed>(file.rules).map(([name, rule]) => [
      name,
      typeof rule === 'object'
        ? { ...rule, then: { ...rule.then, function: (functions as Record<string, unknown>)[rule.then.function] } }
        : rule,
    ]),
  );
  return {
    ...file,
    extends: file.extends.map((name: string) => [named[name], 'recommended']),
    rules,
  } as RulesetDefinition;
}

/** Spectral's severity of an error. */
const ERROR: ISpectralDiagnostic['severity'] = 0;

async function spectral(text: string) {
  const linter = new Spectral();
  linter.setRuleset(spectralRuleset());
  const results = await linter.run(new Document(text, Json, 'openapi.json'));
  return results
    .filter((r) => r.severity === ERROR)
    .map((r) => `${String(r.code)} at ${r.path.join('.')}: ${r.message}`)
    .sort();
}

describe('docs/openapi.json as a partner lints it', () => {
  test('Spectral (spectral:oas and the OWASP API Security ruleset, as .spectral.yaml sets them): no error', async () => {
    expect(await spectral(readFileSync(OPENAPI_PATH, 'utf8'))).toEqual([]);
  });

  test("the rules that replace OWASP's find an unbounded request string and array, and an answer without rate limits", async () => {
    // The create operation alone, with a bound and a header taken out: a few hundred milliseconds instead of seconds.
    const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const create = document.paths['/api/v1/jobs'].post;
    const schema = create.requestBody.content['application/json'].schema;
    delete schema.properties.title.maxLength;
    delete schema.properties.requirements.maxItems;
    create.responses['201'].headers = { Location: create.responses['201'].headers.Location };
    expect(
      await spectral(JSON.stringify({ ...document, paths: { '/api/v1/jobs': { post: create } }, webhooks: {} })),
    ).toEqual([
      expect.stringMatching(/^rate-limit-headers at paths\.\/api\/v1\/jobs\.post\.responses\.201/),
      expect.stringMatching(/^request-array-limit at paths\.\/api\/v1\/jobs\.post\.requestBody.*requirements/),
      expect.stringMatching(/^request-string-limit at paths\.\/api\/v1\/jobs\.post\.requestBody.*title/),
    ]);
  });

  test('Redocly (recommended, as redocly.yaml sets it): no error', () => {
    // @redocly/openapi-core is an ES module: run in its own node, as its CLI would be.
    const script = `
      import { lint, loadConfig } from '@redocly/openapi-core';
      const config = await loadConfig({ configPath: 'redocly.yaml' });
      const problems = await lint({ ref: ${JSON.stringify(OPENAPI_PATH)}, config });
      console.log(JSON.stringify(problems.filter((p) => p.severity === 'error').map((p) => p.ruleId + ' at ' + p.location[0]?.pointer + ': ' + p.message)));`;
    const errors = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }),
    );
    expect(errors).toEqual([]);
  });
});

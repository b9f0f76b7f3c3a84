/**
 * canonicalJson (service/canonical-json.ts), what makes two Idempotency-Key retries "the same
 * request": JSON.stringify's text with keys sorted at every level, arrays kept in order.
 */
import { canonicalJson } from '../../service/canonical-json';

test.each([
  [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
  [{ title: 'x', salary: { max: 2, min: 1, currency: 'USD' }, requirements: ['SQL', 'Go'] }, '{"requirements":["SQL","Go"],"salary":{"currency":"USD","max":2,"min":1},"title":"x"}'],
  [[3, [2, 1], { z: null, y: [] }], '[3,[2,1],{"y":[],"z":null}]'],
  [{}, '{}'],
  [[], '[]'],
  [{ 'é': 1, Z: 2, a: 3, '"q"': 4 }, '{"\\"q\\"":4,"Z":2,"a":3,"é":1}'],
  ['text "quoted"', '"text \\"quoted\\""'],
  [1.5, '1.5'],
])('%j is %s', (value, text) => {
  expect(canonicalJson(value)).toBe(text);
  expect(JSON.parse(canonicalJson(value))).toEqual(value);
});

test('key order and nesting do not change the text', () => {
  expect(canonicalJson({ a: [{ y: 1, x: 2 }], b: { d: 1, c: 2 } })).toBe(canonicalJson({ b: { c: 2, d: 1 }, a: [{ x: 2, y: 1 }] }));
});

test('arrays nested 50,000 deep (a 100 KB body) do not overflow the stack', () => {
  const deep = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
  expect(canonicalJson(deep)).toBe(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
});

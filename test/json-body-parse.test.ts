/**
 * The body reader's JSON step (service/middleware/json-body.ts parseJsonObject, with
 * duplicate-keys.ts): which texts a partner's create is refused for, and with which words, at
 * the edges the mutation run found unpinned: JSON that is not an object, a blank body, and the
 * structure the duplicate-key scan must follow (nesting, arrays, values equal to keys).
 */
import { HttpError } from '../service/errors';
import { parseJsonObject } from '../service/middleware/json-body';

const parse = (text: string) => parseJsonObject(Buffer.from(text, 'utf8'));

/** The refusal's status and body, as the error middleware would send them. */
function refusal(text: string): { status: number; body: unknown } {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, body: { error: error.message, ...error.extra } };
    throw error;
  }
  throw new Error(`accepted: ${text}`);
}

test.each(['[]', '[{"title":"x"}]', '"a job"', '42', 'true', 'null'])('%s is JSON but not an object: 400 "Request body must be a JSON object"', (text) => {
  expect(refusal(text)).toEqual({ status: 400, body: { error: 'Request body must be a JSON object' } });
});

test.each(['', '   ', '\n\t \r\n'])('a body of nothing but whitespace (%j) is "empty", not "malformed"', (text) => {
  expect(refusal(text)).toEqual({ status: 400, body: { error: 'Request body is empty: send a JSON object' } });
});

describe('duplicate keys: each object on its own', () => {
  test.each([
    ['a value equal to its key', '{"a":"a"}'],
    ['two values equal to each other', '{"a":"x","b":"x"}'],
    ['the same key in an object and in the object it sits in', '{"a":{"b":1},"b":2}'],
    ['the same key in two objects of a list', '{"a":[{"k":1},{"k":2}]}'],
    ['a key after a list', '{"a":[1,2],"b":[3]}'],
  ])('%s is accepted: %s', (_label, text) => {
    expect(parse(text)).toEqual(JSON.parse(text));
  });

  test.each([
    ['after a list', '{"list":[1],"x":1,"x":2}', 'x'],
    ['after a nested object', '{"a":{"b":1},"x":1,"x":2}', 'x'],
    ['inside an object in a list', '{"a":[{"k":1},{"k":2,"k":3}]}', 'a.1.k'],
  ])('a key repeated %s is refused, named by its path', (_label, text, field) => {
    expect(refusal(text)).toEqual({
      status: 400,
      body: { error: 'Validation failed', details: [{ field, message: `${field} appears more than once; send each field once` }] },
    });
  });

  test('a repeated key of 64 characters is named whole; a longer one is clipped to 64 and "…"', () => {
    const exact = 'k'.repeat(64);
    expect(refusal(`{"${exact}":1,"${exact}":2}`).body).toMatchObject({ details: [{ field: exact }] });
    const long = `${'l'.repeat(64)}tail`;
    expect(refusal(`{"${long}":1,"${long}":2}`).body).toMatchObject({ details: [{ field: `${'l'.repeat(64)}…` }] });
  });
});

/**
 * A value that jest hooks make and end, handed to the tests as one object: it stands for the value
 * the running test sees (each property read and call goes to it), so a file declares it once as a
 * const instead of a `let` with its beforeAll/afterAll or beforeEach/afterEach pair.
 */
function hooked<T extends object>(
  hooks: { before: (fn: () => Promise<void>) => void; after: (fn: () => unknown) => void },
  what: string,
  make: () => T | Promise<T>,
  end?: (value: T) => unknown,
): T {
  let current: T | undefined;
  hooks.before(async () => {
    current = await make();
  });
  hooks.after(async () => {
    const ended = current;
    current = undefined;
    if (ended && end) await end(ended);
  });
  const value = (): T => {
    if (!current) throw new Error(`${what} is made in a hook: use it inside a test or hook`);
    return current;
  };
  return new Proxy({} as T, {
    get(_target, key) {
      const field: unknown = Reflect.get(value(), key);
      return typeof field === 'function' ? field.bind(value()) : field;
    },
    set: (_target, key, field) => Reflect.set(value(), key, field),
  });
}

/** `make()`'s value for the describe block (or file) it is called in: made before its first test, ended after its last. */
export function forBlock<T extends object>(what: string, make: () => T | Promise<T>, end?: (value: T) => unknown): T {
  return hooked({ before: beforeAll, after: afterAll }, what, make, end);
}

/** A fresh `make()` for each test of the block (or file) it is called in, ended after the test. */
export function forEachTest<T extends object>(
  what: string,
  make: () => T | Promise<T>,
  end?: (value: T) => unknown,
): T {
  return hooked({ before: beforeEach, after: afterEach }, what, make, end);
}

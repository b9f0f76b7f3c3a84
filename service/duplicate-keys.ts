interface Frame {
  path: string;
  /** The keys seen so far in an object; undefined for an array. */
  keys?: Set<string>;
  /** Object: the key whose value comes next. Array: the index of the current item. */
  current: string | number;
  /** Object: the next string is a key (after `{` or `,`), not a value. */
  expectingKey?: boolean;
}

const join = (path: string, step: string | number) => (path === '' ? String(step) : `${path}.${step}`);

/**
 * The path (`salary.currency`, `requirements.0.x`) of the first key that appears twice in one
 * object of a JSON text, or undefined. JSON.parse silently keeps the last copy, so a body whose
 * two copies disagree would be stored as something the sender may not have meant.
 *
 * The text must already have passed JSON.parse: then only strings, brackets, colons and commas
 * matter, and one pass with an explicit stack (no recursion, whatever the nesting) finds them.
 * Keys are compared decoded, so "a" and "\u0061" are the same key.
 */
export function firstDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  const childPath = () => {
    const parent = stack[stack.length - 1];
    return parent ? join(parent.path, parent.current) : '';
  };
  // Stryker disable next-line EqualityOperator: text[text.length] is undefined and matches no branch
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack[stack.length - 1];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && top.expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return join(top.path, key);
        top.keys.add(key);
        top.current = key;
        top.expectingKey = false;
      }
      i = end;
    } else if (char === '{') {
      // Stryker disable next-line StringLiteral: replaced by the first key before any child path is built
      stack.push({ path: childPath(), keys: new Set(), current: '', expectingKey: true });
    } else if (char === '[') {
      stack.push({ path: childPath(), current: 0 });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',' && top) {
      if (top.keys) top.expectingKey = true;
      else top.current = (top.current as number) + 1;
    }
  }
  return undefined;
}

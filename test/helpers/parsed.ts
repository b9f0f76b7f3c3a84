/**
 * A JSON or YAML document as a test reads it: what JSON.parse and yaml's parse give (any). A test
 * reaches into it and checks what it finds with expect(), which is the type check (eslint.config.mjs).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the parsers' own type; expect() checks the values
export type Parsed = any;

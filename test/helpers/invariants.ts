/**
 * Invariants of committed files, each a named check that lists what is wrong (nothing when it
 * holds), and mutations that prove each able to fail: shared by the deployment and state-file suites.
 */
export type Invariants<T> = Record<string, (files: T) => string[]>;

/** A label, the invariant that must report it, and the change to a fresh copy of the files. */
export type Mutation<T> = [label: string, invariant: string, mutate: (files: T) => void];

/** One test per invariant, in the describe block it is called in: it holds on the files as committed. */
export function invariantsHold<T>(invariants: Invariants<T>, load: () => T): void {
  const files = load();
  it.each(Object.keys(invariants))('%s', (name) => {
    expect(invariants[name]!(files)).toEqual([]);
  });
}

/** In the describe block it is called in: every invariant has a mutation, and each mutation is reported by its invariant. */
export function mutationsCaught<T>(invariants: Invariants<T>, load: () => T, mutations: Mutation<T>[]): void {
  it('covers every invariant with at least one mutation', () => {
    const covered = new Set(mutations.map((m) => m[1]));
    expect(Object.keys(invariants).filter((name) => !covered.has(name))).toEqual([]);
  });

  it.each(mutations)('%s is caught by "%s"', (_label, invariant, mutate) => {
    const files = load();
    mutate(files);
    expect(invariants[invariant]).toBeDefined();
    expect(invariants[invariant]!(files).length).toBeGreaterThan(0);
  });
}

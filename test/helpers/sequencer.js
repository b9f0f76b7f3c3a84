// jest's order, but a file that waits out minutes of clock starts first when jest has no timing for
// it (a fresh clone, as in CI, where jest goes by file size): started late, it alone would end the run.
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/** Files whose length is set by the clock, longest first: the 3-minute database outage and what surrounds it. */
const CLOCK_BOUND = ['test/kong/upstream-outage.test.ts'];

class ClockBoundFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) =>
      test.duration == null ? CLOCK_BOUND.indexOf(path.relative(test.context.config.rootDir, test.path)) : -1;
    const first = sorted.filter((test) => rank(test) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...first, ...sorted.filter((test) => rank(test) < 0)];
  }
}

module.exports = ClockBoundFirst;

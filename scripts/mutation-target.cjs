// A Stryker reporter (stryker.config.mjs, reporters: 'mutation-target'): after a run, one line per
// mutated file with its score against the 85% target, and for each file under it the reason
// recorded below, or a note that none is, so a run says by itself which files need tests.

const TARGET = 85;

// Files known to stay under the target, and why. A file not listed that falls
// under the target is a regression: its survivors are tests to write. None today.
const BELOW_TARGET = {};

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** Counts of one file's mutants; "static" are the ones --ignoreStatic left out. */
function fileCounts(mutants) {
  const counts = { detected: 0, undetected: 0, marked: 0, static: 0 };
  for (const mutant of mutants) {
    if (DETECTED.has(mutant.status)) counts.detected++;
    else if (UNDETECTED.has(mutant.status)) counts.undetected++;
    else if (mutant.status === 'Ignored') {
      if (/static/i.test(mutant.statusReason ?? '')) counts.static++;
      else counts.marked++;
    }
  }
  return counts;
}

/** The score as Stryker defines it (killed + timeout over those plus survived and no coverage), or null. */
function score({ detected, undetected }) {
  return detected + undetected === 0 ? null : (100 * detected) / (detected + undetected);
}

/** The report's lines: a header, a row per file, then each file under the target with its reason. */
function targetLines(
  report,
  { quick = false, ignoreStatic = false, suites = '', childProcess = false, reasons = BELOW_TARGET } = {},
) {
  const rows = Object.entries(report.files)
    .map(([file, result]) => ({ file, counts: fileCounts(result.mutants) }))
    .sort((a, b) => a.file.localeCompare(b.file));
  const caveats = [
    ignoreStatic ? 'static mutants left out (--ignoreStatic)' : null,
    quick ? 'process-starting suites left out (STRYKER_QUICK=1): scores are lower bounds' : null,
    suites ? `only the suites ${suites} (STRYKER_TESTS): scores are lower bounds` : null,
    childProcess ? 'each mutant ran those suites whole, child processes included (STRYKER_CHILD_PROCESS)' : null,
  ].filter(Boolean);
  const lines = [`Mutation score per file, target ${TARGET}%${caveats.length ? ` (${caveats.join('; ')})` : ''}:`];
  const below = [];
  for (const { file, counts } of rows) {
    const value = score(counts);
    const shown = value === null ? '  n/a' : `${value.toFixed(1).padStart(5)}%`;
    const extra = [counts.marked ? `${counts.marked} marked` : '', counts.static ? `${counts.static} static` : '']
      .filter(Boolean)
      .join(', ');
    lines.push(
      `  ${shown}  ${file} (${counts.detected}/${counts.detected + counts.undetected}${extra ? `; ${extra}` : ''})`,
    );
    if (value !== null && value < TARGET) below.push(file);
  }
  if (below.length === 0) {
    lines.push(`Every file scored is at or above ${TARGET}%.`);
  } else {
    lines.push(`Under ${TARGET}%:`);
    for (const file of below) {
      lines.push(
        `  ${file}: ${reasons[file] ?? 'no reason recorded: its survivors are missing tests (scripts/mutation-target.cjs)'}`,
      );
    }
  }
  return lines;
}

class MutationTargetReporter {
  static inject = ['options'];

  constructor(options) {
    this.options = options;
  }

  onMutationTestReportReady(report) {
    const { STRYKER_QUICK, STRYKER_TESTS, STRYKER_CHILD_PROCESS } = process.env;
    const lines = targetLines(report, {
      quick: Boolean(STRYKER_QUICK),
      ignoreStatic: this.options.ignoreStatic,
      suites: STRYKER_TESTS,
      childProcess: Boolean(STRYKER_CHILD_PROCESS),
    });
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

// Assigned one by one: Node finds a CommonJS module's named exports (Stryker imports
// strykerPlugins by name) only in this form.
exports.TARGET = TARGET;
exports.BELOW_TARGET = BELOW_TARGET;
exports.targetLines = targetLines;
// What @stryker-mutator/api's declareClassPlugin(PluginKind.Reporter, ...) returns, written out:
// that package is ES modules only, which jest (test/mutation-target.test.ts) cannot require.
exports.strykerPlugins = [{ kind: 'Reporter', name: 'mutation-target', injectableClass: MutationTargetReporter }];

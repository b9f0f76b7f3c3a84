#!/usr/bin/env bash
# npm test: the jest suites (service, kong.yaml invariants, local gateway, end to end) and the
# gateway checks (luacheck, deck validate, busted). Runs both even when the first fails, then
# prints one closing line: `tests: N passed, M failed` (jest's and busted's counts added).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

report="$(mktemp)"
gateway_log="$(mktemp)"
trap 'rm -f "$report" "$gateway_log"' EXIT

npx jest --json --outputFile="$report" "$@"
jest_rc=$?
read -r jest_passed jest_failed < <(node -e '
  try {
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    // Suites that failed to run (a syntax error, a crash in beforeAll) count as failures too.
    const failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
    if (!Number.isInteger(r.numPassedTests) || !Number.isInteger(failed)) throw new Error("no counts");
    console.log(r.numPassedTests, failed);
  } catch { console.log(0, 1); }' "$report")
if [ "$jest_rc" -ne 0 ] && [ "$jest_failed" -eq 0 ]; then jest_failed=1; fi

bash gateway/test.sh 2>&1 | tee "$gateway_log"
gateway_rc=${PIPESTATUS[0]}
line="$(grep -E '^busted: [0-9]+ passed, [0-9]+ failed$' "$gateway_log" | tail -n 1)"
busted_passed="$(sed -E 's/^busted: ([0-9]+) passed.*/\1/' <<<"${line:-busted: 0 passed, 1 failed}")"
busted_failed="$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"${line:-busted: 0 passed, 1 failed}")"
if [ "$gateway_rc" -ne 0 ] && [ "$busted_failed" -eq 0 ]; then busted_failed=1; fi

echo
echo "jest: $jest_passed passed, $jest_failed failed"
echo "busted: $busted_passed passed, $busted_failed failed"
echo "tests: $((jest_passed + busted_passed)) passed, $((jest_failed + busted_failed)) failed"
[ "$jest_rc" -eq 0 ] && [ "$gateway_rc" -eq 0 ] && [ $((jest_failed + busted_failed)) -eq 0 ]

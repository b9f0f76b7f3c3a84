#!/usr/bin/env bash
# npm test: the jest suites (service, kong.yaml invariants, local gateway, end to end), the
# gateway checks (luacheck, deck validate, busted) and `npm run lint`, the last two beside jest (their
# output after its). Runs all even when one fails, then
# prints one closing line: `tests: N passed, M failed` (jest's and busted's counts added, lint one more).
#
# The real-Kong tier (test/kong/ and the e2e suites' "through the real Kong" half) runs when a
# Kong 3.9 is found (harness/real-kong.ts findKong: KONG_HOME, `kong` on PATH, ../shared/kong);
# one line says which Kong it used and how many of its tests ran, or why it was skipped.
# REQUIRE_REAL_KONG=1 (.ci/run) makes a skipped or empty tier a failure.
#
# Every suite runs on the Node that runs npm test: Node 24, as in production (.nvmrc; .ci/run puts
# scripts/node-runtime.sh's first on PATH).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

wanted="$(cat .nvmrc)"
if [ "$(node -p 'process.versions.node.split(".")[0]')" != "$wanted" ]; then
  echo "npm test runs on Node $wanted (.nvmrc), not $(node --version): nvm use, or PATH=\"\$(dirname \"\$(bash scripts/node-runtime.sh)\"):\$PATH\""
  echo "tests: 0 passed, 1 failed"
  exit 1
fi

report="$(mktemp)"
gateway_log="$(mktemp)"
lint_log="$(mktemp)"
trap 'rm -f "$report" "$gateway_log" "$lint_log"' EXIT

{ read -r kong_home; read -r kong_which; } < <(node -r ./test/helpers/register-ts.js test/helpers/kong-tier.ts 2>&1)
kong_which="${kong_which:-no Kong 3.9 found (test/helpers/kong-tier.ts failed)}"
jest_args=()
if [ "${kong_home:--}" != "-" ] && [[ "$kong_which" == Kong* ]]; then
  export KONG_HOME="$kong_home"
elif [[ "$kong_which" == Kong* ]]; then
  :
else
  export REAL_KONG=off
  jest_args+=('--testPathIgnorePatterns=<rootDir>/test/kong/')
fi

# Beside jest, which spends much of its time waiting on clocks and processes: CI's wall time is jest's.
bash gateway/test.sh >"$gateway_log" 2>&1 &
gateway_pid=$!
# npm run lint (types, ESLint, Prettier, luacheck) counts as one test; a chosen run (jest arguments) skips it.
lint_pid=""
if [ $# -eq 0 ]; then
  npm run -s lint >"$lint_log" 2>&1 &
  lint_pid=$!
fi

npx jest --json --outputFile="$report" "$@" "${jest_args[@]}"
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
# The tier's tests: every test under test/kong/ and every one in a "through the real Kong" block.
kong_ran="$(node -e '
  try {
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    let n = 0;
    for (const file of r.testResults) for (const t of file.assertionResults) {
      if (t.status !== "passed" && t.status !== "failed") continue;
      if (/[\/]test[\/]kong[\/]/.test(file.name) || t.ancestorTitles.includes("through the real Kong")) n++;
    }
    console.log(n);
  } catch { console.log(0); }' "$report")"
if [ "${REAL_KONG:-}" = off ]; then
  tier_line="real-Kong tier: skipped, $kong_which"
  tier_ok=0
elif [ "$kong_ran" -gt 0 ]; then
  tier_line="real-Kong tier: $kong_which, $kong_ran tests"
  tier_ok=1
else
  tier_line="real-Kong tier: $kong_which, but none of its tests ran"
  tier_ok=0
fi

wait "$gateway_pid"
gateway_rc=$?
cat "$gateway_log"
line="$(grep -E '^busted: [0-9]+ passed, [0-9]+ failed$' "$gateway_log" | tail -n 1)"
busted_passed="$(sed -E 's/^busted: ([0-9]+) passed.*/\1/' <<<"${line:-busted: 0 passed, 1 failed}")"
busted_failed="$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"${line:-busted: 0 passed, 1 failed}")"
if [ "$gateway_rc" -ne 0 ] && [ "$busted_failed" -eq 0 ]; then busted_failed=1; fi

lint_passed=0
lint_failed=0
if [ -z "$lint_pid" ]; then lint_line="lint: not run (npm test was given jest arguments)"
elif wait "$lint_pid"; then cat "$lint_log"; lint_line="lint: ok"; lint_passed=1
else cat "$lint_log"; lint_line="lint: failed"; lint_failed=1; fi

tier_failed=0
if [ "$tier_ok" -eq 0 ] && [ "${REQUIRE_REAL_KONG:-}" = 1 ]; then tier_failed=1; fi

echo
echo "$tier_line"
echo "jest: $jest_passed passed, $jest_failed failed"
echo "busted: $busted_passed passed, $busted_failed failed"
echo "$lint_line"
echo "tests: $((jest_passed + busted_passed + lint_passed)) passed, $((jest_failed + busted_failed + tier_failed + lint_failed)) failed"
[ "$jest_rc" -eq 0 ] && [ "$gateway_rc" -eq 0 ] && [ $((jest_failed + busted_failed + tier_failed + lint_failed)) -eq 0 ]

#!/usr/bin/env bash
# Gateway checks that need no Kong: luacheck, decK's offline validation of every state file (each
# on its own, the way each is synced), and the busted spec of the log redaction filter, the one
# piece of our Lua that runs outside Kong. The plugins are tested inside a real Kong (test/kong/,
# test/e2e/: the real-Kong tier of npm test).
#
# The last line is always exactly `busted: N passed, M failed` (scripts/test.sh parses it): N and M
# are busted's successes and failures+errors, plus one check for luacheck and one per state file.
# Exits non-zero when anything failed.
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

passed=0
failed=0

check() { # check NAME COMMAND... : one pass/fail count for a tool
  local name="$1"
  shift
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "FAIL $name: $1 is not installed" >&2
    failed=$((failed + 1))
    return
  fi
  if "$@"; then
    echo "ok   $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name" >&2
    failed=$((failed + 1))
  fi
}

check "luacheck gateway" luacheck --quiet --no-color gateway
# decK 1.x (Debian) validates offline with `deck validate -s FILE`; newer decK spells it
# `deck gateway validate FILE`.
for state in kong.yaml partners.yaml partner-keys.yaml demo.yaml; do
  if deck gateway --help >/dev/null 2>&1; then
    check "deck gateway validate $state" deck gateway validate "$state"
  else
    check "deck validate -s $state" deck validate -s "$state"
  fi
done

if command -v busted >/dev/null 2>&1; then
  out="$(mktemp)"
  trap 'rm -f "$out"' EXIT
  busted --lpath="$ROOT/gateway/spec/?.lua" --pattern=_spec -o json gateway/spec >"$out" 2>&1
  busted_rc=$?
  # Count with the JSON report; print every failure with its message.
  counts="$(lua5.1 - "$out" <<'LUA'
local json = require "dkjson"
local f = assert(io.open(arg[1], "rb"))
local text = f:read("*a")
f:close()
local report = json.decode(text:match("{.*}") or "")
if type(report) ~= "table" or type(report.successes) ~= "table" then
  io.stderr:write("busted produced no JSON report:\n", text, "\n")
  print("0 1")
  return
end
for _, kind in ipairs({ "failures", "errors" }) do
  for _, t in ipairs(report[kind]) do
    io.stderr:write("FAIL ", (t.name or "?"), "\n     ", tostring(t.message or t.trace and t.trace.message), "\n")
  end
end
print(#report.successes .. " " .. (#report.failures + #report.errors))
LUA
)"
  read -r bp bf <<<"$counts"
  bp="${bp:-0}"
  bf="${bf:-1}"
  if [ "$busted_rc" -ne 0 ] && [ "$bf" -eq 0 ]; then
    echo "busted exited with $busted_rc without reporting a failure" >&2
    bf=1
  fi
  echo "busted specs: $bp passed, $bf failed"
  passed=$((passed + bp))
  failed=$((failed + bf))
else
  echo "FAIL busted is not installed" >&2
  failed=$((failed + 1))
fi

echo "busted: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

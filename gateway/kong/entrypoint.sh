#!/usr/bin/env bash
# Kong's container entrypoint: the image's own /docker-entrypoint.sh, with everything Kong writes
# to stdout (access logs) and stderr (error logs, which quote raw request lines) passed through
# redact-keys.lua first, so no API key reaches `docker logs` or a log shipper. Each stream keeps its
# own filter and stays stdout or stderr. The filters read from FIFOs and the entrypoint is exec'd,
# so nginx's master still runs as PID 1 and gets Docker's signals.
#
# Without Docker, KONG_REDACT_NEXT=kong runs `kong start` (in the foreground: kong.conf's
# nginx_daemon) under the filters instead (docs/operations.md, "Production without Docker").
# KONG_REDACT_LUA and KONG_REDACT_FILTER exist for the tests (test/kong-logs.test.ts runs real nginx
# through this script); the image never sets them.
set -Eeo pipefail

next="${KONG_REDACT_NEXT:-/docker-entrypoint.sh}"
lua="${KONG_REDACT_LUA:-/usr/local/openresty/luajit/bin/luajit}"
filter="${KONG_REDACT_FILTER:-/etc/kong/redact-keys.lua}"

fifos="$(mktemp -d)"
mkfifo "$fifos/stdout" "$fifos/stderr"
"$lua" "$filter" <"$fifos/stdout" &
"$lua" "$filter" <"$fifos/stderr" >&2 &
exec "$next" "$@" >"$fifos/stdout" 2>"$fifos/stderr"

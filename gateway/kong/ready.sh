#!/usr/bin/env bash
# Docker HEALTHCHECK of the Kong container: healthy when Kong's status API answers 200 on
# /status/ready (Kong 3.9: the node has a router and its configuration; kong/status/ready.lua),
# not merely when the process is up (`kong health`). The image has no curl: bash's /dev/tcp.
# KONG_READY_PORT: the status listener's port (gateway/kong/kong.conf, status_listen).
set -u
port="${KONG_READY_PORT:-8100}"
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /status/ready HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
IFS= read -r -t 5 status <&3 || exit 1
case "$status" in
  "HTTP/1."?" 200 "*) exit 0 ;;
esac
exit 1

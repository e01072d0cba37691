#!/usr/bin/env bash
# Out-of-process check of `flowctl mcp` with a client nobody here wrote: the
# official TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned in
# package.json / package-lock.json). Installs it into this directory, makes
# a fresh flow file, runs check.mjs against `BINARY mcp` over stdio, and
# verifies the file afterwards. Exits nonzero on any protocol or tool error.
#
# usage: .ci/mcp-check/run.sh BINARY      (needs node >= 18 and npm)
set -euo pipefail
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 FLOWCTL_BINARY" >&2
	exit 2
fi
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
start=$(date +%s%N)

echo "== mcp-check: node $(node --version), npm $(npm --version 2>/dev/null)"
cd "$here"
if [ -f package-lock.json ]; then
	echo "== npm ci"
	npm ci --no-audit --no-fund
else
	echo "== npm install"
	npm install --no-audit --no-fund
fi
echo "== @modelcontextprotocol/sdk $(node -p 'JSON.parse(require("fs").readFileSync("node_modules/@modelcontextprotocol/sdk/package.json")).version')"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && "$bin" init --project mcp-check)

echo "== node check.mjs"
node check.mjs "$bin" "$tmp"

echo "== flowctl verify"
"$bin" --db "$tmp/.flow/flow.db" verify
echo "== mcp-check ok in $(( ($(date +%s%N) - start) / 1000000 )) ms"

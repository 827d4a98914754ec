#!/usr/bin/env bash
# The web page on a local server: builds wasm/dist if needed, then `node web/serve.mjs`
# (http://127.0.0.1:8080/ unless --port/--host say otherwise; serves web/, wasm/dist, the samples,
# tests/corpus and a generated 1 GiB model, with HTTP Range support).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f wasm/dist/weightstream.mjs ]; then
  bash tools/install-deps.sh
  (cd wasm && npm ci --no-audit --no-fund && npm run build)
fi
exec node web/serve.mjs "$@"

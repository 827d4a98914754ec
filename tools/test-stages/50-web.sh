#!/usr/bin/env bash
# The web page (web/) in Debian's headless Chromium with WebGPU on SwiftShader, driven by npm
# playwright-core: tables, GPU loads with read-back checks (raw and dequantized), cancel,
# malformed files, multi-file models (UQFF directories, MLX + config.json, sharded MLX, Ollama
# manifests; compared with the CLI build/release/tools/weightstream, or $WS_CLI, and skipped when it
# is not built), the 1 GiB memory bound, and decode on the GPU against the CPU decode
# (test/gpu-decode.test.mjs). Needs wasm/dist (tools/test.sh builds it first).
# Screenshots of every state: web/test-results/.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f wasm/dist/weightstream.mjs ]; then
  (cd wasm && npm ci --no-audit --no-fund && npm run build)
fi
(cd web && npm ci --no-audit --no-fund --loglevel=error)
log=$(mktemp)
set +e
# The two files side by side (each its own server on port 0 and its own browser): most of a page
# test's time is the browser's waiting, so two at a time on 2 cores halve the stage's wall time.
(cd web && node --test --test-concurrency=2 --test-reporter=spec test/page.test.mjs test/gpu-decode.test.mjs) 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
pass=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$log" | tail -1)
fail=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$log" | tail -1)
skip=$(sed -n 's/^ℹ skipped \([0-9]*\)$/\1/p' "$log" | tail -1)
rm -f "$log"
echo "web: ${pass:-0} passed, ${fail:-0} failed, ${skip:-0} skipped (screenshots in web/test-results/)"
exit "$rc"

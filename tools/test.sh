#!/usr/bin/env bash
# Every test: the GoogleTest/CTest suite in a release build and again under ASan+UBSan, the
# WebAssembly build and its JavaScript tests, then every further stage in tools/test-stages/
# (in name order). Installs what is missing first. This is exactly what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh

for preset in release asan; do
  echo "=== $preset: build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  echo "=== $preset: test"
  ctest --preset "$preset" -j2
done

echo "=== wasm: build (npm package in wasm/dist) and JS tests"
(cd wasm && npm ci --no-audit --no-fund && npm run build && npm run typecheck)
node --test tests/js/

for stage in tools/test-stages/*.sh; do
  [ -e "$stage" ] || continue
  echo "=== stage: $(basename "$stage" .sh)"
  bash "$stage"
done

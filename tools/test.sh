#!/usr/bin/env bash
# Every test: the GoogleTest/CTest suite in a release build and again under ASan+UBSan, the
# WebAssembly build and its JavaScript tests, then every further stage in tools/test-stages/
# (in name order). Installs what is missing first. This is exactly what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, printed as it ends and summed at the end (CI keeps the whole run under
# 35 minutes on 2 cores: these lines say where the time goes).
# CPU: the user + system seconds of the step's processes (bash's `times`, children), which a
# machine busy with other work does not inflate as it does the wall time.
# (this shell's cutime + cstime in /proc: `times` in a pipe or $(...) would count a subshell's.)
tick=$(getconf CLK_TCK)
cpu_now() { awk -v t="$tick" '{ printf "%d", ($16 + $17) / t }' "/proc/$$/stat"; }
t_all=$SECONDS
t_step=$SECONDS
c_step=$(cpu_now)
timing=""
took() {
  local s=$((SECONDS - t_step)) c=$(( $(cpu_now) - c_step ))
  timing+="$(printf '%-28s %5d s wall %6d s cpu' "$1" "$s" "$c")"$'\n'
  echo "=== $1: ${s} s wall, ${c} s cpu"
  t_step=$SECONDS
  c_step=$(cpu_now)
}
trap 'printf "=== timings (the run so far: %d s wall, %d s cpu)\n%s" $((SECONDS - t_all)) "$(cpu_now)" "$timing"' EXIT
bash tools/install-deps.sh
took install-deps

for preset in release asan; do
  echo "=== $preset: build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  took "$preset build"
  echo "=== $preset: test"
  ctest --preset "$preset" -j2
  took "$preset ctest"
done

echo "=== wasm: build (npm package in wasm/dist) and JS tests"
(cd wasm && npm ci --no-audit --no-fund && npm run build && npm run typecheck)
took "wasm build"
node --test tests/js/
took "node tests"

for stage in tools/test-stages/*.sh; do
  [ -e "$stage" ] || continue
  echo "=== stage: $(basename "$stage" .sh)"
  bash "$stage"
  took "$(basename "$stage" .sh)"
done

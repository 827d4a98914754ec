#!/usr/bin/env bash
# Stage: the Cortex-M4F firmware (mcu preset): cross-build with the link check, run under
# qemu-system-arm and compare its checksums with the host build's; then the size report.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset mcu >/dev/null
cmake --build --preset mcu
ctest --preset mcu 2>&1 | tee build/mcu/ctest.log | tail -n 3
bash tools/mcu-size.sh --no-build build/mcu
grep -q "100% tests passed" build/mcu/ctest.log

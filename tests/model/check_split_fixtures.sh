#!/usr/bin/env bash
# ctest split_gguf_fixtures_regenerate: the split GGUF fixtures checked in (tests/data/split-gguf)
# are exactly what ws-make-split-gguf writes with ggml's writer now (bench/node_modules'
# libggml-base, `npm ci --prefix bench`). Skipped (77) when that library is not installed.
set -uo pipefail
gen="$1"
src="$2"
lib="$3"
[ -f "$lib" ] || { echo "libggml-base not installed (npm ci --prefix bench): skipped"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$gen" "$out/split-gguf" --ggml "$lib" || exit 1
diff -r -x README.md "$src" "$out/split-gguf"

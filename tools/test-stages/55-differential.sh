#!/usr/bin/env bash
# Stage: weightstream's GGUF reader against ggml's own, gguf_init_from_file of libggml-base from the
# npm package @node-llama-cpp/linux-x64 (bench/package.json; installed here when missing or stale).
# First the differential test's findings (tests/corpus/differential) are replayed: each must still
# get the class and ggml verdict of its expected.json. Then a fixed campaign: the GGUF corpus, the
# fuzz findings and the real and synthetic files, mutated with a fixed seed; every file both
# readers see must get the same reading from both or fall in a documented class of deliberate
# differences (tests/differential/README.md). Anything else fails the stage, and the mutant is
# written to build/differential/unclassified/ (make it a regression file in
# tests/corpus/differential once lib/ has decided it). Counts per class are printed.
#   WS_DIFFERENTIAL_MUTANTS (default 10000; a longer campaign: tests/differential/README.md), WS_DIFFERENTIAL_SEED (default 1)
set -euo pipefail
cd "$(dirname "$0")/../.."

lib=bench/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so
stamp=bench/node_modules/.ws-installed-from
want=$(sha256sum bench/package-lock.json | cut -d' ' -f1)
if [ ! -f "$lib" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  npm ci --prefix bench --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi

cmake --preset release >/dev/null
cmake --build --preset release --target ws-differential-ggml
bin=build/release/tests/differential/ws-differential-ggml

echo "=== differential: findings (tests/corpus/differential)"
"$bin" --replay tests/corpus/differential/*.gguf >build/differential-replay.txt || true
python3 - <<'EOF'
import json, sys
got = {}
for line in open("build/differential-replay.txt"):
    if not line.startswith(" "):
        f, verdict, cls, ggml = line.rstrip("\n").split("\t")
        got[f.rsplit("/", 1)[1]] = (cls, ggml)
bad = 0
for c in json.load(open("tests/corpus/differential/expected.json"))["cases"]:
    want = (c["class"], c["ggml"])
    have = got.get(c["file"])
    ok = have == want
    bad += not ok
    print(f"  {c['file']}: class {have[0] if have else '?'}, ggml {have[1] if have else '?'}" +
          ("" if ok else f"   EXPECTED class {want[0]}, ggml {want[1]}"))
sys.exit(1 if bad or len(got) != len(json.load(open("tests/corpus/differential/expected.json"))["cases"]) else 0)
EOF

echo "=== differential: campaign"
"$bin" --mutants "${WS_DIFFERENTIAL_MUTANTS:-10000}" --seed "${WS_DIFFERENTIAL_SEED:-1}" --jobs 2 \
  --out build/differential tests/corpus/gguf tests/corpus/fuzz tests/corpus/differential \
  tests/data/real/gguf tests/data/synthetic/gguf

#!/usr/bin/env bash
# Checks fuzz/oss-fuzz/build.sh as OSS-Fuzz would run it: clang with OSS-Fuzz's libFuzzer +
# AddressSanitizer flags, plus UndefinedBehaviorSanitizer's (OSS-Fuzz builds its ASan and UBSan
# configurations separately; one build with both is a superset, and the fuzz stage's smoke run then
# fuzzes these very binaries instead of building its own), into $OUT; then every target must be
# there with its options, dictionary and seed corpus, and must run once over its seeds (-runs=0:
# the seeds only) without a finding. Part of the fuzz stage (tools/test-stages/60-fuzz.sh).
#   WS_OSS_FUZZ_OUT  keep $OUT there (recreated; default: a temporary directory, removed)
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(realpath -m "${WS_OSS_FUZZ_OUT:-$tmp/out}")
rm -rf "$out"
export CC=clang CXX=clang++ SRC=$PWD/.. OUT=$out WORK=$tmp/work
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
mkdir -p "$OUT" "$WORK"
echo "=== oss-fuzz: build.sh into a temporary \$OUT"
bash fuzz/oss-fuzz/build.sh >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log" >&2; exit 1; }

source fuzz/targets.sh
failed=0
for t in "${WS_FUZZ_TARGETS[@]}"; do
  missing=""
  [ -x "$OUT/$t" ] || missing+=" binary"
  [ -f "$OUT/$t.options" ] || missing+=" .options"
  [ -s "$OUT/${t}_seed_corpus.zip" ] || missing+=" seed corpus"
  [ -z "$(ws_fuzz_dict "$t")" ] || [ -s "$OUT/$t.dict" ] || missing+=" .dict"
  if [ -n "$missing" ]; then
    echo "oss-fuzz: $t: missing$missing" >&2
    failed=1
    continue
  fi
  seeds=$tmp/seeds/$t
  mkdir -p "$seeds"
  unzip -q "$OUT/${t}_seed_corpus.zip" -d "$seeds"
  args=(-runs=0 -timeout=25 -rss_limit_mb=2048 -max_len="$(ws_fuzz_max_len "$t")")
  [ -f "$OUT/$t.dict" ] && args+=(-dict="$OUT/$t.dict")
  if "$OUT/$t" "${args[@]}" "$seeds" >"$tmp/$t.log" 2>&1; then
    echo "oss-fuzz: $t: $(ls "$seeds" | wc -l) seeds run, no finding"
  else
    echo "oss-fuzz: $t: FAILED over its seeds" >&2
    grep -E 'ERROR|INVARIANT|SUMMARY' "$tmp/$t.log" | head -5 >&2 || tail -5 "$tmp/$t.log" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || { echo "=== oss-fuzz: FAILED" >&2; exit 1; }
echo "=== oss-fuzz: ${#WS_FUZZ_TARGETS[@]} targets built and run over their seeds"

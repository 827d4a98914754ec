#!/bin/bash -eu
# OSS-Fuzz build script for weightstream (https://google.github.io/oss-fuzz/getting-started/new-project-guide/):
# run by OSS-Fuzz's `compile` from the repository root ($SRC/weightstream), with its $CC, $CXX,
# $CFLAGS, $CXXFLAGS (sanitizer and coverage flags included), $LIB_FUZZING_ENGINE, $OUT and $WORK.
# Builds the library with those flags, then every libFuzzer target of fuzz/ (fuzz/targets.sh), and
# puts into $OUT per target: the binary, <target>.dict (its dictionary), <target>.options (libFuzzer's
# max_len) and <target>_seed_corpus.zip (its seeds). tools/test-stages/60-fuzz.sh runs this script
# with clang's libFuzzer flags into a temporary $OUT and each target once over its seeds.
source fuzz/targets.sh

# The library: only lib/, none of the tools, tests or benchmarks; no -Werror (another compiler's
# warnings are not this build's concern); the optimization level is OSS-Fuzz's ($CFLAGS).
build=$WORK/weightstream-build
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DWS_BUILD_TOOLS=OFF -DWS_BUILD_TESTS=OFF -DWS_BUILD_BENCH=OFF -DWS_WERROR=OFF
cmake --build "$build" --target weightstream -j"$(nproc)"

# The targets compile one per core at a time (each is one translation unit linked with the library:
# independent of each other, so a 2-core CI machine builds two at once).
jobs=$(nproc)
pids=()
for t in "${WS_FUZZ_TARGETS[@]}"; do
  $CXX $CXXFLAGS -std=c++17 -Ilib/include -Ifuzz "fuzz/$t.cpp" -o "$OUT/$t" $LIB_FUZZING_ENGINE \
    "$build/lib/libweightstream.a" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done

for t in "${WS_FUZZ_TARGETS[@]}"; do
  dicts=$(ws_fuzz_dict "$t")
  [ -z "$dicts" ] || cat $dicts >"$OUT/$t.dict"
  printf '[libfuzzer]\nmax_len = %s\n' "$(ws_fuzz_max_len "$t")" >"$OUT/$t.options"

  # Seeds under unique names (the directories share file names), zipped flat.
  seeds=$WORK/seeds/$t
  rm -rf "$seeds"
  mkdir -p "$seeds"
  [ "$t" = fuzz_chunk_split ] && ws_fuzz_make_chunk_split_seeds "$WORK/chunk-split-seeds" "$(ws_fuzz_max_len "$t")"
  n=0
  for dir in $(ws_fuzz_seeds "$t" "$WORK/chunk-split-seeds"); do
    [ -d "$dir" ] || continue
    for f in "$dir"/*; do
      [ -f "$f" ] || continue
      n=$((n + 1))
      cp "$f" "$seeds/$n-$(basename "$f")"
    done
  done
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "$seeds" && zip -q -X "$OUT/${t}_seed_corpus.zip" ./*)
done

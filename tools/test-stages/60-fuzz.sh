#!/usr/bin/env bash
# Fuzzing smoke run: the OSS-Fuzz build script (fuzz/oss-fuzz/build.sh) with libFuzzer, ASan and
# UBSan flags into build/oss-fuzz-out, each target run once over its seed corpus; then those same
# binaries, after the regression files of tests/corpus/fuzz/, each fuzzed for 30 s (one clang
# build for both: a second, fuzz/'s CMake build, was ~2 minutes of CI); then the CLI over every
# corpus file (verdicts, valgrind) and the catalogue's freshness (tests/corpus/CATALOGUE.md).
# The long runs and their numbers: fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
WS_OSS_FUZZ_OUT=build/oss-fuzz-out bash fuzz/oss-fuzz/check.sh
# Two targets at a time, one per core (CI's 2 cores; each still gets its 30 s of one core).
WS_FUZZ_BUILD=build/oss-fuzz-out WS_FUZZ_PREBUILT=1 WS_FUZZ_JOBS=${WS_FUZZ_JOBS:-2} bash fuzz/run.sh 30
bash fuzz/cli-corpus-check.sh
python3 fuzz/make-catalogue.py --check

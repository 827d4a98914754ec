#!/usr/bin/env bash
# Fuzzing smoke run: every libFuzzer target for 30 s (clang, ASan + UBSan, build/fuzz), after the
# regression files of tests/corpus/fuzz/; the OSS-Fuzz build script (fuzz/oss-fuzz/build.sh) with
# libFuzzer flags into a temporary $OUT, each target run once over its seed corpus; then the CLI
# over every corpus file (exit status, verdicts, valgrind, ASan) and the catalogue's freshness
# (tests/corpus/CATALOGUE.md). The long runs and their numbers: fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Two targets at a time, one per core (CI's 2 cores; each still gets its 30 s of one core).
WS_FUZZ_JOBS=${WS_FUZZ_JOBS:-2} bash fuzz/run.sh 30
bash fuzz/oss-fuzz/check.sh
bash fuzz/cli-corpus-check.sh
python3 fuzz/make-catalogue.py --check

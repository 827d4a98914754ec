#!/usr/bin/env bash
# Fuzzing smoke run: every libFuzzer target for 30 s (clang, ASan + UBSan, build/fuzz), after the
# regression files of tests/corpus/fuzz/; then the CLI over every corpus file under valgrind.
# The long runs and their numbers: fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash fuzz/run.sh 30
if [ -f fuzz/cli-corpus-check.sh ]; then
  bash fuzz/cli-corpus-check.sh
fi

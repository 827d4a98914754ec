#!/usr/bin/env bash
# The CLI over the whole malformed corpus (tests/corpus/{safetensors,gguf,differential} and the fuzz regression
# files) plus the Ollama fixture's manifest (tests/data/conventions/ollama), two ways:
#   1. the release CLI, every file in one `weightstream validate --json` process: the printed
#      verdict (code, offset) equal to the corpus's expected.json (GGUF: the *_with_size verdict,
#      since the CLI declares a regular file's size);
#   2. the same run under valgrind (memcheck, leak check, --error-exitcode=1): no valgrind error,
#      the same verdicts.
# Each file's exit status and output, in a process of its own, release and ASan + UBSan, is
# cli.golden's (tests/golden/cli_golden.py: every file of tests/corpus, ctest in both presets).
# The CLI: $WS_CLI, else build/release's when it is newer than every file of lib/ and tools/cli/
# (tools/test.sh builds it first), else a release build of its own in build/fuzz-cli (incremental).
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${WS_CLI:-}
if [ -z "$cli" ]; then
  cli=build/release/tools/weightstream
  if [ ! -x "$cli" ] || [ -n "$(find lib tools/cli -newer "$cli" -type f | head -1)" ]; then
    cli=build/fuzz-cli/tools/weightstream
    cmake -S . -B build/fuzz-cli -G Ninja -DCMAKE_BUILD_TYPE=Release -DWS_BUILD_TESTS=OFF >/dev/null
    cmake --build build/fuzz-cli -j2 --target weightstream_cli >/dev/null
  fi
fi
out=${WS_CLI_CHECK_OUT:-build/cli-corpus-check}
mkdir -p "$out"

# file <TAB> expected code ("Ok" when valid) <TAB> expected offset, from the expected.json files.
python3 - >"$out/expected.tsv" <<'EOF'
import json
for fmt, size_key in (("safetensors", None), ("gguf", "_with_size"), ("differential", "_with_size")):
    for c in json.load(open(f"tests/corpus/{fmt}/expected.json"))["cases"]:
        status = c["status" + (size_key or "")] if size_key else c["status"]
        offset = c["offset" + (size_key or "")] if size_key else c["offset"]
        print(f"tests/corpus/{fmt}/{c['file']}\t{status}\t{offset}")
for c in json.load(open("tests/corpus/fuzz/expected.json"))["cases"]:
    # Open findings (not yet fixed in lib/) are listed by fuzz/run.sh, not checked here.
    if c["target"] in ("fuzz_gguf", "fuzz_safetensors") and not c.get("open"):
        print(f"tests/corpus/fuzz/{c['file']}\t{c.get('status_with_size', c['status'])}\t{c.get('offset_with_size', c['offset'])}")
# An Ollama manifest (the CLI reads its blobs from blobs/ beside it as one model).
print("tests/data/conventions/ollama/manifest.json\tOk\t")
EOF
n=$(wc -l <"$out/expected.tsv")
echo "=== cli-corpus-check: $n corpus files ($cli)"

# What the CLI printed -> file <TAB> code <TAB> offset.
verdicts() {
  python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"): continue
    j = json.loads(line)
    e = j.get("error")
    print(j["file"], "Ok" if j["valid"] else e["code"], j.get("offset", "") if j["valid"] else e["offset"], sep="\t")'
}

fail=0
# 1. Release, every file in one process (1: some files are invalid).
mapfile -t files < <(cut -f1 "$out/expected.tsv")
rc=0
"$cli" validate --json --no-progress "${files[@]}" >"$out/release.json" 2>"$out/release.err" || rc=$?
if [ "$rc" -ne 1 ]; then
  echo "release run: exit status $rc, want 1 (log $out/release.err)" >&2
  fail=1
fi
verdicts <"$out/release.json" >"$out/release.tsv"
# Valid files: the JSON has no offset; compare codes for them and code + offset for the rest.
python3 - "$out/expected.tsv" "$out/release.tsv" <<'EOF' || fail=1
import sys
want = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:] for l in open(sys.argv[1])}
got = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:] for l in open(sys.argv[2])}
bad = 0
for f, (code, off) in want.items():
    g = got.get(f)
    if g is None or g[0] != code or (code != "Ok" and g[1] != off):
        print(f"verdict differs: {f}: CLI {g}, expected {code}@{off}", file=sys.stderr)
        bad += 1
print(f"release CLI: {len(want) - bad}/{len(want)} verdicts as expected")
sys.exit(1 if bad else 0)
EOF

# 2. valgrind, the same run.
if command -v valgrind >/dev/null; then
  rc=0
  valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite -q \
    "$cli" validate --json --no-progress "${files[@]}" >"$out/valgrind.json" 2>"$out/valgrind.log" || rc=$?
  if [ "$rc" -ne 1 ]; then  # some files are invalid: 1; valgrind errors: 99
    echo "valgrind run: exit status $rc (99 = valgrind errors; log $out/valgrind.log)" >&2
    head -30 "$out/valgrind.log" >&2
    fail=1
  fi
  verdicts <"$out/valgrind.json" >"$out/valgrind.tsv"
  if ! cmp -s <(sort "$out/release.tsv") <(sort "$out/valgrind.tsv"); then
    echo "valgrind run: verdicts differ from the per-file run" >&2
    fail=1
  else
    echo "valgrind: ${#files[@]} files, no errors, same verdicts"
  fi
else
  echo "valgrind missing (tools/deps/fuzz.txt)" >&2
  fail=1
fi

if [ "$fail" -ne 0 ]; then
  echo "=== cli-corpus-check: FAILED" >&2
  exit 1
fi
echo "=== cli-corpus-check: ok"

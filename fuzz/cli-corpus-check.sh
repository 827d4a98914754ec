#!/usr/bin/env bash
# The CLI over the whole malformed corpus (tests/corpus/{safetensors,gguf,differential} and the fuzz regression
# files) plus the Ollama fixture's manifest (tests/data/conventions/ollama), three ways:
#   1. release build, one `weightstream validate --json FILE` per file: exit status 1 for every
#      invalid file, 0 for every valid one, and the printed verdict (code, offset) equal to the
#      corpus's expected.json (GGUF: the *_with_size verdict, since the CLI declares a regular
#      file's size);
#   2. the same binary under valgrind (memcheck, --error-exitcode=1), all files in one process
#      (one valgrind start-up instead of ~300): no valgrind error, same verdicts;
#   3. the ASan + UBSan build (build/asan, when present), one process per file: no sanitizer
#      report, same exit statuses.
# Builds the release CLI first, in its own directory (build/fuzz-cli; incremental), so the check
# never runs a stale binary; the ASan CLI is used only when it is newer than every file of lib/.
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${WS_CLI:-build/fuzz-cli/tools/weightstream}
asan_cli=${WS_ASAN_CLI:-build/asan/tools/weightstream}
if [ -z "${WS_CLI:-}" ]; then
  cmake -S . -B build/fuzz-cli -G Ninja -DCMAKE_BUILD_TYPE=Release -DWS_BUILD_TESTS=OFF >/dev/null
  cmake --build build/fuzz-cli -j2 --target weightstream_cli >/dev/null
fi
if [ -x "$asan_cli" ] && [ -n "$(find lib tools/cli -newer "$asan_cli" -type f | head -1)" ]; then
  echo "cli-corpus-check: $asan_cli is older than lib/ or tools/cli/: skipping its run (tools/test.sh rebuilds it)"
  asan_cli=/nonexistent
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
# 1. Release, one process per file: exit status and verdict.
: >"$out/release.tsv"
while IFS=$'\t' read -r file status offset; do
  rc=0
  "$cli" validate --json --no-progress "$file" >"$out/one.json" 2>"$out/one.err" || rc=$?
  want=1
  [ "$status" = Ok ] && want=0
  if [ "$rc" -ne "$want" ]; then
    echo "exit status $rc, want $want: $file" >&2
    fail=1
  fi
  verdicts <"$out/one.json" >>"$out/release.tsv"
done <"$out/expected.tsv"
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

# 2. valgrind, every file in one process.
if command -v valgrind >/dev/null; then
  mapfile -t files < <(cut -f1 "$out/expected.tsv")
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

# 3. ASan + UBSan CLI, when built (tools/test.sh builds it before the stages).
if [ -x "$asan_cli" ]; then
  k=0
  while IFS=$'\t' read -r file status offset; do
    rc=0
    "$asan_cli" validate --json --no-progress "$file" >/dev/null 2>"$out/asan.err" || rc=$?
    want=1
    [ "$status" = Ok ] && want=0
    if [ "$rc" -ne "$want" ] || grep -q 'Sanitizer\|runtime error' "$out/asan.err"; then
      echo "ASan CLI: exit status $rc (want $want) on $file" >&2
      head -20 "$out/asan.err" >&2
      fail=1
    fi
    k=$((k + 1))
  done <"$out/expected.tsv"
  echo "ASan+UBSan CLI: $k files, no reports"
fi

if [ "$fail" -ne 0 ]; then
  echo "=== cli-corpus-check: FAILED" >&2
  exit 1
fi
echo "=== cli-corpus-check: ok"

#!/usr/bin/env python3
"""The CLI's golden outputs over the repository's whole fixture corpus (issue #25).

What the `weightstream` CLI prints for every fixture in the repository (tests/corpus, tests/data,
samples), one file per (fixture, command), so that a refactor of the model layer can show its
outputs byte-identical before and after:

    python3 tests/golden/cli_golden.py --cli build/release/tools/weightstream --write
    python3 tests/golden/cli_golden.py --cli build/release/tools/weightstream --check

--write regenerates tests/golden/cli/ (commit the result only for an intended change, and say
which outputs change and why); --check regenerates into a temporary directory and fails, printing
a unified diff of each changed file, when anything differs, is missing or is new.

Fixtures: every .safetensors, .gguf and .uqff file alone; every model directory of
tests/data/conventions (the CLI resolves it to its index, first .uqff or one model file, and reads
config.json beside it); every Ollama manifest and shard index. Commands for each: `inspect`,
`inspect --json`, `validate` and `validate --json`; and, where validate says valid and the inputs
are under DEQUANT_LIMIT bytes, `dequant --all --json -o DIR` with the SHA-256 of each file it wrote
(the values of every tensor or logical weight). Each output file holds the command line (paths
relative to the repository root, which is the working directory), its exit status, stdout and
stderr.

--batch ws-cli-batch runs the commands in batch processes (tests/golden/cli_runner.py): the same
outputs, without a process start per command (the ASan build's ctest uses it).
"""
import argparse
import concurrent.futures
import difflib
import hashlib
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_runner import CliRunner  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GOLDEN = os.path.join(REPO, "tests", "golden", "cli")
ROOTS = ("tests/corpus", "tests/data", "samples")
MODEL_FILES = (".safetensors", ".gguf", ".uqff")
DEQUANT_LIMIT = 4 << 20
BIG_STDOUT = 64 << 10


def fixtures():
    """Repository-relative fixture paths, sorted: files, manifests, indexes, convention dirs."""
    out = set()
    for root in ROOTS:
        for d, dirs, files in os.walk(os.path.join(REPO, root)):
            dirs.sort()
            rel = os.path.relpath(d, REPO)
            for f in files:
                if f.endswith(MODEL_FILES) or f == "manifest.json" or f.endswith(".safetensors.index.json"):
                    out.add(os.path.join(rel, f))
            # A model directory of the conventions' fixtures: one with a config.json (or another
            # quantization config file: hf_quant_config.json, quantize_config.json,
            # quant_config.json), a manifest or .uqff files (the CLI resolves the directory itself).
            configs = ("config.json", "hf_quant_config.json", "quantize_config.json", "quant_config.json")
            if rel.startswith("tests/data/conventions/") and (
                    any(c in files for c in configs) or "manifest.json" in files or any(f.endswith(".uqff") for f in files)):
                out.add(rel + "/")
    return sorted(out)


def run(cli, args, cwd):
    rc, out, err = cli.run(args, cwd)
    # The repository's absolute path (an Ollama manifest's blobs directory) as <root>: the goldens
    # hold for every checkout.
    text = lambda b: b.decode("utf-8", "backslashreplace").replace(REPO, "<root>")
    return rc, text(out), text(err)


def record(args, rc, out, err, extra=""):
    return f"$ weightstream {' '.join(args)}\nexit {rc}\n--- stdout\n{out}--- stderr\n{err}{extra}"


def input_bytes(path):
    full = os.path.join(REPO, path)
    if os.path.isdir(full):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(full) for f in fs)
    return os.path.getsize(full)


def outputs_of(cli, fixture):
    """{command name: file text} for one fixture."""
    res = {}
    for name, args in (("inspect", ["inspect", "--no-progress", fixture]),
                       ("inspect-json", ["inspect", "--json", "--no-progress", fixture]),
                       ("validate", ["validate", "--no-progress", fixture]),
                       ("validate-json", ["validate", "--json", "--no-progress", fixture])):
        rc, out, err = run(cli, args, REPO)
        res[name] = record(args, rc, out, err)
        if name == "validate":
            valid = rc == 0
    if valid and input_bytes(fixture) <= DEQUANT_LIMIT:
        tmp = tempfile.mkdtemp(prefix="ws-golden-")
        try:
            args = ["dequant", fixture, "--all", "--json", "--no-progress", "-o", tmp]
            rc, out, err = run(cli, args, REPO)
            lines = []
            for d, _, fs in sorted(os.walk(tmp)):
                for f in sorted(fs):
                    p = os.path.join(d, f)
                    with open(p, "rb") as fh:
                        b = fh.read()
                    lines.append(f"{os.path.relpath(p, tmp)}  {len(b)}  {hashlib.sha256(b).hexdigest()}\n")
            shown = ["dequant", fixture, "--all", "--json", "--no-progress", "-o", "<out>"]
            out = out.replace(tmp, "<out>")
            if len(out) > BIG_STDOUT:  # many_tensors_2001: its files list below says the same
                out = f"<{out.count(chr(10))} lines, sha256 {hashlib.sha256(out.encode()).hexdigest()}>\n"
            res["dequant"] = record(shown, rc, out, err.replace(tmp, "<out>"),
                                    "--- files written\n" + "".join(lines))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return res


def generate(cli, dest):
    cases = fixtures()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda f: (f, outputs_of(cli, f)), cases))
    for fixture, res in results:
        d = os.path.join(dest, fixture.rstrip("/") + ("/dir" if fixture.endswith("/") else ""))
        os.makedirs(d, exist_ok=True)
        for name, text in res.items():
            with open(os.path.join(d, name + ".out"), "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
    return len(cases), sum(len(r) for _, r in results)


def tree(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = p
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--batch", help="ws-cli-batch: run the commands in batch processes")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    a = ap.parse_args()
    cli = CliRunner(os.path.abspath(a.cli), a.batch and os.path.abspath(a.batch), timeout=300)
    try:
        return compare(cli, a.write)
    finally:
        cli.close()


def compare(cli, write):
    if write:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        n, k = generate(cli, GOLDEN)
        print(f"cli golden: wrote {k} outputs of {n} fixtures to {os.path.relpath(GOLDEN, REPO)}")
        return 0
    tmp = tempfile.mkdtemp(prefix="ws-golden-check-")
    try:
        n, k = generate(cli, tmp)
        want, got = tree(GOLDEN), tree(tmp)
        bad = 0
        for rel in sorted(set(want) | set(got)):
            if rel not in got:
                print(f"missing now: {rel}"); bad += 1; continue
            if rel not in want:
                print(f"new output (no golden): {rel}"); bad += 1; continue
            a_text = open(want[rel], encoding="utf-8").read()
            b_text = open(got[rel], encoding="utf-8").read()
            if a_text != b_text:
                bad += 1
                sys.stdout.writelines(difflib.unified_diff(a_text.splitlines(True), b_text.splitlines(True),
                                                           "golden/" + rel, "now/" + rel, n=2))
        print(f"cli golden: {k} outputs of {n} fixtures, {bad} differ")
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

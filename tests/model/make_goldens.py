#!/usr/bin/env python3
"""Writes tests/model/golden/cli.jsonl: what the CLI prints for every fixture and malformed model.

    python3 tests/model/make_goldens.py [--cli build/release/tools/weightstream]
                                        [--variants-tool build/release/tests/model/ws-model-variants]
    python3 tests/model/make_goldens.py --check ...   (ctest model_cli_goldens: compare, write nothing)

One JSON line per (case, command): the argv, the exit status, stdout and stderr (absolute paths
replaced by <root>, <variants>, <out>; a stdout over 32 KiB as its sha256) and, for `dequant --all`, the sha256 of every file written.
Commands: `inspect --json`, `validate --json`, `dequant --all --json -o <out>` in f32 and f16.
Cases: the convention fixtures, the samples, the real and synthetic files, the malformed-input
corpus, and every malformed model directory ws-model-variants writes (UQFF, MLX, MLX-bits,
Ollama, sharded). The first line names the CLI's commit.

--check runs the same commands and compares every record with the goldens, except the records
tests/model/golden/intended.jsonl replaces: outputs the CLI changes on purpose (each with a "why"),
asserted exactly like the others. Exit status 1 and the differing records when anything differs.

The goldens pin the CLI's outputs at the commit before the model loader landed (21ed1a0: main with
issues #14 and #15, the CLI's own orchestration still in place; first generated at d0e15a4) so that the
loader (tests/model/model_loader_golden_test.cpp) and the CLI as its host are checked byte for
byte against them. When a convention outcome changes on purpose, regenerate with the CLI of that
commit: build it (git worktree add /tmp/ws-at REV; cmake --preset release; cmake --build ...) and
pass --cli /tmp/ws-at/build/release/tools/weightstream.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
BIG = 32768  # stdout longer than this is kept as its sha256
OUT_FILE = os.path.join(ROOT, 'tests', 'model', 'golden', 'cli.jsonl')
sys.path.insert(0, os.path.join(ROOT, 'tests', 'golden'))
from cli_runner import CliRunner  # noqa: E402


def fixture_cases():
    """(case name, entry path relative to the repository root)."""
    conv = 'tests/data/conventions'
    cases = [
        ('conv/mlx', f'{conv}/mlx/model.safetensors'),
        ('conv/mlx-bits', f'{conv}/mlx-bits/model.safetensors'),
        ('conv/ollama', f'{conv}/ollama/manifest.json'),
        ('conv/sharded-mlx', f'{conv}/sharded-mlx/model.safetensors.index.json'),
        ('conv/uqff', f'{conv}/uqff/model-0.uqff'),
        ('samples/tiny-llama', 'samples/tiny-llama.safetensors'),
        ('samples/sharded', 'samples/sharded/model.safetensors.index.json'),
    ]
    # Issue #27's FP8 fixtures (records appended to the goldens by the CLI that decodes them,
    # branch issue-27-fp8): decoded, or refused with their exact statuses.
    for name in sorted(os.listdir(os.path.join(ROOT, conv, 'hub'))):
        # compressed-tensors' (ct-*; branch issue-27-ct) likewise; issue #28: GPTQ's (gptq, gptq-*),
        # AWQ's (awq, awq-*) and bitsandbytes' (bnb-*) too.
        # ModelOpt FP8's (modelopt-fp8*; session 11) too.
        if name.startswith(('fp8-', 'ct-', 'gptq-', 'awq-', 'bnb-', 'modelopt-fp8')) or name in ('gptq', 'awq'):
            cases.append((f'conv/hub/{name}', f'{conv}/hub/{name}/model.safetensors'))
    for sub in ('tests/data/real/safetensors', 'tests/data/real/gguf', 'tests/data/synthetic/gguf',
                'tests/corpus/safetensors', 'tests/corpus/gguf', 'tests/corpus/fuzz'):
        for name in sorted(os.listdir(os.path.join(ROOT, sub))):
            if name.endswith(('.safetensors', '.gguf')):
                cases.append((f'{sub}/{name}', f'{sub}/{name}'))
    return cases


def variant_cases(vdir):
    """(case name, entry path relative to the variants directory)."""
    cases = []
    for d in sorted(os.listdir(vdir)):
        files = sorted(os.listdir(os.path.join(vdir, d)))
        if 'model.safetensors.index.json' in files:
            entry = 'model.safetensors.index.json'
        elif 'manifest.json' in files:
            entry = 'manifest.json'
        elif 'model-0.uqff' in files:
            entry = 'model-0.uqff'
        else:
            entry = 'model.safetensors'
        cases.append((f'variants/{d}', f'{d}/{entry}'))
    return cases


def normalize(text, subs):
    for real, mark in subs:
        text = text.replace(real, mark)
    return text


# The Ollama variants edit a blob's bytes in place under its old name, to break one convention rule
# at a time; the CLI checks blobs against their names by default, which would report DigestMismatch
# first. Their commands run with --no-verify-blobs (which changes nothing else); the records keep
# the argv the golden CLI ran. The fixtures' own blobs are named by their SHA-256 and run as given.
NO_VERIFY = ['--no-verify-blobs']


def run(cli, argv, cwd, subs, out_dir=None):
    extra = NO_VERIFY if argv[-1].startswith('ollama-') and argv[-1].endswith('manifest.json') else []
    rc, out, err = cli.run(argv[:-1] + extra + argv[-1:], cwd)
    rec = {'argv': argv, 'exit': rc,
           'stdout': normalize(out.decode('utf-8', 'surrogateescape'), subs),
           'stderr': normalize(err.decode('utf-8', 'surrogateescape'), subs)}
    # A few outputs (the 2,001-tensor file's) are large: their digest stands for them.
    if len(rec['stdout']) > BIG:
        rec['stdout_sha256'] = hashlib.sha256(rec.pop('stdout').encode('utf-8', 'surrogateescape')).hexdigest()
    if out_dir is not None:
        outputs = {}
        if os.path.isdir(out_dir):
            for name in sorted(os.listdir(out_dir)):
                with open(os.path.join(out_dir, name), 'rb') as f:
                    outputs[name] = hashlib.sha256(f.read()).hexdigest()
        rec['outputs'] = outputs
    return rec


# The records of tests/golden/cli (cli_golden.py, ctest cli.golden) that are the same command as one
# of ours: inspect --json, validate --json and f32 dequant of a fixture file, run there with
# --no-progress (which changes nothing when stderr is not a terminal). --check takes those records
# from that store instead of running the CLI a second time for them: cli.golden checks the CLI
# against the store, and check() below holds the store's records to these goldens one by one, so
# the CLI is still held to every golden here. (Under ASan each CLI start costs ~0.1 s: the two
# harnesses ran ~1,100 of the same commands twice.)
CLI_GOLDEN = os.path.join(ROOT, 'tests', 'golden', 'cli')
CLI_GOLDEN_NAME = {'inspect': 'inspect-json', 'validate': 'validate-json', 'dequant': 'dequant'}


def parse_cli_golden(text):
    """(argv, exit, stdout, stderr, files written {name: sha256}) of one cli_golden.py record."""
    head, rest = text.split('\n--- stdout\n', 1)
    command, status = head.split('\n')
    out, rest = rest.split('--- stderr\n', 1)
    err, _, files = rest.partition('--- files written\n')
    written = {}
    for line in files.splitlines():
        name, _size, digest = line.split('  ')
        written[name] = digest
    return command[len('$ weightstream '):].split(' '), int(status[len('exit '):]), out, err, written


def from_cli_golden(argv):
    """The record of `argv` (run in the repository root) as tests/golden/cli holds it, or None when
    that store has no record of the same command or holds only a digest of its stdout."""
    entry = argv[-1]
    if argv[0] == 'dequant' and argv[argv.index('--to') + 1] != 'f32':
        return None
    path = os.path.join(CLI_GOLDEN, entry, CLI_GOLDEN_NAME[argv[0]] + '.out')
    if not os.path.isfile(path):
        return None
    with open(path, encoding='utf-8') as f:
        got_argv, rc, out, err, written = parse_cli_golden(f.read())
    same = (['dequant', entry, '--all', '--json', '--no-progress', '-o', '<out>'] if argv[0] == 'dequant'
            else [argv[0], '--json', '--no-progress', entry])
    if got_argv != same or (argv[0] == 'dequant' and out.startswith('<') and ' lines, sha256 ' in out):
        return None
    rec = {'argv': argv, 'exit': rc, 'stdout': out, 'stderr': err}
    if len(out) > BIG:
        rec['stdout_sha256'] = hashlib.sha256(rec.pop('stdout').encode('utf-8', 'surrogateescape')).hexdigest()
    if argv[0] == 'dequant':
        rec['outputs'] = written
    return rec


def case_records(cli, case, entry, cwd, subs, out, store):
    """The four records of one case; with `store`, those tests/golden/cli holds are taken from it."""
    recs = []
    for cmd in (['inspect', '--json', entry], ['validate', '--json', entry], 'f32', 'f16'):
        shown = cmd if isinstance(cmd, list) else ['dequant', '--all', '--json', '--to', cmd, '-o', '<out>', entry]
        rec = from_cli_golden(shown) if store else None
        if rec is not None:
            rec['from_cli_golden'] = True
        elif isinstance(cmd, list):
            rec = run(cli, cmd, cwd, subs)
        else:
            shutil.rmtree(out, ignore_errors=True)
            rec = run(cli, ['dequant', '--all', '--json', '--to', cmd, '-o', out, entry], cwd, subs, out_dir=out)
            rec['argv'] = shown
        recs.append({'case': case, **rec})
    return recs


def key(rec):
    return json.dumps([rec['case'], rec['argv']])


# Why the CLI prints something else now than at the golden commit, by case: the only records
# --accept-intended may put in intended.jsonl. A record that differs for any other reason is a
# regression.
WHY = [
    # Issue #27 (module lists): the hint of ConventionExcludedQuantized (before the general 'conv/').
    ('conv/hub/gptq-dynamic-excluded', 'issue #27 (module lists): ConventionExcludedQuantized\'s hint names every list '
     'that can leave a module unquantized (modules_to_not_convert, ignored_layers, exclude_modules, ignore, no '
     'config_groups target, GPTQModel\'s dynamic "-:" rule), not the dynamic rule alone; nothing else changed'),
    # Issue #25: the fix hints are the library's (ws::status_hint), worded for the convention that
    # raised the status: these no longer speak of MLX.
    ('variants/uqff-afq-bits-5', 'issue #25: ConventionBitsNotAllowed from UQFF ends with UQFF\'s fix (mistral.rs\'s '
     'AFQ widths and groups), the library\'s ws::status_hint for the uqff convention, not MLX\'s; and, as before '
     '(issue #16), a UQFF file is read as part of its directory\'s model, whose convention errors are its verdict'),
    ('variants/uqff-afq-group-16', 'issue #25: ConventionBitsNotAllowed from UQFF ends with UQFF\'s fix (mistral.rs\'s '
     'AFQ widths and groups), the library\'s ws::status_hint for the uqff convention, not MLX\'s; and, as before '
     '(issue #16), a UQFF file is read as part of its directory\'s model, whose convention errors are its verdict'),
    ('conv/hub/awq-8bit', 'issue #25: ConventionBitsNotAllowed from AWQ ends with AWQ\'s fix (4 bits, w_bit), the '
     'library\'s ws::status_hint for the awq convention, not MLX\'s; nothing else changed'),
    ('conv/hub/ct-no-config', 'issue #25: ConventionUnknownParams from compressed-tensors ends with its fix (num_bits in '
     'config_groups), the library\'s ws::status_hint for the convention, not MLX\'s group_size and bits; nothing else '
     'changed'),
    ('conv/hub/fp8-block-no-config', 'issue #25: ConventionUnknownParams from fp8 ends with its fix (weight_block_size), '
     'the library\'s ws::status_hint for the convention, not MLX\'s group_size and bits; nothing else changed'),
    # Issue #28: GPTQ v1's zero spill is a warning (lib/include/weightstream/warning.h). Before the
    # general 'conv/' reason: these records differ only by it.
    ('conv/hub/gptq', 'issue #28: a GPTQ v1 zero point stored as -1 (GptqZeroSpill) is a warning: validate --json, '
     'inspect --json and dequant --json carry "warnings" (code, file, offset, tensor, weight, count, message) and '
     'stderr names each one (file, tensor, byte offset); nothing else changed'),
    # Issue #27 (FP8): the JSON of inspect's logical weights and of dequant's rows carries the
    # quantization parameters each weight's convention presents (ws::quant_parameters): an object /
    # a "key=value ..." string, empty for plain weights. Only that key is new in these records.
    ('conv/', 'issue #27: inspect --json gives each logical weight\'s "parameters" (its convention\'s '
     'ws::quant_parameters: mode, bits, group, scale_dtype; UQFF\'s type) and dequant --json each row\'s '
     '"parameters" string; nothing else changed'),
    ('samples/sharded', 'issue #27: dequant --json rows of a logical model carry a "parameters" string (empty for '
     'plain weights); nothing else changed'),
    ('variants/ollama-no-quant-type', 'issue #27: inspect --json and dequant --json carry each weight\'s '
     '"parameters" (Ollama: mode, bits, group, scale_dtype); nothing else changed'),
    ('variants/mlx-config-syntax', 'the file says MLX, so its config.json is its quantization source: a config that '
     'does not parse is the model\'s error (issue #16: the loader\'s rule); before, it was dropped and the U32 weights '
     'read as plain tensors'),
    ('variants/mlx', 'a convention error is the model\'s verdict (issue #16): validate and inspect say invalid with '
     'the MLX error (inspect also lists it under the logical weights, as before); before, both said valid'),
    ('variants/sharded-', 'a convention error across the shards is the model\'s verdict (issue #16): validate and '
     'inspect say invalid (inspect also lists it under the logical weights, as before); before, both said valid'),
    ('variants/ollama-blob-', 'the same error; the rows list every tensor blob of the manifest, with the tensors of '
     'each header read before the error (the loader checks a blob\'s size when it opens it, then its header); before, '
     'the blobs that had passed the size pre-checks, all with 0 tensors'),
    ('variants/ollama-layer-not-in-blob', 'the same error; the rows list every tensor blob with the tensors of each '
     'header read (before: all with 0 tensors), and validate counts them'),
    ('variants/ollama-', 'a convention error in a blob is the model\'s verdict (issue #16): validate and inspect say '
     'invalid (inspect also lists it under the logical weights, as before); before, both said valid'),
    ('tests/data/real/safetensors/many_tensors_2001.safetensors', 'F16 tensors asked as f16 are their stored halves, '
     'bit for bit, as F32 asked as f32 is: signalling NaNs stay signalling (before: quieted on the way through f32; '
     'found by the JS golden comparison of issue #16)'),
    ('variants/uqff-', 'a UQFF file is read as part of its directory\'s model and the model\'s convention errors are '
     'its verdict (issue #16; inspect also lists it under the logical weights, as before): before, both said valid'),
]


def why(case):
    for prefix, reason in WHY:
        if case.startswith(prefix):
            return reason
    return None


def check(lines, accept=False):
    """Compares the records just made with the goldens (intended.jsonl's records replacing theirs)."""
    want = {}
    with open(OUT_FILE) as f:
        for line in f.read().splitlines()[1:]:
            rec = json.loads(line)
            want[key(rec)] = rec
    intended_file = os.path.join(os.path.dirname(OUT_FILE), 'intended.jsonl')
    if os.path.exists(intended_file):
        with open(intended_file) as f:
            for line in f.read().splitlines():
                rec = json.loads(line)
                assert key(rec) in want, f'intended.jsonl replaces no golden record: {key(rec)}'
                rec.pop('why')
                want[key(rec)] = rec
    bad = 0
    got_keys = set()
    golden = {}
    with open(OUT_FILE) as f:
        for line in f.read().splitlines()[1:]:
            rec = json.loads(line)
            golden[key(rec)] = rec
    intended = []
    for line in lines:
        rec = json.loads(line)
        got_keys.add(key(rec))
        if accept and golden.get(key(rec)) != rec:
            reason = why(rec['case'])
            if reason is None:
                print(f'NO REASON for {key(rec)}: not accepted')
                bad += 1
                continue
            intended.append(json.dumps({**rec, 'why': reason}, sort_keys=True))
            continue
        w = want.get(key(rec))
        if w != rec:
            bad += 1
            if bad <= int(os.environ.get("WS_GOLDEN_SHOW", "20")):
                print(f'DIFFERS: {key(rec)}')
                for field in sorted(set(rec) | set(w or {})):
                    if (w or {}).get(field) != rec.get(field):
                        print(f'  {field}:\n    want {json.dumps((w or {}).get(field))[:2000]}\n    got  {json.dumps(rec.get(field))[:2000]}')
    missing = set(want) - got_keys
    for k in sorted(missing)[:20]:
        print(f'NOT RUN: {k}')
    if accept:
        with open(intended_file, 'w') as f:
            f.write(''.join(line + '\n' for line in intended))
        print(f'{intended_file}: {len(intended)} records changed on purpose')
    print(f'{len(lines)} records, {bad} differ, {len(missing)} not run')
    return 1 if bad or missing else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', default=os.path.join(ROOT, 'build/release/tools/weightstream'))
    ap.add_argument('--batch', help='ws-cli-batch (tests/cli/cli_batch.cpp): run the commands in one process')
    ap.add_argument('--variants-tool', default=os.path.join(ROOT, 'build/release/tests/model/ws-model-variants'))
    ap.add_argument('--commit', default=None, help='the commit the CLI was built at (default: HEAD)')
    ap.add_argument('--check', action='store_true', help='compare with the goldens instead of writing them')
    ap.add_argument('--run-all', action='store_true',
                    help='with --check, run every command (default: take those tests/golden/cli holds from it)')
    ap.add_argument('--accept-intended', action='store_true',
                    help='write the records that differ into intended.jsonl (each must have a reason in WHY)')
    args = ap.parse_args()
    commit = args.commit or subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True,
                                           text=True).stdout.strip()
    tmp = os.path.realpath(tempfile.mkdtemp(prefix='ws-goldens-'))
    cli = CliRunner(args.cli, args.batch)
    try:
        vdir = os.path.join(tmp, 'variants')
        subprocess.run([args.variants_tool, vdir], check=True)
        out = os.path.join(tmp, 'out')
        subs = [(out, '<out>'), (vdir, '<variants>'), (ROOT, '<root>')]
        lines = [json.dumps({'cli_commit': commit}, sort_keys=True)]
        # Only --check shares the store: writing or accepting records runs every command.
        store = args.check and not args.run_all
        shared = 0
        for cases, cwd in ((fixture_cases(), ROOT), (variant_cases(vdir), vdir)):
            for case, entry in cases:
                for rec in case_records(cli, case, entry, cwd, subs, out, store and cwd == ROOT):
                    shared += rec.pop('from_cli_golden', False)
                    lines.append(json.dumps(rec, sort_keys=True))
        if args.check or args.accept_intended:
            if store:
                print(f'{shared} records taken from tests/golden/cli (the same commands; ctest cli.golden runs them)')
            return check(lines[1:], accept=args.accept_intended)
        os.makedirs(os.path.dirname(OUT_FILE), exist_ok=True)
        with open(OUT_FILE, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        print(f'{OUT_FILE}: {len(lines) - 1} records from the CLI at {commit}')
    finally:
        cli.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

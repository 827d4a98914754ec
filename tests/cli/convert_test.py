#!/usr/bin/env python3
"""`weightstream convert` end to end (issue #29), checked by a plain safetensors reader written
here (json + struct, nothing of weightstream's): for each quantized fixture and each target type,
the output parses (8-byte length, JSON padded with spaces to 8 bytes, contiguous data_offsets
whose spans are dtype x shape, no trailing bytes), `weightstream validate` accepts it, and every
tensor's bytes are `weightstream dequant`'s values (f32 and f16 exactly; bf16 the f32 rounded to
nearest even by the rule below), under several read chunkings. A sharded output's index is
cross-checked against its shards; a second run keeps the complete shards, a damaged one is
rewritten; config.json loses only its quantization sections.

usage: convert_test.py CLI TESTS_DIR SHARED_DIR CASE
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

CLI, TESTS, SHARED, CASE = sys.argv[1:5]
CONV = os.path.join(TESTS, "data", "conventions")

# Fixtures: (name, model path). Every one quantized.
FIXTURES = {
    "mlx": os.path.join(CONV, "mlx", "model.safetensors"),
    "sharded-mlx": os.path.join(CONV, "sharded-mlx", "model.safetensors.index.json"),
    "ollama": os.path.join(CONV, "ollama", "manifest.json"),
    "uqff": os.path.join(CONV, "uqff", "model-0.uqff"),
    "uqff-f8q8": os.path.join(CONV, "uqff-f8q8", "model-0.uqff"),
    "gguf-blocks": os.path.join(SHARED, "testdata", "synthetic", "gguf", "all_quant_types.gguf"),
    "fp8-block": os.path.join(CONV, "hub", "fp8-block", "model.safetensors"),
    "fp8-block-bf16": os.path.join(CONV, "hub", "fp8-block-bf16", "model.safetensors"),
    "fp8-tensor-channel": os.path.join(CONV, "hub", "fp8-tensor-channel", "model.safetensors"),
    "modelopt-nvfp4": os.path.join(CONV, "hub", "modelopt-nvfp4", "model.safetensors"),
    "mxfp4-gpt-oss": os.path.join(CONV, "hub", "mxfp4-gpt-oss", "model.safetensors"),
    "gptq": os.path.join(CONV, "hub", "gptq", "model.safetensors"),
    "awq": os.path.join(CONV, "hub", "awq", "model.safetensors"),
    "ct-w4a16-group": os.path.join(CONV, "hub", "ct-w4a16-group", "model.safetensors"),
    "bnb-nf4-nested": os.path.join(CONV, "hub", "bnb-nf4-nested", "model.safetensors"),
    "bnb-int8": os.path.join(CONV, "hub", "bnb-int8", "model.safetensors"),
}

# The names a conversion must write for the Hub schemes: the parameters transformers loads
# (`<m>.weight`), never a packed tensor's or a companion's name. (Fixtures:
# tools/samplegen/hub_fixtures.cpp; two quantized modules of layer 0 each.)
L0 = "model.layers.0."
WEIGHT_NAMES = {
    "gptq": [L0 + "mlp.down_proj.weight", L0 + "self_attn.q_proj.weight"],
    "awq": [L0 + "mlp.down_proj.weight", L0 + "self_attn.k_proj.weight"],
    "ct-w4a16-group": [L0 + "mlp.down_proj.weight", L0 + "self_attn.q_proj.weight"],
}
COMPANION_SUFFIXES = (".qweight", ".qzeros", ".scales", ".g_idx", ".weight_packed", ".weight_scale",
                      ".weight_shape", ".weight_zero_point", ".weight_scale_inv", ".absmax", ".quant_map",
                      ".nested_absmax", ".nested_quant_map", ".SCB", ".weight_format", "_blocks", "_scales")

SIZES = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16,
         "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "F64": 64, "I64": 64, "U64": 64}


def run(*args, ok=True):
    p = subprocess.run([CLI, *args], capture_output=True)
    if ok and p.returncode != 0:
        raise AssertionError(f"{args}: exit {p.returncode}\n{p.stdout.decode()}\n{p.stderr.decode()}")
    return p


def read_safetensors(path):
    """A plain reader: returns (metadata, {name: (dtype, shape, bytes)}, order)."""
    data = open(path, "rb").read()
    assert len(data) >= 8, path
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0, f"{path}: header length {n} is not a multiple of 8"
    text = data[8:8 + n].decode("utf-8")
    stripped = text.rstrip(" ")
    assert len(text) - len(stripped) < 8, f"{path}: padding longer than 7 spaces"
    header = json.loads(stripped)
    meta = header.pop("__metadata__", None)
    assert list(header.keys())[:1] != ["__metadata__"]
    body = data[8 + n:]
    tensors, order, at = {}, [], 0
    for name, e in header.items():
        assert set(e) == {"dtype", "shape", "data_offsets"}, e
        b, end = e["data_offsets"]
        assert b == at, f"{path}: {name} begins at {b}, not {at}"
        elems = 1
        for d in e["shape"]:
            elems *= d
        assert (end - b) * 8 == elems * SIZES[e["dtype"]], f"{path}: {name} size"
        tensors[name] = (e["dtype"], e["shape"], body[b:end])
        order.append(name)
        at = end
    assert at == len(body), f"{path}: {len(body) - at} bytes after the last tensor"
    # The compact form serde_json writes: no spaces outside strings (re-serialised with the same
    # separators and key order, the header's JSON is byte-identical).
    full = {"__metadata__": meta} if meta is not None else {}
    full.update(header)
    assert json.dumps(full, separators=(",", ":"), ensure_ascii=False) == stripped, f"{path}: not compact JSON"
    return meta, tensors, order


def bf16_of_f32(raw):
    """f32 bytes -> bf16 bytes, round to nearest even; NaN: top half with the quiet bit."""
    out = bytearray()
    for (u,) in struct.iter_unpack("<I", raw):
        if (u & 0x7FFFFFFF) > 0x7F800000:
            h = (u >> 16) | 0x40
        else:
            h = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF) >> 16
        out += struct.pack("<H", h)
    return bytes(out)


def dequant_all(model, to, tmp):
    d = os.path.join(tmp, "dequant-" + to)
    p = run("dequant", model, "--all", "--json", "--to", to, "-o", d)
    rows = json.loads(p.stdout)["tensors"]
    return {r["name"]: open(r["output_file"], "rb").read() for r in rows if r.get("output_file")}


def outputs(out_dir):
    idx = os.path.join(out_dir, "model.safetensors.index.json")
    files = [os.path.join(out_dir, "model.safetensors")]
    index = None
    if os.path.exists(idx):
        index = json.load(open(idx))
        files = sorted({os.path.join(out_dir, f) for f in index["weight_map"].values()})
    return files, index


def check(model, tmp):
    f32 = dequant_all(model, "f32", tmp)
    f16 = dequant_all(model, "f16", tmp)
    first = None
    for to in ("bf16", "f16", "f32"):
        for chunk in ("65536", "1", "777"):
            out = os.path.join(tmp, f"out-{to}-{chunk}")
            run("convert", model, "-o", out, "--to", to, "--chunk-size", chunk, "--no-progress")
            files, index = outputs(out)
            assert index is None and len(files) == 1, "one file expected without --max-shard-size"
            meta, tensors, _ = read_safetensors(files[0])
            run("validate", files[0])
            for name in WEIGHT_NAMES.get(CASE, []):
                assert name in tensors, f"{name}: the dequantized parameter's name is missing ({sorted(tensors)})"
            for name in tensors:
                assert not name.endswith(COMPANION_SUFFIXES) and ".quant_state." not in name, f"{name}: a stored piece's name"
            assert meta["weightstream.converted_to"] == to, meta
            assert "format" in meta, meta
            # Every decoded weight; stored ones (integers) as dequant could not take them.
            for name, want32 in f32.items():
                assert name in tensors, f"{name} missing from the output"
                dtype, _, got = tensors[name]
                want = {"f32": want32, "f16": f16[name], "bf16": bf16_of_f32(want32)}[to]
                assert dtype == to.upper(), (name, dtype)
                assert got == want, f"{name}: values differ from dequant's ({to}, chunk {chunk})"
            blob = open(files[0], "rb").read()
            if chunk == "65536":
                first = blob
            assert blob == first, f"chunk {chunk} gives other bytes"
        first = None
    # --keep BF16 --keep F16 with f32 output: weights stored so keep their stored halves (what
    # dequant's f16 output is for F16, and the f32 values' exact bf16 for BF16), the rest is f32.
    out = os.path.join(tmp, "out-keep")
    run("convert", model, "-o", out, "--to", "f32", "--keep", "BF16", "--keep", "f16", "--no-progress")
    _, tensors, _ = read_safetensors(os.path.join(out, "model.safetensors"))
    for name, want32 in f32.items():
        dtype, _, got = tensors[name]
        want = {"F32": want32, "F16": f16[name], "BF16": bf16_of_f32(want32)}[dtype]
        assert got == want, f"{name}: --keep gives other values ({dtype})"


def check_shards(model, tmp):
    out = os.path.join(tmp, "sharded")
    run("convert", model, "-o", out, "--max-shard-size", "100", "--no-progress")
    files, index = outputs(out)
    assert index is not None and len(files) > 1, "--max-shard-size 100 gives several files"
    n = len(files)
    names = [f"model-{i:05d}-of-{n:05d}.safetensors" for i in range(1, n + 1)]
    assert [os.path.basename(f) for f in files] == names, files
    total, seen = 0, {}
    for f in files:
        _, tensors, _ = read_safetensors(f)
        for name, (_, _, b) in tensors.items():
            assert index["weight_map"][name] == os.path.basename(f), name
            assert name not in seen
            seen[name] = b
            total += len(b)
    assert set(seen) == set(index["weight_map"]), "index and shards list other tensors"
    assert index["metadata"]["total_size"] == total
    assert open(os.path.join(out, "model.safetensors.index.json")).read() == \
        json.dumps(index, indent=2, sort_keys=True) + "\n"
    run("validate", os.path.join(out, "model.safetensors.index.json"))
    # Unsharded, the same tensors and bytes.
    one = os.path.join(tmp, "one")
    run("convert", model, "-o", one, "--no-progress")
    _, tensors, _ = read_safetensors(os.path.join(one, "model.safetensors"))
    assert {k: v[2] for k, v in tensors.items()} == seen
    # Again: every shard kept. One damaged (same size): rewritten, the result as before.
    before = {f: open(f, "rb").read() for f in files}
    p = run("convert", model, "-o", out, "--max-shard-size", "100", "--no-progress")
    assert f"{n} kept from an earlier run" in p.stdout.decode(), p.stdout
    data = bytearray(before[files[1]])
    data[-1] ^= 0xFF
    open(files[1], "wb").write(data)
    p = run("convert", model, "-o", out, "--max-shard-size", "100", "--no-progress")
    assert f"{n - 1} kept from an earlier run" in p.stdout.decode(), p.stdout
    assert {f: open(f, "rb").read() for f in files} == before


def check_config(model, tmp):
    src = os.path.join(os.path.dirname(model), "config.json")
    out = os.path.join(tmp, "cfg")
    run("convert", model, "-o", out, "--no-progress")
    got = json.load(open(os.path.join(out, "config.json")))
    want = json.load(open(src))
    want.pop("quantization_config", None)
    want.pop("quantization", None)
    assert got == want, (got, want)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        if CASE == "shards":
            check_shards(FIXTURES["fp8-block"], tmp)
            return
        if CASE == "config":
            check_config(FIXTURES["fp8-block"], tmp)
            check_config(FIXTURES["mlx"], tmp)
            return
        check(FIXTURES[CASE], tmp)


if __name__ == "__main__":
    main()
    print("ok")

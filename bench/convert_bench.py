#!/usr/bin/env python3
"""convert's benchmark (issue #29): a synthetic block-FP8 model (DeepSeek-V3's layout: F8_E4M3
weights with F32 `weight_scale_inv` per 128x128 block, a BF16 embedding, config.json with
quant_method fp8) written to a scratch directory (default /tmp, never the repository), converted to
bf16 with `weightstream convert`, timed, its peak RSS read from wait4's rusage, and in the same run
`cp` of the same input bytes as the floor (each run after the page cache holds the input). Needs GNU
time (/usr/bin/time, Debian package time) for the peak RSS.

usage: convert_bench.py CLI [--size-mib N] [--dir DIR] [--runs N] [--max-shard-size SIZE] [--keep]
  --size-mib   input size (default 2048: the issue's 2 GiB)
"""
import argparse
import json
import os
import platform
import random
import shutil
import struct
import subprocess
import tempfile
import time


def write_model(path, size_mib):
    """Square 4096x4096 F8_E4M3 weights (16 MiB each) until the size is reached, with their scales."""
    rows = cols = 4096
    n_weights = max(1, size_mib // 16)
    rnd = random.Random(29)
    # One 16 MiB block of random E4M3 bytes (NaN codes 0x7F/0xFF avoided), reused for every weight.
    block = bytes(b if (b & 0x7F) != 0x7F else 0x3F for b in rnd.randbytes(rows * cols))
    scale = struct.pack("<%df" % ((rows // 128) * (cols // 128)),
                        *[rnd.uniform(1e-4, 1e-2) for _ in range((rows // 128) * (cols // 128))])
    header, off, order = {"__metadata__": {"format": "pt"}}, 0, []
    for i in range(n_weights):
        name = f"model.layers.{i}.mlp.down_proj"
        header[name + ".weight"] = {"dtype": "F8_E4M3", "shape": [rows, cols], "data_offsets": [off, off + len(block)]}
        order.append(block)
        off += len(block)
        header[name + ".weight_scale_inv"] = {"dtype": "F32", "shape": [rows // 128, cols // 128],
                                              "data_offsets": [off, off + len(scale)]}
        order.append(scale)
        off += len(scale)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in order:
            f.write(b)
    config = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
              "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                      "weight_block_size": [128, 128]}, "torch_dtype": "bfloat16"}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return 8 + len(text) + off, n_weights


def timed(cmd):
    """Wall seconds and peak RSS (KiB) of one child, the RSS as GNU time's %M reports it (wait4's
    ru_maxrss of a child of this process would count the pages of this Python process it was forked
    from, before its exec)."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{cmd}: exit status {p.returncode}: {p.stderr.decode()}")
    rss, user, system = p.stderr.decode().split()[-3:]
    return dt, int(rss), float(user) + float(system)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--size-mib", type=int, default=2048)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-shard-size", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ws-convert-bench-", dir=a.dir)
    try:
        src = os.path.join(work, "in")
        os.mkdir(src)
        size, n = write_model(src, a.size_mib)
        out_bytes = n * 4096 * 4096 * 2
        model = os.path.join(src, "model.safetensors")
        print(f"convert_bench: {platform.machine()}, {os.cpu_count()} CPUs; input {size / 2**20:.0f} MiB "
              f"({n} F8_E4M3 4096x4096 weights, 128x128 F32 block scales) -> bf16 output {out_bytes / 2**20:.0f} MiB")
        subprocess.run(["cat", model], stdout=subprocess.DEVNULL, check=True)  # into the page cache
        rows = []
        for r in range(a.runs):
            dst = os.path.join(work, "cp-out")
            t_cp, rss_cp, cpu_cp = timed(["cp", model, dst])
            os.remove(dst)
            out = os.path.join(work, "out")
            shutil.rmtree(out, ignore_errors=True)
            cmd = [a.cli, "convert", src, "-o", out, "--to", "bf16", "--no-progress"]
            if a.max_shard_size:
                cmd += ["--max-shard-size", a.max_shard_size]
            t_cv, rss_cv, cpu_cv = timed(cmd)
            rows.append((t_cp, rss_cp, t_cv, rss_cv))
            print(f"run {r + 1}: cp {t_cp:.2f} s ({size / t_cp / 1e6:.0f} MB/s, CPU {cpu_cp:.2f} s); convert {t_cv:.2f} s "
                  f"({size / t_cv / 1e6:.0f} MB/s of input, {out_bytes / t_cv / 1e6:.0f} MB/s of output, "
                  f"CPU {cpu_cv:.2f} s), peak RSS {rss_cv / 1024:.1f} MiB (cp {rss_cp / 1024:.1f} MiB)")
        best_cp = min(r[0] for r in rows)
        best_cv = min(r[2] for r in rows)
        peak = max(r[3] for r in rows)
        print(f"best: cp {size / best_cp / 1e6:.0f} MB/s, convert {size / best_cv / 1e6:.0f} MB/s of input "
              f"({best_cv / best_cp:.2f}x cp's time); peak RSS {peak / 1024:.1f} MiB (target < 64 MiB)")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

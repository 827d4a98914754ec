#!/usr/bin/env python3
"""The CLI's parallel, adaptive Range downloads (issue #31): `weightstream inspect` and
`weightstream dequant --all` of a safetensors model by URL from a loopback server (127.0.0.1, in
this process) that paces each response at 16 MiB/s (as a CDN caps each connection), serial
(`--connections 1`) against adaptive (the default), then the same unpaced, the order alternating.
Each dequant's output files are hashed (SHA-256) and compared with a dequant of the local file;
the CLI's `--verbose` lines give the most connections it ran, the server counts the requests and
the most responses it sent at once, and the CLI's peak RSS comes from GNU time (Debian package time). The model is
written to a scratch directory (default /tmp, never the repository).

usage: cli_parallel_download.py CLI [--size-mib N] [--pace-mib N] [--runs N] [--dir DIR]
  --size-mib  the model's size (default 256)
  --pace-mib  MiB/s per response on the paced server (default 16)
  --runs      unpaced runs of each (default 3; paced: 1 each)
"""
import argparse
import hashlib
import http.server
import json
import os
import platform
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time


def write_model(path, size_mib):
    """16 MiB F32 tensors of seeded random bytes (one block reused) until the size is reached."""
    block = random.Random(31).randbytes(16 << 20)
    n = max(1, size_mib // 16)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for i in range(n):
        header[f"layers.{i}.weight"] = {"dtype": "F32", "shape": [2048, 2048], "data_offsets": [off, off + len(block)]}
        off += len(block)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for _ in range(n):
            f.write(block)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root):
        super().__init__(("127.0.0.1", 0), Handler)
        self.root, self.pace = root, 0
        self.requests = self.active = self.peak = 0
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def handle_error(self, request, client_address):
        pass


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        s = self.server
        path = os.path.join(s.root, self.path.lstrip("/"))
        if not os.path.isfile(path):  # config.json beside the model: none
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(path)
        first, last, status = 0, size - 1, 200
        rng = self.headers.get("Range")
        if rng:
            a, b = rng[len("bytes="):].split("-")
            first, last, status = int(a), min(int(b), size - 1) if b else size - 1, 206
        self.send_response(status)
        self.send_header("Content-Length", str(last - first + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"bench"')
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
        self.end_headers()
        with s.lock:
            s.requests += 1
            s.active += 1
            s.peak = max(s.peak, s.active)
        try:
            t0, done, todo = time.monotonic(), 0, last - first + 1
            with open(path, "rb") as f:
                f.seek(first)
                while todo > 0:
                    chunk = f.read(min(todo, 65536))
                    if s.pace:
                        ahead = (done + len(chunk)) / s.pace - (time.monotonic() - t0)
                        if ahead > 0:
                            time.sleep(ahead)
                    self.wfile.write(chunk)
                    done += len(chunk)
                    todo -= len(chunk)
        except OSError:
            pass
        finally:
            with s.lock:
                s.active -= 1


def rss_run(cmd):
    """wall, peak RSS (MiB), stdout, stderr of one CLI run, the RSS from GNU time's %M (the
    process's own: wait4's rusage would count this Python process's pages at the fork)."""
    t0 = time.monotonic()
    with tempfile.NamedTemporaryFile() as rss:
        p = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M"] + cmd, capture_output=True)
        wall = time.monotonic() - t0
        kib = int(open(rss.name).read().split()[-1])
    if p.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout.decode(), p.stderr.decode()))
    return wall, kib / 1024, p.stdout.decode(), p.stderr.decode()


def digest_dir(d):
    h = hashlib.sha256()
    for n in sorted(os.listdir(d)):
        h.update(n.encode())
        with open(os.path.join(d, n), "rb") as f:
            for piece in iter(lambda: f.read(1 << 20), b""):
                h.update(piece)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--pace-mib", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="ws-parallel-", dir=a.dir)
    try:
        root = os.path.join(scratch, "www")
        os.makedirs(root)
        model = os.path.join(root, "model.safetensors")
        write_model(model, a.size_mib)
        srv = Server(root)
        url = "http://127.0.0.1:%d/model.safetensors" % srv.server_address[1]
        out_dir = os.path.join(scratch, "out")
        os.makedirs(out_dir)
        subprocess.run([a.cli, "dequant", model, "--all", "-o", out_dir, "--no-progress"], check=True,
                       stdout=subprocess.DEVNULL)
        local = digest_dir(out_dir)
        print("# %s, %s, %d CPUs, load %.2f; %d MiB model; CLI %s" % (
            platform.node(), platform.platform(), os.cpu_count(), os.getloadavg()[0], a.size_mib, a.cli))
        print("| server | command | reader | wall s | peak RSS MiB | connections | requests | output equal |")
        print("|---|---|---|---:|---:|---:|---:|---|")
        rows = []
        for paced, runs in ((True, 1), (False, a.runs)):
            srv.pace = (a.pace_mib << 20) if paced else 0
            for run in range(runs):
                order = [("serial", ["--connections", "1"]), ("adaptive", [])]
                if run % 2:
                    order.reverse()
                for cmd in ("inspect", "dequant"):
                    for name, opts in order:
                        shutil.rmtree(out_dir)
                        os.makedirs(out_dir)
                        args = [a.cli, cmd, url, "--verbose"] + opts
                        if cmd == "dequant":
                            args += ["--all", "-o", out_dir, "--no-progress"]
                        with srv.lock:
                            srv.requests = srv.peak = 0
                        wall, rss, out, err = rss_run(args)
                        counts = [int(m) for m in re.findall(r"(\d+) connection\(s\)", err)]
                        equal = "" if cmd == "inspect" else ("yes" if digest_dir(out_dir) == local else "NO")
                        row = ("paced %d MiB/s" % a.pace_mib if paced else "unpaced", cmd, name, wall, rss,
                               max(counts + [srv.peak]), srv.requests, equal)
                        rows.append(row)
                        print("| %s | %s | %s | %.2f | %.0f | %d | %d | %s |" % row, flush=True)
        for server in sorted({r[0] for r in rows}):
            for cmd in ("inspect", "dequant"):
                s = sorted(r[3] for r in rows if r[0] == server and r[1] == cmd and r[2] == "serial")
                p = sorted(r[3] for r in rows if r[0] == server and r[1] == cmd and r[2] == "adaptive")
                if s and p:
                    print("%s %s: serial median %.2f s, adaptive median %.2f s: %.2fx" % (
                        server, cmd, s[len(s) // 2], p[len(p) // 2], s[len(s) // 2] / p[len(p) // 2]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The CLI on http:// URLs (issue #20), against a loopback server started here (127.0.0.1 only).

    http_cli_test.py CLI REPO CASE

The server serves a directory with or without Range requests, counts the file bytes it sends,
and can answer 416 to everything, cut a connection half-way, redirect, or want a token. For the
parallel reader (issue #31) it sends an ETag and honours If-Range, and can pace each response
(bytes per second per connection), answer some range requests 429 with Retry-After, cut one range
mid-way, or change the file's ETag after some requests (the file changed on the server). Each CASE
is one ctest test (tests/cli/CMakeLists.txt); outputs are compared with the same command on the
local files, byte for byte (the URL written where the path was).
"""
import hashlib
import http.server
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

CLI, REPO, CASE = sys.argv[1], sys.argv[2], sys.argv[3]


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root, ranges=True):
        super().__init__(("127.0.0.1", 0), Handler)
        self.root = root
        self.ranges = ranges
        self.always = None      # answer every request with this status (416)
        self.cut = False        # send half of each body, then close the connection
        self.token = None       # require "Authorization: Bearer <token>"
        self.pace = 0           # bytes per second per response (0: unpaced)
        # The first `count` range requests starting at or past `offset`: [offset, count].
        self.throttle = [0, 0]   # answered 429 with Retry-After: 1
        self.ratelimit = [0, 0]  # answered 206 with a RateLimit header saying none remain for 1 s
        self.cut_once = [0, 0]   # cut half-way (the connection closed)
        self.change_at = None    # range requests at or past this offset see another ETag (changed)
        self.active = 0         # responses being sent now
        self.peak = 0           # the most at once
        self.sent = {}          # path -> file bytes sent
        self.requests = []      # (path, Range header)
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def handle_error(self, request, client_address):
        pass  # a client that stops reading (inspect without Range) resets its connection: expected

    def url(self, rel):
        return "http://127.0.0.1:%d/%s" % (self.server_address[1], rel)

    def total(self):
        return sum(self.sent.values())


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses its connection

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        s = self.server
        rng = self.headers.get("Range")
        at = int(rng[len("bytes="):].split("-")[0]) if rng else 0

        def hit(rule):  # counts one use of an [offset, count] rule
            with s.lock:
                if rng and rule[1] > 0 and at >= rule[0]:
                    rule[1] -= 1
                    return True
            return False

        with s.lock:
            s.requests.append((self.path, rng))
        etag = '"v2"' if s.change_at is not None and rng and at >= s.change_at else '"v1"'
        if hit(s.throttle):
            return self.reply(429, b"slow down\n", [("Retry-After", "1")])
        limited = hit(s.ratelimit)
        cut = s.cut or hit(s.cut_once)
        if self.path.startswith("/redirect/"):
            return self.reply(302, headers=[("Location", "/" + self.path[len("/redirect/"):])])
        if s.token and self.headers.get("Authorization") != "Bearer " + s.token:
            return self.reply(401, b"token wanted\n")
        if s.always:
            return self.reply(s.always, b"no\n")
        path = os.path.join(s.root, self.path.lstrip("/"))
        if not os.path.isfile(path):
            return self.reply(404, b"not found\n")
        size = os.path.getsize(path)
        first, last, status = 0, size - 1, 200
        if_range = self.headers.get("If-Range")
        if rng and s.ranges and (if_range is None or if_range == etag):
            a, b = rng[len("bytes="):].split("-")
            first = int(a)
            last = min(int(b), size - 1) if b else size - 1
            if first >= size:
                return self.reply(416, headers=[("Content-Range", "bytes */%d" % size)])
            status = 206
        length = last - first + 1
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
        if s.ranges:
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", etag)
        if limited:
            self.send_header("RateLimit", '"default";r=0;t=1')
        self.end_headers()
        todo = length // 2 if cut else length
        with s.lock:
            s.active += 1
            s.peak = max(s.peak, s.active)
        t0, done = time.monotonic(), 0
        try:
            with open(path, "rb") as f:
                f.seek(first)
                while todo > 0:
                    chunk = f.read(min(todo, 65536))
                    if s.pace:  # this response's bytes so far at no more than `pace` per second
                        ahead = (done + len(chunk)) / s.pace - (time.monotonic() - t0)
                        if ahead > 0:
                            time.sleep(ahead)
                    try:
                        self.wfile.write(chunk)
                    except OSError:
                        return  # the client went away
                    todo -= len(chunk)
                    done += len(chunk)
                    with s.lock:
                        s.sent[self.path] = s.sent.get(self.path, 0) + len(chunk)
        finally:
            with s.lock:
                s.active -= 1
        if cut:
            self.close_connection = True


def run(args, env=None):
    e = dict(os.environ)
    for k in ("WEIGHTSTREAM_TOKEN", "HF_TOKEN"):
        e.pop(k, None)
    e.update(env or {})
    p = subprocess.run([CLI] + args, capture_output=True, env=e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def equal(a, b, what):
    if a != b:
        failures.append(what)
        print("FAIL: %s\n--- local\n%s\n--- url\n%s" % (what, a, b))


def same_as_local(server, root, rel, args, want_status):
    """The command on the URL gives the local command's output (the URL where the path was)."""
    local = os.path.join(root, rel)
    s1, o1, e1 = run(args(local))
    s2, o2, e2 = run(args(server.url(rel)))
    check(s1 == want_status, "local %s: exit %d, wanted %d (%s)" % (rel, s1, want_status, e1))
    check(s2 == want_status, "url %s: exit %d, wanted %d (%s)" % (rel, s2, want_status, e2))
    equal(o1.replace(local, "@"), o2.replace(server.url(rel), "@"), "%s %s: stdout" % (" ".join(args("X")), rel))
    equal(e1.replace(local, "@"), e2.replace(server.url(rel), "@"), "%s %s: stderr" % (" ".join(args("X")), rel))


def big_safetensors(path, data_bytes):
    """A safetensors file with a small header and a large data section (zeros)."""
    n = data_bytes // 4
    header = {"__metadata__": {"what": "big"},
              "a": {"dtype": "F32", "shape": [16], "data_offsets": [0, 64]},
              "b": {"dtype": "F32", "shape": [n - 16], "data_offsets": [64, n * 4]}}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + n * 4)
    return 8 + len(h)


def tree(tmp):
    """The files served: samples, the split GGUF fixtures, a large file."""
    root = os.path.join(tmp, "www")
    os.makedirs(root)
    shutil.copy(os.path.join(REPO, "samples/tiny-llama.safetensors"), root)
    shutil.copytree(os.path.join(REPO, "samples/sharded"), os.path.join(root, "sharded"))
    shutil.copytree(os.path.join(REPO, "tests/data/split-gguf"), os.path.join(root, "split"),
                    ignore=shutil.ignore_patterns("malformed"))
    header_end = big_safetensors(os.path.join(root, "big.safetensors"), 48 << 20)
    with open(os.path.join(root, "bad.safetensors"), "wb") as f:  # declares a header past its end
        f.write(struct.pack("<Q", 1 << 20) + b"{}")
    return root, header_end


def case_inspect(ranges):
    with tempfile.TemporaryDirectory() as tmp:
        root, header_end = tree(tmp)
        srv = Server(root, ranges)
        s, out, err = run(["inspect", srv.url("big.safetensors"), "--json"])
        check(s == 0, "inspect exit %d: %s" % (s, err))
        check(json.loads(out)["tensors"][1]["name"] == "b", "inspect --json lists tensor b")
        size = os.path.getsize(os.path.join(root, "big.safetensors"))
        sent = srv.sent.get("/big.safetensors", 0)
        print("inspect of a %d-byte file (header ends at %d): %d file bytes sent, requests %s"
              % (size, header_end, sent, srv.requests))
        if ranges:
            # The 8-byte length, then the header: nothing of the data.
            check(sent == header_end, "inspect sent %d bytes, the header is %d" % (sent, header_end))
        else:
            # The whole body was offered; the CLI stops reading after the header (what the kernel
            # buffers took is counted too).
            check(sent < size // 4, "inspect without Range: %d of %d bytes sent" % (sent, size))
        same_as_local(srv, root, "tiny-llama.safetensors", lambda p: ["inspect", p], 0)
        same_as_local(srv, root, "sharded/model.safetensors.index.json", lambda p: ["inspect", p], 0)
        same_as_local(srv, root, "split/tiny-00002-of-00003.gguf", lambda p: ["inspect", p, "--json"], 0)


def case_validate(ranges):
    with tempfile.TemporaryDirectory() as tmp:
        root, _ = tree(tmp)
        srv = Server(root, ranges)
        for rel in ["tiny-llama.safetensors", "big.safetensors", "sharded/model.safetensors.index.json",
                    "split/tiny-00001-of-00003.gguf", "split/meta-first-00003-of-00004.gguf"]:
            same_as_local(srv, root, rel, lambda p: ["validate", p], 0)
            same_as_local(srv, root, rel, lambda p: ["validate", "--json", p], 0)
        same_as_local(srv, root, "bad.safetensors", lambda p: ["validate", p], 1)
        size = os.path.getsize(os.path.join(root, "big.safetensors"))
        sent = srv.sent.get("/big.safetensors", 0)
        if ranges:
            # Parallel reads (the default) may have a long range cut where a second connection
            # starts: what the server had sent past the cut (socket buffers) is sent again.
            check(2 * size <= sent <= 2 * size + (32 << 20), "validate read big.safetensors whole, twice: %d bytes" % sent)
            srv.sent.clear()
            s, out, err = run(["validate", srv.url("big.safetensors"), "--connections", "1"])
            sent = 2 * srv.sent.get("/big.safetensors", 0)
            check(s == 0, "validate --connections 1: %d %s" % (s, out))
        check(sent == 2 * size, "validate read big.safetensors whole, twice: %d bytes" % sent)
        # Through a redirect.
        s, out, err = run(["validate", srv.url("redirect/tiny-llama.safetensors")])
        check(s == 0 and out.endswith(": valid (safetensors, 21 tensors)\n"), "redirect: %d %s %s" % (s, out, err))


def case_dequant(ranges):
    with tempfile.TemporaryDirectory() as tmp:
        root, _ = tree(tmp)
        srv = Server(root, ranges)
        for rel, args in [("tiny-llama.safetensors", ["--all"]),
                          ("tiny-llama.safetensors", ["--all", "--to", "f16"]),
                          ("sharded/model.safetensors.index.json", ["--all"]),
                          ("split/tiny-00003-of-00003.gguf", ["--all"])]:
            outs = []
            for src in (os.path.join(root, rel), srv.url(rel)):
                d = tempfile.mkdtemp(dir=tmp)
                s, out, err = run(["dequant", src] + args + ["-o", d, "--no-progress"])
                check(s == 0, "dequant %s %s: exit %d %s" % (src, args, s, err))
                outs.append({n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))})
            check(len(outs[0]) > 0, "dequant %s wrote files" % rel)
            check(outs[0] == outs[1], "dequant %s %s: the URL's output files differ from the local ones" % (rel, args))


def case_errors():
    with tempfile.TemporaryDirectory() as tmp:
        root, _ = tree(tmp)
        srv = Server(root, True)
        url = srv.url("missing.safetensors")
        s, out, err = run(["validate", url])
        equal(out, "%s: error: cannot open: HTTP 404 Not Found from %s.\n" % (url, url), "404 message")
        check(s == 2, "404: exit %d" % s)
        # A shard the index names that the server does not have: the local message, the shard named.
        os.remove(os.path.join(root, "sharded/model-00002-of-00003.safetensors"))
        same_as_local(srv, root, "sharded/model.safetensors.index.json", lambda p: ["validate", p], 2)
        # A UQFF model is its directory's files: a URL has no listing to pick them from.
        shutil.copytree(os.path.join(REPO, "tests/data/conventions/uqff"), os.path.join(root, "uqff"))
        url = srv.url("uqff/model-0.uqff")
        s, out, err = run(["validate", url])
        check(s == 2 and out.startswith("%s: error: cannot list the directory of %s: " % (url, url)), "uqff: %s" % out)
        srv.always = 416
        url = srv.url("tiny-llama.safetensors")
        s, out, err = run(["validate", url])
        equal(out, "%s: error: cannot open: HTTP 416 Requested Range Not Satisfiable from %s.\n" % (url, url), "416 message")
        check(s == 2, "416: exit %d" % s)
        srv.always = None
        # Every response cut half-way by a server without ranges: the whole body cannot be asked for
        # from where it was cut (a server with ranges: case_parallel's serial resumes).
        srv.cut = True
        srv.ranges = False
        s, out, err = run(["validate", url])
        check(s == 2, "cut (no ranges): exit %d" % s)
        check(out.startswith("%s: error: cannot read: HTTP 200 " % url) and
              ("response from %s ended after" % url) in out, "cut (no ranges): %s" % out)
        print(out, end="")
        srv.shutdown()
        srv.server_close()
        # Nothing listening.
        s, out, err = run(["validate", url])
        equal(out, "%s: error: cannot open: Couldn't connect to server: %s.\n" % (url, url), "refused message")
        check(s == 2, "refused: exit %d" % s)
        print(out, end="")


def case_auth():
    with tempfile.TemporaryDirectory() as tmp:
        root, _ = tree(tmp)
        srv = Server(root, True)
        srv.token = "s3cret"
        url = srv.url("tiny-llama.safetensors")
        valid = "%s: valid (safetensors, 21 tensors)\n" % url
        s, out, err = run(["validate", url])
        check(s == 2 and out == "%s: error: cannot open: HTTP 401 Unauthorized from %s.\n" % (url, url), "no token: %s" % out)
        s, out, err = run(["validate", url, "--token", "s3cret"])
        check(s == 0 and out == valid, "--token: %s %s" % (out, err))
        s, out, err = run(["validate", url], {"WEIGHTSTREAM_TOKEN": "s3cret"})
        check(s == 0 and out == valid, "WEIGHTSTREAM_TOKEN: %s %s" % (out, err))
        s, out, err = run(["validate", url, "--header", "Authorization: Bearer s3cret"])
        check(s == 0 and out == valid, "--header: %s %s" % (out, err))
        # HF_TOKEN goes to huggingface.co only, never to another host.
        s, out, err = run(["validate", url], {"HF_TOKEN": "s3cret"})
        check(s == 2 and "HTTP 401" in out, "HF_TOKEN sent to 127.0.0.1: %s" % out)
        s, out, err = run(["validate", url, "--header", "no colon"])
        check(s == 2 and "--header wants 'Name: value'" in err, "--header check: %s" % err)


def random_safetensors(path, data_bytes):
    """A safetensors file of one F32 tensor of seeded random bytes: every byte tells."""
    h = json.dumps({"w": {"dtype": "F32", "shape": [data_bytes // 4], "data_offsets": [0, data_bytes]}}).encode()
    h += b" " * (-len(h) % 8)
    data = struct.pack("<Q", len(h)) + h + random.Random(31).randbytes(data_bytes)
    with open(path, "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def most_connections(err):
    """The largest count in the CLI's --verbose 'N connection(s)' lines (0: none)."""
    return max([int(m) for m in re.findall(r"(\d+) connection\(s\)", err)] or [0])


def case_parallel():
    """Parallel Range requests: adaptive on a paced server (more connections, every byte equal),
    pinned to one, 429 and RateLimit back-off, a range cut and resumed, a file changed between
    ranges, a range cut for good."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "www")
        os.makedirs(root)
        digest = random_safetensors(os.path.join(root, "r.safetensors"), 12 << 20)
        srv = Server(root, True)
        url = srv.url("r.safetensors")
        sha = ["--sha256", "r.safetensors=" + digest]
        valid = "%s: valid (safetensors, 1 tensor)\n" % url
        # Adaptive, 4 MiB/s per connection: it adds connections (the serial read takes 3 s).
        srv.pace = 4 << 20
        t0 = time.monotonic()
        s, out, err = run(["validate", url, "--verbose"] + sha)
        print("adaptive, paced: %.2f s, at most %d requests at once\n%s" % (time.monotonic() - t0, srv.peak, err), end="")
        check(s == 0 and out == valid, "adaptive paced: %d %s %s" % (s, out, err))
        check(most_connections(err) >= 2 and srv.peak >= 2, "adaptive paced: %d connections, %d at once" % (most_connections(err), srv.peak))
        # --connections 1: the serial reader, one request at a time, nothing said.
        srv.pace, srv.peak = 0, 0
        s, out, err = run(["validate", url, "--verbose", "--connections", "1"] + sha)
        check(s == 0 and out == valid and err == "" and srv.peak == 1, "--connections 1: %d %s %s peak %d" % (s, out, err, srv.peak))
        # dequant through 3 pinned connections and a small budget: the local file's output.
        outs = []
        for src in (os.path.join(root, "r.safetensors"), url):
            d = tempfile.mkdtemp(dir=tmp)
            s, out, err = run(["dequant", src, "--all", "-o", d, "--no-progress", "--connections", "3",
                               "--max-inflight-bytes", "1M"])
            check(s == 0, "dequant %s: %d %s" % (src, s, err))
            outs.append(open(os.path.join(d, "w.bin"), "rb").read())
        check(len(outs[0]) == 12 << 20 and outs[0] == outs[1], "dequant through 3 connections: the local file's values")
        # 429 with Retry-After twice, a RateLimit with none remaining once: back-off, then on.
        srv.throttle = [4 << 20, 2]
        srv.ratelimit = [2 << 20, 1]
        s, out, err = run(["validate", url, "--verbose", "--connections", "4"] + sha)
        print(err, end="")
        check(s == 0 and out == valid, "429: %d %s %s" % (s, out, err))
        check("HTTP 429, new requests wait 1000 ms" in err and "RateLimit says no requests remain" in err, "429: %s" % err)
        check(srv.throttle[1] == 0 and srv.ratelimit[1] == 0, "429: the rules were used")
        # A range cut half-way: asked for again from its next byte, every byte equal.
        srv.cut_once = [6 << 20, 1]
        s, out, err = run(["validate", url, "--verbose", "--connections", "4"] + sha)
        check(s == 0 and out == valid and "asked for again" in err, "cut once: %d %s %s" % (s, out, err))
        # Cut every time: an error naming the URL and the status, after 3 resumes.
        srv.cut_once = [6 << 20, 1000]
        s, out, err = run(["validate", url, "--connections", "4"])
        check(s == 2 and out.startswith("%s: error: cannot read: HTTP 206 Partial Content response from %s ended after "
                                         % (url, url)) and "3 resumes" in out, "cut always: %d %s" % (s, out))
        print(out, end="")
        # The serial reader (--connections 1) the same: a cut response resumed from its next byte
        # with If-Range, every byte equal; cut every time, an error after 3 resumes.
        srv.cut_once = [6 << 20, 1]
        s, out, err = run(["validate", url, "--verbose", "--connections", "1"] + sha)
        check(s == 0 and out == valid and "asked for again" in err, "serial, cut once: %d %s %s" % (s, out, err))
        print(err, end="")
        srv.cut_once = [6 << 20, 1000]
        s, out, err = run(["validate", url, "--connections", "1"])
        check(s == 2 and out.startswith("%s: error: cannot read: HTTP 206 Partial Content response from %s ended after "
                                         % (url, url)) and "3 resumes)" in out, "serial, cut always: %d %s" % (s, out))
        print(out, end="")
        # The file changes on the server between ranges: If-Range answers 200, an error says so
        # (parallel and serial: before, the serial reader read the changed file's bytes on).
        srv.cut_once = [0, 0]
        srv.change_at = 6 << 20
        for conns in ("2", "1"):
            s, out, err = run(["validate", url, "--connections", conns])
            check(s == 2 and out.startswith("%s: error: cannot read: the file at %s changed while it was read (HTTP 200 OK to "
                                             "If-Range: \"v1\" for bytes " % (url, url)), "changed (%s): %d %s" % (conns, s, out))
            print(out, end="")


cases = {
    "inspect_range": lambda: case_inspect(True),
    "inspect_norange": lambda: case_inspect(False),
    "validate_range": lambda: case_validate(True),
    "validate_norange": lambda: case_validate(False),
    "dequant_range": lambda: case_dequant(True),
    "dequant_norange": lambda: case_dequant(False),
    "errors": case_errors,
    "auth": case_auth,
    "parallel": case_parallel,
}
cases[CASE]()
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")

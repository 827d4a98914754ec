"""Runs CLI command lines for the golden harnesses (cli_golden.py, tests/model/make_goldens.py):
each in a process of its own, or, given the batch runner (tests/cli/cli_batch.cpp, ws-cli-batch),
many in one process of it (under ASan a process start is ~40-60 ms of each of ~3,500 runs).

run(argv, cwd) -> (exit status, stdout bytes, stderr bytes), the same either way. A batch process
that dies (a sanitizer report ends it) is replaced, and the command that killed it is run again in
a process of its own, so its report and exit status are what the harness records and shows.
"""
import os
import subprocess
import threading


def _environment():
    return {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "WEIGHTSTREAM_TOKEN")}


class CliRunner:
    def __init__(self, cli, batch=None, timeout=600):
        self.cli = cli
        self.batch = batch
        self.timeout = timeout
        self._local = threading.local()  # one batch process per thread
        self._procs = []
        self._lock = threading.Lock()

    def run(self, argv, cwd):
        if self.batch and not any("\n" in a for a in [cwd] + list(argv)):
            got = self._run_batched(argv, cwd)
            if got is not None:
                return got
        return self._run_alone(argv, cwd)

    def _run_alone(self, argv, cwd):
        p = subprocess.run([self.cli] + list(argv), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                           env=_environment(), timeout=self.timeout)
        return p.returncode, p.stdout, p.stderr

    def _process(self):
        p = getattr(self._local, "proc", None)
        if p is None or p.poll() is not None:
            p = subprocess.Popen([self.batch], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_environment())
            self._local.proc = p
            with self._lock:
                self._procs.append(p)
        return p

    def _run_batched(self, argv, cwd):
        p = self._process()
        fields = [os.path.abspath(cwd)] + list(argv)
        request = f"{len(fields)}\n".encode() + b"".join(os.fsencode(f) + b"\n" for f in fields)
        try:
            p.stdin.write(request)
            p.stdin.flush()
            head = p.stdout.readline()
            rc, n_out, n_err = (int(x) for x in head.split())
            out = p.stdout.read(n_out)
            err = p.stdout.read(n_err)
            if len(out) != n_out or len(err) != n_err:
                raise ValueError("short response")
            return rc, out, err
        except (OSError, ValueError):
            # The process died on this command (or spoke nonsense): it is gone, the command runs alone.
            p.kill()
            p.wait()
            self._local.proc = None
            return None

    def close(self):
        with self._lock:
            procs, self._procs = self._procs, []
        for p in procs:
            if p.poll() is None:
                p.stdin.close()
                p.wait()

// ws-cli-batch: runs many CLI command lines in one process, each with its own stdout, stderr and
// exit status, for the golden harnesses (tests/golden/cli_golden.py, tests/model/make_goldens.py;
// their client is tests/golden/cli_runner.py).
//
// Why: under ASan a process start costs ~40-60 ms (shadow memory, the runtime's init) and the
// harnesses run the CLI ~3,500 times there; one process saves that on every command, while the
// release build still runs each command in a process of its own (the same goldens), so an exit
// status or output that only a fresh process would give is still held to them.
//
// Protocol (stdin / stdout, binary):
//   request:  "<n>\n" then n lines: the working directory, then argv[1..] (no newlines in them)
//   response: "<exit status> <stdout bytes> <stderr bytes>\n" then those bytes
// The CLI itself reads /dev/null as stdin. EOF on the requests ends the process with status 0.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "run_cli.h"

namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The whole of a capture file, from its start.
std::string contents(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return {};
  std::string s(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < s.size()) {
    ssize_t r = pread(fd, &s[got], s.size() - got, static_cast<off_t>(got));
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  s.resize(got);
  return s;
}

// A fresh, empty capture file on `target` (1 or 2).
bool capture_into(int fd, int target) {
  if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) return false;
  return dup2(fd, target) == target;
}

bool read_line(FILE* in, std::string* line) {
  line->clear();
  int c;
  while ((c = fgetc(in)) != EOF && c != '\n') line->push_back(static_cast<char>(c));
  return c == '\n';
}

}  // namespace

int main() {
  // The harnesses run the CLI without the tokens of the environment (a token would change what a
  // URL source does); the same here.
  unsetenv("HF_TOKEN");
  unsetenv("WEIGHTSTREAM_TOKEN");
  const int requests = dup(0), responses = dup(1), real_stderr = dup(2);
  const int devnull = open("/dev/null", O_RDWR);
  FILE* out_file = tmpfile();
  FILE* err_file = tmpfile();
  if (requests < 0 || responses < 0 || real_stderr < 0 || devnull < 0 || !out_file || !err_file) {
    perror("ws-cli-batch: setting up");
    return 2;
  }
  dup2(devnull, 0);
  FILE* in = fdopen(requests, "r");
  const int out_fd = fileno(out_file), err_fd = fileno(err_file);
  std::string line;
  while (read_line(in, &line)) {
    const long n = strtol(line.c_str(), nullptr, 10);
    std::vector<std::string> fields;
    for (long i = 0; i < n; ++i) {
      if (!read_line(in, &line)) {
        dprintf(real_stderr, "ws-cli-batch: a request ended early\n");
        return 2;
      }
      fields.push_back(line);
    }
    if (fields.empty() || chdir(fields[0].c_str()) != 0) {
      dprintf(real_stderr, "ws-cli-batch: no working directory in a request\n");
      return 2;
    }
    std::vector<char*> argv;
    static char program[] = "weightstream";
    argv.push_back(program);
    for (size_t i = 1; i < fields.size(); ++i) argv.push_back(&fields[i][0]);
    argv.push_back(nullptr);

    fflush(stdout);
    fflush(stderr);
    if (!capture_into(out_fd, 1) || !capture_into(err_fd, 2)) {
      dprintf(real_stderr, "ws-cli-batch: cannot redirect the output\n");
      return 2;
    }
    const int status = wscli::run_cli(static_cast<int>(argv.size() - 1), argv.data());
    fflush(stdout);
    fflush(stderr);
    dup2(devnull, 1);
    dup2(real_stderr, 2);

    const std::string out = contents(out_fd), err = contents(err_fd);
    char head[64];
    const int h = snprintf(head, sizeof head, "%d %zu %zu\n", status, out.size(), err.size());
    if (!write_all(responses, head, static_cast<size_t>(h)) || !write_all(responses, out.data(), out.size()) ||
        !write_all(responses, err.data(), err.size()))
      return 2;
  }
  return 0;
}

// tests/cli — running the built programs and handling files, for the end-to-end tests.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace clitest {

struct RunResult {
  int exit_code = -1;  // -1: did not exit normally (crashed)
  std::string out;
  std::string err;
};

// Runs argv[0] with the arguments, stdin from `stdin_path` (or /dev/null), capturing stdout and
// stderr separately.
RunResult run(const std::vector<std::string>& argv, const std::string& stdin_path = "");

#ifdef WS_CLI
// The built `weightstream` program (WS_CLI: its path, defined by the test target) run with `args`.
inline RunResult cli(std::vector<std::string> args, const std::string& stdin_path = "") {
  args.insert(args.begin(), WS_CLI);
  return run(args, stdin_path);
}
#endif

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The 8-byte little-endian length prefix of a safetensors file.
std::string u64le(uint64_t v);

}  // namespace clitest

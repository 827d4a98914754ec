// weightstream CLI — a progress bar on stderr for big files.
//
// Only for files over 64 MiB and only when stderr is a terminal: small files finish before a bar
// would be seen, and a bar in a log file or a pipe is noise.
#pragma once

#include <stdint.h>

#include <chrono>
#include <string>

namespace wscli {

constexpr uint64_t kProgressMinBytes = 64ull << 20;

// One line of the bar: "label  [#####     ]  45%  1.2 GB / 2.7 GB  310.5 MB/s". Pure, for tests.
std::string progress_line(const std::string& label, uint64_t done, uint64_t total, double seconds);

class Progress {
 public:
  // `allowed` is the user's switch (--no-progress); the size and isatty checks are made here.
  Progress(const std::string& label, bool size_known, uint64_t total, bool allowed);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Cheap enough to call per chunk: redraws at most ten times a second.
  void update(uint64_t done);
  // Erases the bar so the report that follows starts on a clean line.
  void finish();

 private:
  void draw(uint64_t done);

  bool active_ = false;
  std::string label_;
  uint64_t total_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace wscli

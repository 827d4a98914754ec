// Counts heap allocations of the whole process, ggml's included.
//
// alloc_counter.cpp replaces malloc and friends in ws-bench-gguf with thin wrappers around glibc's
// own allocator. The executable's definitions win symbol resolution for every shared object, so
// the dlopen'ed libggml-base.so (and libstdc++'s operator new, which it uses) allocates through
// them too. Two levels of detail:
//   - calls are always counted: an increment per call, cheap enough to leave on in timed loops,
//     which is how the benchmark shows that our reader allocates nothing while it is being timed;
//   - live bytes and their peak are tracked only inside an AllocWindow (malloc_usable_size per
//     call), for the untimed runs that measure how much heap ggml needs.
#pragma once

#include <stdint.h>

namespace wsbench {

// Allocation calls (malloc, calloc, realloc, memalign & co.) since the process started.
uint64_t alloc_calls();

struct HeapUse {
  uint64_t calls = 0;       // allocation calls inside the window
  uint64_t peak_bytes = 0;  // highest live heap inside the window, above its level at the start
  int64_t end_bytes = 0;    // live heap at the end relative to the start (< 0: freed older blocks)
};

// Tracks live heap bytes from construction to stop(). One at a time; not thread-safe (the
// benchmark runs on one thread, and ggml's GGUF reader starts none).
class AllocWindow {
 public:
  AllocWindow();
  ~AllocWindow();
  HeapUse stop();

 private:
  uint64_t calls0_;
  bool stopped_ = false;
};

}  // namespace wsbench

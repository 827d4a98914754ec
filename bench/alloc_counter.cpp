// Implements alloc_counter.h by defining the C allocation functions in the executable.
//
// Only C-level functions are replaced: libstdc++'s operator new calls malloc, so C++ allocations
// (ggml's gguf.cpp uses std::vector and std::string) are counted without replacing operator new.
// Counters are relaxed atomics updated with a plain load + store (no locked instruction): exact on
// one thread, and a race-free approximation should another thread ever allocate.
#include "alloc_counter.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>

#include <atomic>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}

namespace {

std::atomic<uint64_t> g_calls{0};
std::atomic<bool> g_tracking{false};
std::atomic<int64_t> g_live{0};  // bytes, relative to the window's start
std::atomic<int64_t> g_peak{0};

inline void bump(std::atomic<int64_t>& a, int64_t d) {
  a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

inline void note_alloc(void* p) {
  g_calls.store(g_calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (p && g_tracking.load(std::memory_order_relaxed)) {
    bump(g_live, int64_t(malloc_usable_size(p)));
    int64_t live = g_live.load(std::memory_order_relaxed);
    if (live > g_peak.load(std::memory_order_relaxed)) g_peak.store(live, std::memory_order_relaxed);
  }
}

inline void note_free(void* p) {
  if (p && g_tracking.load(std::memory_order_relaxed)) bump(g_live, -int64_t(malloc_usable_size(p)));
}

}  // namespace

extern "C" {

void* malloc(size_t n) noexcept {
  void* p = __libc_malloc(n);
  note_alloc(p);
  return p;
}
void* calloc(size_t count, size_t n) noexcept {
  void* p = __libc_calloc(count, n);
  note_alloc(p);
  return p;
}
void* realloc(void* old, size_t n) noexcept {
  note_free(old);  // a realloc is a free of the old block and an allocation of the new one
  void* p = __libc_realloc(old, n);
  if (!p && n && old) {  // failed: the old block is still live
    note_alloc(old);
    return p;
  }
  note_alloc(p);
  return p;
}
void free(void* p) noexcept {
  note_free(p);
  __libc_free(p);
}
void* memalign(size_t alignment, size_t n) noexcept {
  void* p = __libc_memalign(alignment, n);
  note_alloc(p);
  return p;
}
void* aligned_alloc(size_t alignment, size_t n) noexcept { return memalign(alignment, n); }
int posix_memalign(void** out, size_t alignment, size_t n) noexcept {
  void* p = memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"

namespace wsbench {

uint64_t alloc_calls() { return g_calls.load(std::memory_order_relaxed); }

AllocWindow::AllocWindow() : calls0_(alloc_calls()) {
  g_live.store(0, std::memory_order_relaxed);
  g_peak.store(0, std::memory_order_relaxed);
  g_tracking.store(true, std::memory_order_relaxed);
}

AllocWindow::~AllocWindow() {
  if (!stopped_) stop();
}

HeapUse AllocWindow::stop() {
  g_tracking.store(false, std::memory_order_relaxed);
  stopped_ = true;
  HeapUse u;
  u.calls = alloc_calls() - calls0_;
  u.peak_bytes = uint64_t(g_peak.load(std::memory_order_relaxed));
  u.end_bytes = g_live.load(std::memory_order_relaxed);
  return u;
}

}  // namespace wsbench

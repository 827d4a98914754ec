// Implements alloc_counter.h: the counted replacements of the global allocation functions.
#include "alloc_counter.h"

#include <errno.h>
#include <stdlib.h>

#include <new>

namespace wsalloc {
std::atomic<bool> g_armed{false};
std::atomic<long> g_allocs{0};
std::atomic<long> g_frees{0};
}  // namespace wsalloc

#ifdef WS_COUNTING_ALLOCATOR
namespace {
using wsalloc::g_allocs;
using wsalloc::g_armed;
using wsalloc::g_frees;
inline void note_alloc() {
  if (g_armed.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
}
inline void note_free(void* p) {
  if (p && g_armed.load(std::memory_order_relaxed)) g_frees.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) noexcept {
  note_alloc();
  return __libc_malloc(n);
}
void* calloc(size_t count, size_t n) noexcept {
  note_alloc();
  return __libc_calloc(count, n);
}
void* realloc(void* p, size_t n) noexcept {
  note_alloc();
  return __libc_realloc(p, n);
}
void free(void* p) noexcept {
  note_free(p);
  __libc_free(p);
}
void* aligned_alloc(size_t alignment, size_t n) noexcept {
  note_alloc();
  return __libc_memalign(alignment, n);
}
void* memalign(size_t alignment, size_t n) noexcept {
  note_alloc();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) noexcept {
  note_alloc();
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"

// operator new/delete go through the counted functions above.
void* operator new(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return malloc(n ? n : 1); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return malloc(n ? n : 1); }
void* operator new(size_t n, std::align_val_t a) {
  void* p = aligned_alloc(size_t(a), (n + size_t(a) - 1) / size_t(a) * size_t(a));
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { free(p); }
#endif  // WS_COUNTING_ALLOCATOR

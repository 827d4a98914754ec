// Counting allocator for the no-allocation tests: alloc_counter.cpp replaces the global allocation
// functions — malloc, calloc, realloc, aligned allocation, free, and every operator new/delete —
// with wrappers around glibc's own allocator that count calls while `g_armed` is set. Link
// alloc_counter.cpp into the test executable itself (not a library member the linker may skip), so
// the replacements take effect for the whole binary.
#pragma once

#include <atomic>

// Sanitizers bring their own allocator; replacing it there would break them, so the counting
// allocator exists only in ordinary builds (tests skip themselves when this is not defined).
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define WS_COUNTING_ALLOCATOR 1
#endif

namespace wsalloc {
// Counting happens only while armed, so the test's own setup and reporting are not counted.
extern std::atomic<bool> g_armed;
extern std::atomic<long> g_allocs;  // allocation calls while armed
extern std::atomic<long> g_frees;   // free() of a non-null pointer while armed
}  // namespace wsalloc

// weightstream — the caller's arena, used from both ends.
//
// Variable-length bytes (names, packed shapes, metadata) grow up from the bottom; fixed-size
// records grow down from the top, so they end up as one contiguous array that can be sorted in
// place. When the two ends would meet, the arena switches to counting: parsing goes on without
// storing, so the caller learns in one pass the size that would have sufficed.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace ws {
namespace detail {

class Arena {
 public:
  void init(void* base, size_t size) {
    uintptr_t b = reinterpret_cast<uintptr_t>(base);
    uintptr_t aligned = (b + 7) & ~uintptr_t(7);
    size_t skip = aligned - b;
    base_ = reinterpret_cast<uint8_t*>(aligned);
    size_ = size > skip ? ((size - skip) & ~size_t(7)) : 0;
    low_ = 0;
    high_ = 0;
    counting_ = false;
    need_low_ = 0;
    need_high_ = 0;
    peak_ = 0;
  }

  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  bool counting() const { return counting_; }

  // Bottom end: `n` more bytes, or nullptr when the arena is exhausted (then counting starts).
  uint8_t* grow_low(size_t n) {
    need_low_ += n;
    note_need();
    if (counting_ || n > size_ - low_ - high_) {
      counting_ = true;
      return nullptr;
    }
    uint8_t* p = base_ + low_;
    low_ += n;
    note_peak();
    return p;
  }
  size_t low() const { return low_; }
  size_t need_low() const { return need_low_; }
  // Drops everything above `mark` (a value of low() / need_low() taken earlier).
  void rewind_low(size_t mark, size_t need_mark) {
    if (!counting_) low_ = mark;
    need_low_ = need_mark;
  }

  // Scratch for a check: `bytes` more at the bottom, 4-byte aligned, which the caller releases
  // with rewind_low() to the marks it took before. nullptr while counting or when it does not fit
  // (counting starts); either way the scratch counts toward the peak need.
  uint32_t* grow_scratch(size_t bytes) {
    size_t mark = low_, need_mark = need_low_;
    size_t total = ((4 - (need_mark & 3)) & 3) + bytes;  // need_mark == mark unless counting
    uint8_t* p = counting_ ? nullptr : grow_low(total);
    if (!p) {
      rewind_low(mark, need_mark);
      note_scratch(total);
      return nullptr;
    }
    return reinterpret_cast<uint32_t*>(p + (total - bytes));
  }

  // Top end: an 8-byte aligned block of `n` (a multiple of 8) bytes, or nullptr.
  void* grow_high(size_t n) {
    need_high_ += n;
    note_need();
    if (counting_ || n > size_ - low_ - high_) {
      counting_ = true;
      return nullptr;
    }
    high_ += n;
    note_peak();
    return base_ + size_ - high_;
  }
  size_t high() const { return high_; }
  uint8_t* high_begin() const { return base_ + size_ - high_; }

  size_t used() const { return low_ + high_; }
  size_t needed() const { return need_low_ + need_high_; }
  size_t peak() const { return peak_; }
  // Records a peak of `extra` bytes above the current use (scratch that is used and released).
  void note_scratch(size_t extra) {
    if (need_low_ + need_high_ + extra > peak_need_) peak_need_ = need_low_ + need_high_ + extra;
  }
  // The size to ask for: the peak need, rounded up to the 8-byte granularity init() uses.
  size_t peak_needed() const {
    size_t n = peak_need_ > needed() ? peak_need_ : needed();
    return (n + 7) & ~size_t(7);
  }

 private:
  // The peak need, not the current one: bytes released by a rewind were still needed at the time.
  void note_need() {
    if (need_low_ + need_high_ > peak_need_) peak_need_ = need_low_ + need_high_;
  }
  void note_peak() {
    if (low_ + high_ > peak_) peak_ = low_ + high_;
  }
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t low_ = 0, high_ = 0;
  bool counting_ = false;
  size_t need_low_ = 0, need_high_ = 0;
  size_t peak_ = 0;
  size_t peak_need_ = 0;
};

}  // namespace detail
}  // namespace ws

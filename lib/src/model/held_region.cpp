// weightstream — the sequential stream's held region (held_region.h).
#include "held_region.h"

#include <string.h>

#include "weightstream/status.h"  // kNoTensor

namespace ws {

void HeldRegion::init(uint8_t* bytes, uint64_t cap, HeldBlock* blocks, uint32_t block_cap, uint32_t* block_of) {
  bytes_ = bytes;
  cap_ = cap;
  top_ = 0;
  blocks_ = blocks;
  count_ = 0;
  block_cap_ = block_cap;
  block_of_ = block_of;
}

uint8_t* HeldRegion::hold(uint32_t w, uint64_t size) {
  size = (size + 7) & ~uint64_t(7);
  if (count_ == block_cap_ || cap_ - top_ < size) compact();
  if (count_ == block_cap_ || cap_ - top_ < size) return nullptr;
  HeldBlock& b = blocks_[count_];
  b.weight = w;
  b.off = top_;
  b.size = size;
  block_of_[w] = ++count_;
  top_ += size;
  return bytes_ + b.off;
}

uint8_t* HeldRegion::of(uint32_t w) const { return bytes_ + blocks_[block_of_[w] - 1].off; }

void HeldRegion::release(uint32_t w) {
  blocks_[block_of_[w] - 1].weight = kNoTensor;
  block_of_[w] = 0;
  // Freed blocks at the top go at once; others wait for a compaction.
  while (count_ > 0 && blocks_[count_ - 1].weight == kNoTensor) --count_;
  top_ = count_ ? blocks_[count_ - 1].off + blocks_[count_ - 1].size : 0;
}

// Moves the live blocks down over the freed ones (address order is kept), so the free space is
// one piece at the top. The dry run's peak counts live bytes only, so what it sized fits then.
void HeldRegion::compact() {
  uint32_t j = 0;
  uint64_t top = 0;
  for (uint32_t i = 0; i < count_; ++i) {
    HeldBlock b = blocks_[i];
    if (b.weight == kNoTensor) continue;
    if (b.off != top) memmove(bytes_ + top, bytes_ + b.off, size_t(b.size));
    b.off = top;
    blocks_[j] = b;
    block_of_[b.weight] = j + 1;
    top += b.size;
    ++j;
  }
  count_ = j;
  top_ = top;
}

}  // namespace ws

// weightstream — the sequential stream's held region (internal): where a weight's pieces wait for
// its last piece when a forward-only stream brings a packed weight before its companions.
//
// One region of caller arena, blocks placed (hold) at its top in address order, one per weight; a
// released block at the top is given back at once, others at the next compaction, which moves the
// live blocks down over the freed ones so the free space is one piece again. ModelLoader's dry run
// (sim_sequential) sizes the region for the peak of live bytes, which a compaction always reaches.
// Nothing allocates: the bytes, the block list and the weight -> block map are given by init().
#pragma once

#include <stdint.h>

namespace ws {

struct HeldBlock {
  uint32_t weight;  // kNoTensor: freed (removed at the next compaction or from the top)
  uint32_t pad;
  uint64_t off;
  uint64_t size;
};

class HeldRegion {
 public:
  // `bytes`: cap bytes (8-aligned); `blocks`: block_cap entries; `block_of`: one entry per weight,
  // zeroed by the caller (0 = the weight holds no block).
  void init(uint8_t* bytes, uint64_t cap, HeldBlock* blocks, uint32_t block_cap, uint32_t* block_of);
  // A block of `size` bytes (rounded up to 8) for weight `w`, which must hold none; compacts when
  // the top has no room. nullptr when even compacted there is none (or no block entry is left).
  uint8_t* hold(uint32_t w, uint64_t size);
  // Weight w's block; holds(w) must be true.
  uint8_t* of(uint32_t w) const;
  bool holds(uint32_t w) const { return block_of_ && block_of_[w] != 0; }
  void release(uint32_t w);
  void compact();

  uint64_t top() const { return top_; }        // bytes from the start to the end of the last block
  uint32_t blocks() const { return count_; }   // block entries in use (freed ones included)

 private:
  uint8_t* bytes_ = nullptr;
  uint64_t cap_ = 0;
  uint64_t top_ = 0;
  HeldBlock* blocks_ = nullptr;
  uint32_t count_ = 0;
  uint32_t block_cap_ = 0;
  uint32_t* block_of_ = nullptr;  // weight -> block index + 1 (0: none)
};

}  // namespace ws

// weightstream — sharded models: model.safetensors.index.json, streamed.
//
//   {"metadata": {"total_size": N, ...}, "weight_map": {"tensor name": "shard file", ...}}
//
// ShardIndex reads the index in pieces with the same JSON lexer as safetensors headers and keeps
// the weight map in the caller's arena. Then, for each shard, check_shard() compares the shard's
// validated tensor table with the index; finish_checks() reports index entries no shard held and a
// total_size that differs from the sum of the tensors' byte sizes.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/arena.h"
#include "weightstream/detail/json_document.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

class ShardIndex {
 public:
  ShardIndex(void* arena, size_t arena_size, const Limits& limits = Limits());

  // Index JSON in pieces of any size; returns Ok or the first error (see error()).
  Status feed(const void* data, size_t size);
  // End of the index JSON. Builds the lookup tables.
  Status finish();

  const Error& error() const { return doc_.error; }
  size_t arena_needed() const { return arena_.peak_needed(); }
  size_t arena_used() const { return arena_.used(); }
  // After finish() returned Ok: the bytes it keeps at the arena's start and end; the checks that
  // follow use no others (see Reader::arena_low).
  size_t arena_low() const { return arena_.low(); }
  size_t arena_high() const { return arena_.high(); }

  // Valid after finish() returned Ok.
  uint32_t tensor_count() const { return entry_count_; }
  uint32_t shard_count() const { return shard_count_; }
  StrView shard_name(uint32_t shard) const;  // shards in order of first mention
  StrView tensor_name(uint32_t entry) const; // entries in index order
  uint32_t tensor_shard(uint32_t entry) const;
  // Index entry of a tensor, or kNoTensor.
  uint32_t find_tensor(const char* name, size_t n) const;
  // Shard number of a file name (compared exactly), or kNoTensor.
  uint32_t find_shard(const char* file, size_t n) const;
  bool has_total_size() const { return has_total_size_; }
  uint64_t total_size() const { return total_size_; }

  // Cross-checks one shard's validated table against the index: every tensor must be listed, in
  // this shard, and seen in no other shard. Errors name the tensor; offset = its entry's offset
  // in the shard file.
  Status check_shard(const char* file, size_t file_len, const TensorTable& table);
  // After every shard was checked: each listed tensor was seen, and total_size matches.
  Status finish_checks();
  uint64_t checked_bytes() const { return checked_bytes_; }

 private:
  struct Entry {
    uint32_t name;   // arena offset of [u32 len][bytes]
    uint32_t shard;  // during parsing: arena offset of the shard name; after finish: shard index
    uint32_t pos;    // offset of the entry's key in the index JSON (diagnostics)
  };
  Status handle(detail::JsonLexer::Token t);
  StrView blob_str(uint32_t off) const;

  detail::Arena arena_;
  detail::JsonDocument doc_;  // lexer, first error, finished
  Limits limits_;

  // Parse state.
  uint8_t ctx_ = 0;
  uint8_t key_kind_ = 0;
  uint8_t skip_return_ = 0;
  char small_[16] = {};
  uint32_t small_size_ = 0;
  bool small_overflow_ = false;
  uint32_t str_off_ = 0;
  uint32_t key_name_off_ = 0;
  uint64_t seed_ = 0;
  uint64_t str_size_ = 0;
  uint64_t key_pos_ = 0;
  bool seen_weight_map_ = false;
  bool seen_metadata_ = false;

  uint32_t entry_count_ = 0;
  uint32_t shard_count_ = 0;
  bool has_total_size_ = false;
  uint64_t total_size_ = 0;
  uint64_t total_size_pos_ = 0;

  // Built by finish().
  Entry* entries_ = nullptr;         // entry_count_ records (index order)
  uint32_t* entry_slots_ = nullptr;  // hash: tensor name -> entry + 1
  uint32_t entry_slot_mask_ = 0;
  uint32_t* shard_names_ = nullptr;  // shard -> arena offset of its name
  uint32_t* shard_slots_ = nullptr;  // hash: shard name -> shard + 1
  uint32_t shard_slot_mask_ = 0;
  uint8_t* seen_ = nullptr;          // bit per entry
  uint64_t checked_bytes_ = 0;
};

}  // namespace ws

// model.safetensors.index.json: streamed weight map, then cross-checks against each shard.
#include "weightstream/shard_index.h"

#include <string.h>

#include <algorithm>

#include "weightstream/detail/bytes.h"
#include "weightstream/detail/duplicate_finder.h"
#include "weightstream/detail/json_strings.h"

namespace ws {

namespace {

using detail::JsonLexer;

enum Ctx : uint8_t {
  kRootStart, kRootKey, kRootValue, kMetaKey, kMetaValue, kMapKey, kMapValue, kSkip, kDone,
};
enum KeyKind : uint8_t { kOther, kMetadata, kWeightMap, kTotalSize };

}  // namespace

using detail::load_u32;
using detail::store_u32;

ShardIndex::ShardIndex(void* arena, size_t arena_size, const Limits& limits)
    : doc_(limits.max_nesting), limits_(limits) {
  arena_.init(arena, arena_size);
}

StrView ShardIndex::blob_str(uint32_t off) const { return conv_detail::arena_str(arena_, off); }

Status ShardIndex::feed(const void* data, size_t size) {
  return doc_.feed(data, size, [this](detail::JsonLexer::Token t) { return handle(t); });
}

Status ShardIndex::handle(JsonLexer::Token t) {
  using L = JsonLexer;
  // Small keys ("metadata", "weight_map", "total_size") are matched from a 16-byte buffer.
  auto small_key = [&]() { return conv_detail::small_piece(doc_.lexer, small_, &small_size_, &small_overflow_); };
  auto is = [&](const char* k) { return conv_detail::small_is(small_, small_size_, small_overflow_, k); };
  // Strings stored in the arena as [u32 length][bytes].
  auto store_piece = [&]() { return conv_detail::store_piece(doc_.lexer, &arena_, &str_off_, &str_size_); };
  auto start_skip = [&](uint8_t back) {
    skip_return_ = back;
    ctx_ = doc_.begin_skip(t) ? back : uint8_t(kSkip);
  };

  switch (ctx_) {
    case kRootStart:
      if (t != L::kObjectBegin) return doc_.fail(Status::IndexNotObject, doc_.lexer.token_pos());
      ctx_ = kRootKey;
      return Status::Ok;
    case kRootKey:
      if (t == L::kObjectEnd) {
        ctx_ = kDone;
        return Status::Ok;
      }
      if (!small_key()) return Status::Ok;
      key_kind_ = is("metadata") ? kMetadata : is("weight_map") ? kWeightMap : kOther;
      key_pos_ = doc_.lexer.token_pos();
      ctx_ = kRootValue;
      return Status::Ok;
    case kRootValue:
      if (key_kind_ == kWeightMap) {
        if (t != L::kObjectBegin || seen_weight_map_)
          return doc_.fail(Status::IndexInvalidWeightMap, doc_.lexer.token_pos());
        seen_weight_map_ = true;
        ctx_ = kMapKey;
        return Status::Ok;
      }
      if (key_kind_ == kMetadata && t == L::kObjectBegin && !seen_metadata_) {
        seen_metadata_ = true;
        ctx_ = kMetaKey;
        return Status::Ok;
      }
      start_skip(kRootKey);
      return Status::Ok;
    case kMetaKey:
      if (t == L::kObjectEnd) {
        ctx_ = kRootKey;
        return Status::Ok;
      }
      if (!small_key()) return Status::Ok;
      key_kind_ = is("total_size") ? kTotalSize : kOther;
      ctx_ = kMetaValue;
      return Status::Ok;
    case kMetaValue:
      if (key_kind_ == kTotalSize) {
        if (t != L::kNumber || !doc_.lexer.number_is_u64() || has_total_size_)
          return doc_.fail(Status::IndexInvalidTotalSize, doc_.lexer.token_pos());
        has_total_size_ = true;
        total_size_ = doc_.lexer.number_value();
        total_size_pos_ = doc_.lexer.token_pos();
        ctx_ = kMetaKey;
        return Status::Ok;
      }
      start_skip(kMetaKey);
      return Status::Ok;
    case kMapKey:
      if (t == L::kObjectEnd) {
        ctx_ = kRootKey;
        return Status::Ok;
      }
      if (doc_.lexer.piece_first()) key_pos_ = doc_.lexer.token_pos();
      if (!store_piece()) return Status::Ok;
      if (str_size_ > limits_.max_name_bytes) return doc_.fail(Status::NameTooLong, key_pos_);
      if (entry_count_ >= limits_.max_tensors) return doc_.fail(Status::TooManyTensors, key_pos_);
      key_name_off_ = str_off_;
      ctx_ = kMapValue;
      return Status::Ok;
    case kMapValue: {
      if (t != L::kStringPiece) {
        doc_.fail(Status::IndexInvalidWeightMap, doc_.lexer.token_pos());
        if (!arena_.counting()) {  // name the tensor whose shard is not a string
          StrView k = blob_str(key_name_off_);
          doc_.error.tensor_name = k.data;
          doc_.error.tensor_name_size = k.size;
        }
        return doc_.error.code;
      }
      if (!store_piece()) return Status::Ok;
      // Consecutive entries usually name the same shard: keep its name once per run.
      uint32_t shard_off = str_off_;
      if (entry_count_ > 0 && !arena_.counting()) {
        const Entry* prev = reinterpret_cast<const Entry*>(arena_.high_begin());
        if (blob_str(prev->shard).equals(blob_str(str_off_).data, blob_str(str_off_).size)) {
          arena_.rewind_low(str_off_, str_off_);  // not counting: need == use
          shard_off = prev->shard;
        }
      }
      Entry* e = static_cast<Entry*>(arena_.grow_high(sizeof(Entry)));
      if (e) {
        e->name = key_name_off_;
        e->shard = shard_off;
        e->pos = uint32_t(key_pos_);
      }
      ++entry_count_;
      ctx_ = kMapKey;
      return Status::Ok;
    }
    case kSkip:
      if (doc_.skipping(t)) ctx_ = skip_return_;
      return Status::Ok;
    default:
      return Status::Ok;
  }
}

Status ShardIndex::finish() {
  if (Status s = doc_.finish(); s != Status::Ok) return s;
  if (!seen_weight_map_) return doc_.fail(Status::IndexMissingWeightMap, doc_.lexer.consumed());
  uint32_t n = entry_count_;
  // Persistent tables: tensor-name hash, shard names, shard-name hash (sized by the entries, an
  // upper bound on the shards), and a seen bit per entry.
  size_t slots = detail::duplicate_table_slots(n);
  size_t pad = (4 - (arena_.need_low() & 3)) & 3;  // low() stops moving once counting
  size_t bytes = pad + slots * 4 + size_t(n) * 4 + slots * 4 + (size_t(n) + 7) / 8;
  uint8_t* mem = arena_.grow_low(bytes);  // when it fails, the need is still counted
  if (!mem) return doc_.fail(Status::ArenaExhausted, doc_.lexer.consumed());
  entries_ = reinterpret_cast<Entry*>(arena_.high_begin());
  std::reverse(entries_, entries_ + n);  // pushed downwards: restore index order
  entry_slots_ = reinterpret_cast<uint32_t*>(mem + pad);
  entry_slot_mask_ = uint32_t(slots - 1);
  shard_names_ = entry_slots_ + slots;
  shard_slots_ = shard_names_ + n;
  shard_slot_mask_ = uint32_t(slots - 1);
  seen_ = reinterpret_cast<uint8_t*>(shard_slots_ + slots);
  memset(seen_, 0, (size_t(n) + 7) / 8);
  uint64_t seed = reinterpret_cast<uintptr_t>(arena_.base());
  seed_ = seed;

  auto name = [&](uint32_t i) { return blob_str(entries_[i].name); };
  uint32_t dup = detail::find_duplicate(n, name, entry_slots_, seed);
  if (dup != detail::kNoDuplicate) {
    doc_.error.tensor_name = name(dup).data;
    doc_.error.tensor_name_size = name(dup).size;
    return doc_.fail(Status::IndexDuplicateTensor, entries_[dup].pos);
  }
  // Rebuild the name table by plain insertion: the finder may have reused it for sorting.
  memset(entry_slots_, 0, slots * 4);
  for (uint32_t i = 0; i < n; ++i) {
    StrView s = name(i);
    size_t h = size_t(detail::hash_bytes(s.data, s.size, seed)) & entry_slot_mask_;
    while (entry_slots_[h] != 0) h = (h + 1) & entry_slot_mask_;
    entry_slots_[h] = i + 1;
  }
  // Shard numbers in order of first mention.
  memset(shard_slots_, 0, slots * 4);
  for (uint32_t i = 0; i < n; ++i) {
    StrView s = blob_str(entries_[i].shard);
    size_t h = size_t(detail::hash_bytes(s.data, s.size, seed)) & shard_slot_mask_;
    uint32_t shard = kNoTensor;
    while (shard_slots_[h] != 0) {
      StrView o = blob_str(shard_names_[shard_slots_[h] - 1]);
      if (o.size == s.size && (s.size == 0 || memcmp(o.data, s.data, s.size) == 0)) {
        shard = shard_slots_[h] - 1;
        break;
      }
      h = (h + 1) & shard_slot_mask_;
    }
    if (shard == kNoTensor) {
      shard = shard_count_++;
      shard_names_[shard] = entries_[i].shard;
      shard_slots_[h] = shard + 1;
    }
    entries_[i].shard = shard;
  }
  return Status::Ok;
}

StrView ShardIndex::shard_name(uint32_t shard) const {
  return shard < shard_count_ ? blob_str(shard_names_[shard]) : StrView();
}
StrView ShardIndex::tensor_name(uint32_t entry) const {
  return entry < entry_count_ ? blob_str(entries_[entry].name) : StrView();
}
uint32_t ShardIndex::tensor_shard(uint32_t entry) const {
  return entry < entry_count_ ? entries_[entry].shard : kNoTensor;
}

uint32_t ShardIndex::find_tensor(const char* s, size_t n) const {
  if (!entry_slots_) return kNoTensor;
  size_t h = size_t(detail::hash_bytes(s, n, seed_)) & entry_slot_mask_;
  while (entry_slots_[h] != 0) {
    uint32_t e = entry_slots_[h] - 1;
    if (tensor_name(e).equals(s, n)) return e;
    h = (h + 1) & entry_slot_mask_;
  }
  return kNoTensor;
}

uint32_t ShardIndex::find_shard(const char* s, size_t n) const {
  if (!shard_slots_) return kNoTensor;
  size_t h = size_t(detail::hash_bytes(s, n, seed_)) & shard_slot_mask_;
  while (shard_slots_[h] != 0) {
    uint32_t k = shard_slots_[h] - 1;
    if (shard_name(k).equals(s, n)) return k;
    h = (h + 1) & shard_slot_mask_;
  }
  return kNoTensor;
}

Status ShardIndex::check_shard(const char* file, size_t file_len, const TensorTable& table) {
  if (doc_.error.code != Status::Ok) return doc_.error.code;
  if (!entries_ && entry_count_ > 0) return doc_.fail(Status::UsageError, 0);
  uint32_t shard = find_shard(file, file_len);
  if (shard == kNoTensor) return doc_.fail(Status::IndexUnknownShard, 0);
  for (uint32_t i = 0; i < table.count(); ++i) {
    TensorInfo t = table.get(i);
    uint32_t e = find_tensor(t.name.data, t.name.size);
    Status s = Status::Ok;
    if (e == kNoTensor) s = Status::ShardTensorNotInIndex;
    else if (seen_[e >> 3] & (1u << (e & 7))) s = Status::ShardTensorDuplicate;
    else if (entries_[e].shard != shard) s = Status::ShardTensorWrongShard;
    if (s != Status::Ok) {
      doc_.fail(s, t.entry_offset);
      doc_.error.tensor = i;
      doc_.error.tensor_name = e == kNoTensor ? t.name.data : tensor_name(e).data;
      doc_.error.tensor_name_size = t.name.size;
      return s;
    }
    seen_[e >> 3] = uint8_t(seen_[e >> 3] | (1u << (e & 7)));
    checked_bytes_ += t.byte_size();
  }
  return Status::Ok;
}

Status ShardIndex::finish_checks() {
  if (doc_.error.code != Status::Ok) return doc_.error.code;
  for (uint32_t e = 0; e < entry_count_; ++e) {
    if (!(seen_[e >> 3] & (1u << (e & 7)))) {
      doc_.fail(Status::ShardTensorMissing, entries_[e].pos);
      StrView s = tensor_name(e);
      doc_.error.tensor_name = s.data;
      doc_.error.tensor_name_size = s.size;
      return doc_.error.code;
    }
  }
  if (has_total_size_ && total_size_ != checked_bytes_) {
    doc_.fail(Status::IndexTotalSizeMismatch, total_size_pos_);
    doc_.error.set_found(total_size_);
    doc_.error.set_expected(checked_bytes_);
  }
  return doc_.error.code;
}

}  // namespace ws

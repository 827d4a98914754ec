// Safetensors header: JSON tokens interpreted against the schema, checks of FORMATS.md §1.
//
// Per-entry checks (missing fields, reversed offsets, overflow, sub-byte alignment, size) run at
// the entry's closing brace; whole-table checks (duplicate names, contiguity) run in finish(),
// once every entry is known, because JSON order need not be data order.
#include "weightstream/detail/safetensors_header_parser.h"

#include <string.h>

#include <algorithm>

#include "weightstream/detail/bytes.h"
#include "weightstream/detail/checked_mul.h"
#include "weightstream/detail/duplicate_finder.h"
#include "weightstream/detail/heap_sort.h"
#include "weightstream/detail/json_strings.h"
#include "weightstream/dtype.h"

// Built with the entry fast path unless the build says otherwise (lib/CMakeLists.txt).
#ifndef WS_SAFETENSORS_FAST_PATH
#define WS_SAFETENSORS_FAST_PATH 1
#endif

namespace ws {
namespace detail {

namespace {

constexpr char kMetadataKey[] = "__metadata__";
constexpr size_t kMetadataKeyLen = sizeof(kMetadataKey) - 1;

// File order of two TensorRecords: (begin, end), then declaration order (blob offsets grow with
// it) — a total order, so the sorted table does not depend on the sort algorithm.
bool file_order_less(const void* pa, const void* pb, const void*) {
  const TensorRecord& a = *static_cast<const TensorRecord*>(pa);
  const TensorRecord& b = *static_cast<const TensorRecord*>(pb);
  if (a.begin != b.begin) return a.begin < b.begin;
  if (a.end != b.end) return a.end < b.end;
  return a.blob < b.blob;
}

}  // namespace

// The state block starts at zero (value-initialization).
SafetensorsHeaderParser::SafetensorsHeaderParser() : SafetensorsParserState() {}

void SafetensorsHeaderParser::reset(Arena* arena, const Limits& limits, uint64_t header_start) {
  *this = SafetensorsHeaderParser();
  arena_ = arena;
  limits_ = limits;
  header_start_ = header_start;
  lexer_.reset(limits.max_nesting);
}

Status SafetensorsHeaderParser::fail_at(Status s, uint64_t offset, uint32_t blob) {
  // A duplicate-key check skipped for lack of arena may hide an earlier error than this one.
  if (skipped_check_ && s != Status::ArenaExhausted) s = Status::ArenaExhausted;
  error_.code = s;
  error_.offset = offset;
  error_.tensor = kNoTensor;
  error_.tensor_name = nullptr;
  error_.tensor_name_size = 0;
  if (blob != kNoTensor && !arena_->counting()) {
    const uint8_t* p = arena_->base() + blob;
    error_.tensor_name = reinterpret_cast<const char*>(p + 4);
    error_.tensor_name_size = load_u32(p);
  }
  return s;
}

// fail_at() with the value found and the one expected (one copy of the sequence: code size).
Status SafetensorsHeaderParser::fail_values(Status s, uint64_t offset, uint32_t blob, uint64_t found,
                                            uint64_t expected) {
  fail_at(s, offset, blob);
  error_.set_found(found);
  error_.set_expected(expected);
  return error_.code;
}

// Errors inside a tensor entry name that tensor: its name is complete in the arena by then.
Status SafetensorsHeaderParser::fail(Status s, uint64_t header_pos) {
  bool in_entry = (ctx_ >= kEntryKey && ctx_ <= kDtypeEnd) || ctx_ == kRootValueTensor;
  return fail_at(s, header_start_ + header_pos, in_entry ? uint32_t(key_mark_) : kNoTensor);
}

Status SafetensorsHeaderParser::feed(const uint8_t* data, size_t n) {
  if (error_.code != Status::Ok) return error_.code;
  const uint8_t* p = data;
  const uint8_t* end = data + n;
  for (;;) {
#if WS_SAFETENSORS_FAST_PATH
    // Most entries are canonical and lie whole inside the piece: take them in one go. Built out
    // (WS_SAFETENSORS_FAST_PATH=0, the microcontroller build) the general path takes every entry:
    // the fast path only ever defers to it, so results are the same either way.
    if (ctx_ == kRootKey) {
      int boundary = lexer_.root_member_boundary();
      if (boundary != 0) {
        size_t used = fast_entry(p, end, boundary);
        if (used != 0) {
          p += used;
          lexer_.skip_members(used);
          continue;
        }
      }
    }
#endif
    JsonLexer::Token t = lexer_.next(&p, end);
    if (t == JsonLexer::kNeedMore) return Status::Ok;
    if (t == JsonLexer::kError) {
      fail(lexer_.status(), lexer_.error_pos());
      if (error_.code == Status::NestingTooDeep) error_.set_expected(limits_.max_nesting);
      return error_.code;
    }
    Status s = handle(t);
    if (s != Status::Ok) return s;
  }
}

bool SafetensorsHeaderParser::append_blob(const uint8_t* p, size_t n) {
  uint8_t* dst = arena_->grow_low(n);
  if (dst && n) memcpy(dst, p, n);
  return dst != nullptr;
}

void SafetensorsHeaderParser::append_small(const uint8_t* p, size_t n) {
  conv_detail::append_small(p, n, small_, sizeof(small_), &small_size_, &small_overflow_);
}

Status SafetensorsHeaderParser::handle(JsonLexer::Token t) {
  using L = JsonLexer;
  switch (ctx_) {
    case kRootStart:
      if (t != L::kObjectBegin) return fail(Status::HeaderNotObject, lexer_.token_pos());
      ctx_ = kRootKey;
      return Status::Ok;

    case kRootKey:
      if (t == L::kObjectEnd) {
        ctx_ = kDone;
        return Status::Ok;
      }
      // The lexer only hands out key pieces here.
      if (lexer_.piece_first()) {
        key_pos_ = lexer_.token_pos();
        key_mark_ = arena_->low();
        key_need_mark_ = arena_->need_low();
        key_size_ = 0;
        key_is_meta_ = true;
        arena_->grow_low(4);  // the name's length, written when the key ends
      }
      {
        size_t n = lexer_.piece_size();
        const uint8_t* piece = lexer_.piece();
        key_is_meta_ = key_is_meta_ && key_size_ + n <= kMetadataKeyLen &&
                       memcmp(kMetadataKey + key_size_, piece, n) == 0;
        key_size_ += n;
        if (key_size_ > limits_.max_name_bytes && key_size_ > kMetadataKeyLen) {
          fail_at(Status::NameTooLong, header_start_ + key_pos_, kNoTensor);
          error_.set_expected(limits_.max_name_bytes);
          return error_.code;
        }
        append_blob(piece, n);
      }
      if (lexer_.piece_last()) return end_root_key();
      return Status::Ok;

    case kRootValueTensor:
      if (t != L::kObjectBegin) return fail(Status::TensorEntryNotObject, lexer_.token_pos());
      seen_fields_ = 0;
      rank_ = 0;
      offsets_count_ = 0;
      elements_ = 1;
      elements_overflow_ = false;
      has_zero_dim_ = false;
      dims_mark_ = arena_->low();
      dims_need_mark_ = arena_->need_low();
      ctx_ = kEntryKey;
      return Status::Ok;

    case kEntryKey:
      if (t == L::kObjectEnd) return end_entry(lexer_.token_pos());
      if (lexer_.piece_first()) {
        small_size_ = 0;
        small_overflow_ = false;
        field_pos_ = lexer_.token_pos();
      }
      append_small(lexer_.piece(), lexer_.piece_size());
      if (!lexer_.piece_last()) return Status::Ok;
      cur_field_ = kFieldOther;
      if (!small_overflow_) {
        if (small_size_ == 5 && memcmp(small_, "dtype", 5) == 0) cur_field_ = kFieldDtype;
        else if (small_size_ == 5 && memcmp(small_, "shape", 5) == 0) cur_field_ = kFieldShape;
        else if (small_size_ == 12 && memcmp(small_, "data_offsets", 12) == 0) cur_field_ = kFieldOffsets;
      }
      if (cur_field_ != kFieldOther) {
        if (seen_fields_ & cur_field_) return fail(Status::DuplicateField, field_pos_);
        seen_fields_ |= cur_field_;
      }
      ctx_ = kEntryValue;
      return Status::Ok;

    case kEntryValue:
      switch (cur_field_) {
        case kFieldDtype:
          small_size_ = 0;
          small_overflow_ = false;
          // serde's externally tagged form of a unit variant, {"F32": null}: the crate reads
          // Dtype through serde's ContentRefDeserializer (TensorInfo is buffered by
          // HashMetadata's flatten), whose deserialize_enum takes a string or a map of exactly
          // one key, and whose unit_variant takes that key's value only as null (serde
          // src/private/de.rs). Accepted as the crate accepts it (README, policy list).
          if (t == L::kObjectBegin) {
            ctx_ = kDtypeKey;
            return Status::Ok;
          }
          if (t != L::kStringPiece) return fail(Status::InvalidDtype, lexer_.token_pos());
          ctx_ = kDtype;
          return handle(t);
        case kFieldShape:
          if (t != L::kArrayBegin) return fail(Status::InvalidShape, lexer_.token_pos());
          ctx_ = kShape;
          return Status::Ok;
        case kFieldOffsets:
          if (t != L::kArrayBegin) return fail(Status::InvalidDataOffsets, lexer_.token_pos());
          ctx_ = kOffsets;
          return Status::Ok;
        default:
          skipper_.start();
          ctx_ = kSkip;
          return handle(t);
      }

    case kDtypeKey:  // the object form's one key: `}` (no key) is not a dtype
      if (t != L::kKeyPiece) return fail(Status::InvalidDtype, lexer_.token_pos());
      [[fallthrough]];  // the key's pieces are read as the string form's
    case kDtype: {
      append_small(lexer_.piece(), lexer_.piece_size());
      if (!lexer_.piece_last()) return Status::Ok;
      DType d;
      if (small_overflow_ || !dtype_from_name(small_, small_size_, &d))
        return fail(Status::InvalidDtype, lexer_.token_pos());
      dtype_ = uint8_t(d);
      ctx_ = ctx_ == kDtypeKey ? kDtypeNull : kEntryKey;
      return Status::Ok;
    }

    case kDtypeNull:  // the key's value: null only ([] and {} are not a unit)
      if (t != L::kNull) return fail(Status::InvalidDtype, lexer_.token_pos());
      ctx_ = kDtypeEnd;
      return Status::Ok;
    case kDtypeEnd:  // then the object's end: a second key is not a dtype
      if (t != L::kObjectEnd) return fail(Status::InvalidDtype, lexer_.token_pos());
      ctx_ = kEntryKey;
      return Status::Ok;

    case kShape: {
      if (t == L::kArrayEnd) {
        ctx_ = kEntryKey;
        return Status::Ok;
      }
      // Anything but a plain integer as an element (a quoted number, null, an array) is the
      // element's fault; the shape itself is an array.
      if (t != L::kNumber || !lexer_.number_is_u64()) return fail(Status::InvalidInteger, lexer_.token_pos());
      if (rank_ >= limits_.max_rank) {
        fail(Status::RankTooLarge, lexer_.token_pos());
        error_.set_expected(limits_.max_rank);
        return error_.code;
      }
      ++rank_;
      uint64_t v = lexer_.number_value();
      // Element count is order-independent (policy): any zero dimension means zero elements,
      // whatever the other dimensions multiply to.
      if (v == 0) has_zero_dim_ = true;
      else if (!elements_overflow_ && mul_overflow_u64(elements_, v, &elements_)) elements_overflow_ = true;
      uint8_t buf[10];
      append_blob(buf, size_t(put_varint(buf, v) - buf));
      return Status::Ok;
    }

    case kOffsets:
      if (t == L::kArrayEnd) {
        if (offsets_count_ != 2) return fail(Status::InvalidDataOffsets, lexer_.token_pos());
        ctx_ = kEntryKey;
        return Status::Ok;
      }
      if (offsets_count_ == 2) return fail(Status::InvalidDataOffsets, lexer_.token_pos());
      if (t != L::kNumber || !lexer_.number_is_u64()) return fail(Status::InvalidInteger, lexer_.token_pos());
      offsets_[offsets_count_++] = lexer_.number_value();
      return Status::Ok;

    case kSkip:
      // The crate reads every tensor entry whole into serde's buffered Content before it looks at
      // the fields (HashMetadata flattens the tensors: safetensors src/tensor.rs), so the values of
      // unknown fields are parsed as serde_json parses any value: strings strictly (the lexer
      // rejects lone surrogates, as serde_json's parse_str does), and numbers into u64, i64 or f64
      // — out of the f64 range is an error (de.rs, f64_from_parts).
      if (t == L::kNumber && lexer_.number_out_of_range())
        return fail(Status::JsonNumberOutOfRange, lexer_.token_pos());
      if (skipper_.feed(t, lexer_)) ctx_ = kEntryKey;
      return Status::Ok;

    case kRootValueMeta:
      if (t == L::kNull) {
        ctx_ = kRootKey;
        return Status::Ok;
      }
      if (t != L::kObjectBegin) return fail(Status::MetadataNotObject, lexer_.token_pos());
      meta_begin_ = arena_->low();
      meta_need_begin_ = arena_->need_low();
      meta_count_ = 0;
      ctx_ = kMetaKey;
      return Status::Ok;

    case kMetaKey:
      if (t == L::kObjectEnd) return end_metadata();
      if (lexer_.piece_first()) {
        meta_len_mark_ = arena_->low();
        meta_str_size_ = 0;
        uint8_t* hdr = arena_->grow_low(8);  // [u32 length][u32 header position]
        if (hdr) store_u32(hdr + 4, uint32_t(lexer_.token_pos()));
      }
      meta_str_size_ += lexer_.piece_size();
      append_blob(lexer_.piece(), lexer_.piece_size());
      if (lexer_.piece_last()) {
        if (!arena_->counting()) store_u32(arena_->base() + meta_len_mark_, uint32_t(meta_str_size_));
        ctx_ = kMetaValue;
      }
      return Status::Ok;

    case kMetaValue:
      if (t != L::kStringPiece) return fail(Status::MetadataValueNotString, lexer_.token_pos());
      if (lexer_.piece_first()) {
        meta_len_mark_ = arena_->low();
        meta_str_size_ = 0;
        arena_->grow_low(4);
      }
      if (limits_.keep_metadata) {
        meta_str_size_ += lexer_.piece_size();
        append_blob(lexer_.piece(), lexer_.piece_size());
      }
      if (lexer_.piece_last()) {
        if (!arena_->counting()) store_u32(arena_->base() + meta_len_mark_, uint32_t(meta_str_size_));
        ++meta_count_;
        ctx_ = kMetaKey;
      }
      return Status::Ok;

    case kDone:
      return Status::Ok;  // the lexer rejects anything after the root object
  }
  return Status::Ok;
}

Status SafetensorsHeaderParser::end_root_key() {
  if (key_is_meta_ && key_size_ == kMetadataKeyLen) {
    arena_->rewind_low(key_mark_, key_need_mark_);
    if (meta_seen_) return fail_at(Status::DuplicateMetadata, header_start_ + key_pos_, kNoTensor);
    meta_seen_ = true;
    ctx_ = kRootValueMeta;
    return Status::Ok;
  }
  if (key_size_ > limits_.max_name_bytes) {
    return fail_values(Status::NameTooLong, header_start_ + key_pos_, kNoTensor, key_size_,
                       limits_.max_name_bytes);
  }
  if (!arena_->counting()) store_u32(arena_->base() + key_mark_, uint32_t(key_size_));
  if (tensor_count_ >= limits_.max_tensors) {
    fail_at(Status::TooManyTensors, header_start_ + key_pos_, uint32_t(key_mark_));
    error_.set_expected(limits_.max_tensors);
    return error_.code;
  }
  ctx_ = kRootValueTensor;
  return Status::Ok;
}

Status SafetensorsHeaderParser::end_entry(uint64_t close_pos) {
  if (!(seen_fields_ & kFieldDtype)) return fail(Status::MissingDtype, close_pos);
  if (!(seen_fields_ & kFieldShape)) return fail(Status::MissingShape, close_pos);
  if (!(seen_fields_ & kFieldOffsets)) return fail(Status::MissingDataOffsets, close_pos);
  uint64_t begin = offsets_[0], end = offsets_[1];
  if (end < begin) return fail(Status::DataOffsetsReversed, close_pos);
  uint64_t elements = has_zero_dim_ ? 0 : elements_;
  if (!has_zero_dim_ && elements_overflow_) return fail(Status::ShapeOverflow, close_pos);
  uint64_t bits;
  if (mul_overflow_u64(elements, dtype_bits(static_cast<DType>(dtype_)), &bits))
    return fail(Status::ShapeOverflow, close_pos);
  if (bits % 8 != 0) return fail(Status::MisalignedSlice, close_pos);
  if (end - begin != bits / 8) {
    fail(Status::TensorSizeMismatch, close_pos);
    error_.set_found(end - begin);
    error_.set_expected(bits / 8);
    return error_.code;
  }

  // The dims were packed as they arrived; put [u8 dtype][varint rank] in front of them.
  size_t prefix = 1 + varint_size(rank_);
  size_t dims_bytes = arena_->need_low() - dims_need_mark_;
  if (arena_->grow_low(prefix) != nullptr) {
    uint8_t* dims = arena_->base() + dims_mark_;
    memmove(dims + prefix, dims, dims_bytes);
    dims[0] = dtype_;
    put_varint(dims + 1, rank_);
  }
  TensorRecord* rec = static_cast<TensorRecord*>(arena_->grow_high(sizeof(TensorRecord)));
  if (rec) {
    rec->begin = begin;
    rec->end = end;
    rec->blob = uint32_t(key_mark_);
    rec->header_pos = uint32_t(key_pos_);
  }
  ++tensor_count_;
  ctx_ = kRootKey;
  return Status::Ok;
}

Status SafetensorsHeaderParser::end_metadata() {
  ctx_ = kRootKey;
  size_t meta_bytes = arena_->need_low() - meta_need_begin_;
  if (arena_->counting()) {
    skipped_check_ = true;
    arena_->note_scratch(duplicate_table_bytes(meta_count_) + 4 + meta_count_ * sizeof(uint32_t));
    if (!limits_.keep_metadata) arena_->rewind_low(meta_begin_, meta_need_begin_);
    return Status::Ok;
  }
  // Scratch: an offset per entry, then the hash table, above the metadata; released afterwards.
  size_t mark = arena_->low(), need_mark = arena_->need_low();
  uint32_t* offs = arena_->grow_scratch(size_t(meta_count_) * 4 + duplicate_table_bytes(meta_count_));
  if (!offs) {
    skipped_check_ = true;
    return Status::Ok;  // counting now; finish() reports ArenaExhausted with the full need
  }
  uint32_t* table = offs + meta_count_;
  const uint8_t* base = arena_->base();
  size_t off = meta_begin_;
  for (uint32_t i = 0; i < meta_count_; ++i) {
    offs[i] = uint32_t(off);
    uint32_t klen = load_u32(base + off);
    uint32_t vlen = load_u32(base + off + 8 + klen);
    off += 12 + size_t(klen) + vlen;
  }
  (void)meta_bytes;
  auto key = [&](uint32_t i) {
    StrView s;
    s.data = reinterpret_cast<const char*>(base + offs[i] + 8);
    s.size = load_u32(base + offs[i]);
    return s;
  };
  uint32_t dup = find_duplicate(meta_count_, key, table, reinterpret_cast<uintptr_t>(base));
  uint32_t dup_pos = dup == kNoDuplicate ? 0 : load_u32(base + offs[dup] + 4);
  arena_->rewind_low(mark, need_mark);
  if (dup != kNoDuplicate)
    return fail_at(Status::DuplicateMetadataKey, header_start_ + dup_pos, kNoTensor);
  if (limits_.keep_metadata) {
    has_meta_ = true;
    meta_end_ = arena_->low();
  } else {
    arena_->rewind_low(meta_begin_, meta_need_begin_);
    meta_count_ = 0;
  }
  return Status::Ok;
}

Status SafetensorsHeaderParser::finish(TensorTable* table) {
  if (error_.code != Status::Ok) return error_.code;
  if (!lexer_.complete()) return fail(Status::JsonUnexpectedEnd, lexer_.consumed());
  uint32_t n = tensor_count_;
  // Scratch for the duplicate check, 4-byte aligned above the names.
  size_t mark = arena_->low(), need_mark = arena_->need_low();
  uint32_t* scratch = arena_->grow_scratch(duplicate_table_bytes(n));
  if (!scratch) return fail_at(Status::ArenaExhausted, header_start_ + lexer_.consumed(), kNoTensor);
  const uint8_t* base = arena_->base();
  // Records were pushed downwards: declaration order i lives at recs[n - 1 - i].
  TensorRecord* recs = reinterpret_cast<TensorRecord*>(arena_->high_begin());
  auto name_of = [&](uint32_t i) {
    const uint8_t* p = base + recs[n - 1 - i].blob;
    StrView s;
    s.data = reinterpret_cast<const char*>(p + 4);
    s.size = load_u32(p);
    return s;
  };
  uint32_t dup = find_duplicate(n, name_of, scratch, reinterpret_cast<uintptr_t>(base));
  arena_->rewind_low(mark, need_mark);
  if (dup != kNoDuplicate) {
    const TensorRecord& r = recs[n - 1 - dup];
    return fail_at(Status::DuplicateTensorName, header_start_ + r.header_pos, r.blob);
  }

  // File order = (begin, end), ties in declaration order (blob offsets grow with it). Writers
  // usually declare in file order, which leaves the array reversed: undo that in O(n) first.
  auto less = [](const TensorRecord& a, const TensorRecord& b) { return file_order_less(&a, &b, nullptr); };
  // The common case in one pass: declared in file order, contiguous from 0. Either way one copy
  // of the table's installation below (code size on microcontrollers).
  uint64_t start = 0;
  uint32_t in_order = 0;
  for (; in_order < n; ++in_order) {
    const TensorRecord& r = recs[n - 1 - in_order];
    if (r.begin != start || r.end < r.begin) break;
    start = r.end;
  }
  if (in_order == n) {
    std::reverse(recs, recs + n);
  } else {
    bool descending = true;
    for (uint32_t i = 1; i < n && descending; ++i) descending = less(recs[i], recs[i - 1]);
    if (descending) std::reverse(recs, recs + n);
    bool ascending = true;
    for (uint32_t i = 1; i < n && ascending; ++i) ascending = !less(recs[i], recs[i - 1]);
    if (!ascending) heap_sort(recs, n, sizeof(TensorRecord), file_order_less, nullptr);

    start = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const TensorRecord& r = recs[i];
      if (r.begin != start) {
        Status s = r.begin > start ? Status::DataOffsetGap : Status::DataOffsetOverlap;
        fail_values(s, header_start_ + r.header_pos, r.blob, r.begin, start);
        error_.tensor = i;
        return s;
      }
      start = r.end;
    }
  }
  data_size_ = start;
  table->set(base, recs, n, header_start_);
  if (has_meta_) table->set_metadata(uint32_t(meta_begin_), uint32_t(meta_end_), meta_count_);
  return Status::Ok;
}

}  // namespace detail
}  // namespace ws

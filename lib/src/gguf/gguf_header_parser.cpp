// GGUF header: counts, key-value pairs (as events), tensor infos (into the arena), with ggml's
// checks in the order ggml applies them. Offsets in errors point at the offending field.
#include "weightstream/detail/gguf_header_parser.h"

#include <string.h>

#include <algorithm>

#include "weightstream/detail/bytes.h"
#include "weightstream/detail/duplicate_finder.h"

namespace ws {
namespace detail {

namespace {

constexpr uint64_t kMaxString = uint64_t(1) << 30;  // ggml: strings up to 1 GiB
constexpr uint64_t kMaxArray = uint64_t(1) << 30;   // ggml: arrays up to 2^30 elements
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;     // key length, 1-byte key, type, u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset

constexpr char kAlignmentKey[] = "general.alignment";
constexpr char kArchitectureKey[] = "general.architecture";

}  // namespace

// The state block starts at zero (value-initialization); these fields do not.
GgufHeaderParser::GgufHeaderParser() : GgufParserState() {
  input_size_ = nul_at_ = ~0ull;
  alignment_ = 32;
}

// The input ended inside the header. A NUL already read in the unfinished key, tensor name or
// general.architecture value came first in the file: that is the error (nul_at_ is only set
// while one of those is being read).
void GgufHeaderParser::truncated(uint64_t pos) {
  if (nul_at_ == ~0ull) fail(Status::TruncatedHeader, pos);
  else fail(state_ == kKey ? Status::GgufNulInKey : state_ == kTiName ? Status::GgufNulInTensorName
                                                                      : Status::GgufNulInArchitecture, nul_at_);
}

void GgufHeaderParser::reset(Arena* arena, const Limits& limits, uint32_t version, uint64_t input_size) {
  *this = GgufHeaderParser();
  arena_ = arena;
  limits_ = limits;
  version_ = version;
  input_size_ = input_size;
}

StrView GgufHeaderParser::architecture() const {
  StrView s;
  s.data = arch_;
  s.size = arch_len_;
  return s;
}

// Errors are reported in file order. ggml checks each key and tensor name against the earlier
// ones as it reads them; this reader checks duplicates once a section is complete, so before
// reporting any later error it looks for a duplicate among what was read so far: that one came
// first in the file and wins. Returns false when a duplicate took the error's place.
bool GgufHeaderParser::record_error(Status s, uint64_t offset) {
  if (s != Status::GgufDuplicateKey && s != Status::DuplicateTensorName && earlier_duplicate()) return false;
  // Out of arena, the names read so far were not all kept: a duplicate among them (an earlier
  // error) cannot be ruled out. Say so, with the size that suffices, rather than a later error.
  if (arena_->counting() && s != Status::ArenaExhausted && state_ >= kKeyLen && state_ < kInfosDone)
    s = Status::ArenaExhausted;
  error_ = Error();
  error_.code = s;
  error_.offset = offset;
  return true;
}

GgufHeaderParser::Step GgufHeaderParser::fail(Status s, uint64_t offset) {
  record_error(s, offset);
  return kError;
}

// `expected` of ~0 means there is no single required value (e.g. "a power of two").
GgufHeaderParser::Step GgufHeaderParser::fail_value(Status s, uint64_t offset, uint64_t found, uint64_t expected) {
  if (record_error(s, offset)) {
    error_.set_found(found);
    if (expected != ~0ull) error_.set_expected(expected);
  }
  return kError;
}

// Errors inside a tensor info name the tensor (its name is in the arena once read).
GgufHeaderParser::Step GgufHeaderParser::fail_tensor(Status s, uint64_t offset, uint64_t found,
                                                     uint64_t expected) {
  if (!record_error(s, offset)) return kError;
  if (found != ~0ull) error_.set_found(found);
  if (expected != ~0ull) error_.set_expected(expected);
  if (!arena_->counting() && state_ > kTiName) {
    const uint8_t* p = arena_->base() + name_mark_;
    error_.tensor_name = reinterpret_cast<const char*>(p + 4);
    error_.tensor_name_size = load_u32(p);
  }
  return kError;
}

bool GgufHeaderParser::earlier_duplicate() {
  // Out of arena, the finders only count the scratch they would need (for arena_needed()).
  if (state_ >= kKeyLen && state_ <= kKvEnd) {
    // Keys complete so far: those of earlier KVs, and the current one once its bytes are read.
    uint32_t n = uint32_t(kv_index_) + (state_ > kKey ? 1 : 0);
    uint64_t dup_pos;
    if (find_key_duplicate(n, &dup_pos)) {
      error_ = Error();
      error_.code = Status::GgufDuplicateKey;
      error_.offset = dup_pos;
      return true;
    }
    return false;
  }
  if (state_ >= kTiNameLen && state_ <= kTiOffset) {
    uint32_t dup;
    if (find_name_duplicate(uint32_t(ti_index_), state_ > kTiName, &dup)) {
      report_name_duplicate(dup);
      return true;
    }
  }
  return false;
}

// ggml reads keys and tensor names as C strings (strcmp, ggml_set_name), llama.cpp the
// architecture too: a NUL ends them there and not here, so a key, tensor name or
// general.architecture holding one is rejected (status.h). This notes the first NUL of the
// current string among the n bytes at in[used..], in[0] being at absolute offset pos.
void GgufHeaderParser::note_nul(const uint8_t* in, size_t used, size_t n, uint64_t pos) {
  const void* z = nul_at_ == ~0ull ? memchr(in + used, 0, n) : nullptr;
  if (z) nul_at_ = pos + uint64_t(static_cast<const uint8_t*>(z) - in);
}

bool GgufHeaderParser::gather(const uint8_t* in, size_t size, size_t* used, uint64_t pos, uint32_t n) {
  if (have_ == 0 && size - *used >= n) {  // the whole field in this piece: one load
    field_pos_ = pos + *used;
    const uint8_t* p = in + *used;
    uint64_t v = 0;
    memcpy(&v, p, n);  // little-endian host (checked at build time in gguf_header_parser.h)
    field_ = v;
    *used += n;
    return true;
  }
  if (have_ == 0) field_pos_ = pos + *used;
  while (have_ < n && *used < size) buf_[have_++] = in[(*used)++];
  if (have_ < n) return false;
  field_ = 0;
  for (uint32_t i = 0; i < n; ++i) field_ |= uint64_t(buf_[i]) << (8 * i);
  have_ = 0;
  return true;
}

bool GgufHeaderParser::fits_remaining(uint64_t need, uint64_t pos) const {
  return input_size_ == ~0ull || (pos <= input_size_ && need <= input_size_ - pos);
}

// The caller passes a fresh Event: only the fields of this event are set.
void GgufHeaderParser::kv_event(Event* ev, EventType type) const {
  ev->type = type;
  ev->kv = uint32_t(kv_index_);
  ev->value_type = type_;
  ev->elem_type = elem_type_;
  ev->count = count_;
}

void GgufHeaderParser::begin_kv_event(Event* ev) const {
  kv_event(ev, EventType::KvBegin);
  ev->offset = kv_pos_;
  if (!arena_->counting()) {
    const uint8_t* p = arena_->base() + key_mark_;
    ev->key.data = reinterpret_cast<const char*>(p + 12);
    ev->key.size = load_u32(p);
  }
}

GgufHeaderParser::Step GgufHeaderParser::step(const uint8_t* in, size_t size, size_t* used, uint64_t pos,
                                              Event* ev, TensorTable* table) {
  if (error_.code != Status::Ok) return kError;
  for (;;) {
    switch (state_) {
      case kCounts:
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        if (int64_t(field_) < 0) return fail(Status::GgufNegativeCount, field_pos_);
        if (field_ > limits_.max_tensors) return fail_value(Status::TooManyTensors, field_pos_, field_, limits_.max_tensors);
        n_tensors_ = field_;
        {
          // With a known input size, the tensor infos alone must fit after the 8-byte KV count
          // (an input too short for the KV count itself is a truncation, found where it ends).
          uint64_t ti_bytes;
          if (fits_remaining(8, pos + *used) &&
              (__builtin_mul_overflow(n_tensors_, kMinTensorInfoBytes, &ti_bytes) ||
               !fits_remaining(ti_bytes, pos + *used + 8)))
            return fail(Status::GgufCountTooLarge, field_pos_);
        }
        state_ = kKvCount;
        continue;

      case kKvCount: {
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        if (int64_t(field_) < 0) return fail(Status::GgufNegativeCount, field_pos_);
        n_kv_ = field_;
        // Every KV and tensor info has a minimum size: counts the input cannot hold are rejected
        // before anything is read (the published GGUF CVEs allocate from such counts).
        uint64_t kv_bytes, ti_bytes, total;
        if (n_kv_ > 0xFFFFFFFFu || __builtin_mul_overflow(n_kv_, kMinKvBytes, &kv_bytes) ||
            __builtin_mul_overflow(n_tensors_, kMinTensorInfoBytes, &ti_bytes) ||
            __builtin_add_overflow(kv_bytes, ti_bytes, &total) || !fits_remaining(total, pos + *used))
          return fail(Status::GgufCountTooLarge, field_pos_);
        keys_begin_ = arena_->low();
        state_ = n_kv_ ? kKeyLen : kKeysDone;
        continue;
      }

      case kKeyLen: {
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        kv_pos_ = field_pos_;
        key_len_ = field_;
        if (key_len_ == 0) return fail(Status::GgufEmptyKey, field_pos_);
        if (key_len_ > kMaxString || !fits_remaining(key_len_, pos + *used))
          return fail_value(Status::GgufStringTooLong, field_pos_, key_len_, kMaxString);
        key_mark_ = arena_->low();
        uint8_t* hdr = arena_->grow_low(12);  // [u32 length][u64 position]
        if (hdr) {
          store_u32(hdr, uint32_t(key_len_));
          memcpy(hdr + 4, &kv_pos_, 8);
        }
        key_done_ = 0;
        nul_at_ = ~0ull;
        key_match_ = 3;
        type_ = elem_type_ = GgufType::U8;
        count_ = 0;
        state_ = kKey;
        continue;
      }

      case kKey: {
        size_t avail = size - *used;
        if (avail == 0) return kNeedInput;
        uint64_t left = key_len_ - key_done_;
        size_t take = left < avail ? size_t(left) : avail;
        const uint8_t* p = in + *used;
        if ((key_match_ & 1) && !(key_done_ + take <= 17 && memcmp(kAlignmentKey + key_done_, p, take) == 0))
          key_match_ &= uint8_t(~1u);
        if ((key_match_ & 2) && !(key_done_ + take <= 20 && memcmp(kArchitectureKey + key_done_, p, take) == 0))
          key_match_ &= uint8_t(~2u);
        uint8_t* dst = arena_->grow_low(take);
        if (dst) memcpy(dst, p, take);
        note_nul(in, *used, take, pos);
        *used += take;
        key_done_ += take;
        if (key_done_ < key_len_) continue;
        state_ = kValueType;
        // Once the key is complete, as for names (record_error still puts an earlier duplicate
        // among the keys read so far first).
        if (nul_at_ != ~0ull) return fail(Status::GgufNulInKey, nul_at_);
        continue;
      }

      case kValueType: {
        if (!gather(in, size, used, pos, 4)) return kNeedInput;
        int32_t t = int32_t(uint32_t(field_));
        if (t < 0 || t >= int32_t(kGgufTypeCount)) return fail(Status::GgufInvalidValueType, field_pos_);
        type_ = static_cast<GgufType>(t);
        is_alignment_ = (key_match_ & 1) && key_len_ == 17;
        is_architecture_ = (key_match_ & 2) && key_len_ == 20 && type_ == GgufType::String;
        if (is_alignment_ && type_ != GgufType::U32) return fail(Status::GgufInvalidAlignmentType, field_pos_);
        if (type_ == GgufType::Array) {
          state_ = kArrType;
          continue;
        }
        state_ = type_ == GgufType::String ? kStrLen : kScalar;
        begin_kv_event(ev);
        return kEvent;
      }

      case kScalar: {
        if (!gather(in, size, used, pos, gguf_type_size(type_))) return kNeedInput;
        kv_event(ev, EventType::KvScalar);
        ev->offset = field_pos_;
        uint64_t v = field_;
        ev->u = v;
        // One switch for the integer and the floating view (code size on microcontrollers).
        int64_t i = int64_t(v);
        double f = double(v);
        switch (type_) {
          case GgufType::I8: i = int8_t(v); f = double(i); break;
          case GgufType::I16: i = int16_t(v); f = double(i); break;
          case GgufType::I32: i = int32_t(uint32_t(v)); f = double(i); break;
          case GgufType::I64: f = double(i); break;
          case GgufType::F32: {
            float x;
            uint32_t b = uint32_t(v);
            memcpy(&x, &b, 4);
            f = x;
            break;
          }
          case GgufType::F64: memcpy(&f, &v, 8); break;
          default: break;
        }
        ev->i = i;
        ev->f = f;
        if (is_alignment_) {
          if (v == 0 || (v & (v - 1)) != 0) return fail_value(Status::GgufInvalidAlignment, field_pos_, v, ~0ull);
          alignment_ = uint32_t(v);
        }
        state_ = kKvEnd;
        return kEvent;
      }

      case kStrLen:
      case kArrStrLen: {
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        str_len_ = field_;
        if (str_len_ > kMaxString || !fits_remaining(str_len_, pos + *used))
          return fail_value(Status::GgufStringTooLong, field_pos_, str_len_, kMaxString);
        str_done_ = 0;
        // An empty value has no piece whose end would stop the capture: only a non-empty one is
        // captured (otherwise the next string value, e.g. general.name = "bitnet", became it).
        arch_capture_ = is_architecture_ && str_len_ != 0;
        if (is_architecture_) arch_len_ = 0;
        bool array = state_ == kArrStrLen;
        state_ = array ? kArrStrBytes : kStrBytes;
        if (str_len_ == 0) {  // an empty string is still one (empty) piece
          kv_event(ev, EventType::KvBytes);
          ev->index = array ? index_ : 0;
          ev->offset = pos + *used;
          ev->data = in + *used;
          ev->first = ev->last = true;
          if (array) state_ = ++index_ == count_ ? kKvEnd : kArrStrLen;
          else state_ = kKvEnd;
          return kEvent;
        }
        continue;
      }

      case kStrBytes:
      case kArrStrBytes: {
        size_t avail = size - *used;
        if (avail == 0) return kNeedInput;
        uint64_t left = str_len_ - str_done_;
        size_t take = left < avail ? size_t(left) : avail;
        bool array = state_ == kArrStrBytes;
        kv_event(ev, EventType::KvBytes);
        ev->index = array ? index_ : 0;
        ev->offset = pos + *used;
        ev->data = in + *used;
        ev->size = take;
        ev->first = str_done_ == 0;
        ev->last = str_done_ + take == str_len_;
        if (arch_capture_ && !array) {
          size_t room = sizeof(arch_) - arch_len_;
          size_t n = take < room ? take : room;
          memcpy(arch_ + arch_len_, in + *used, n);
          arch_len_ += uint32_t(n);
          // llama.cpp picks the model (and its keys) by the architecture read as a C string.
          // The key had no NUL, so nul_at_ is clear. Reported at the KV's end, once every piece
          // is out (the same events whatever the chunking); nothing else can fail in between.
          note_nul(in, *used, take, pos);
        }
        *used += take;
        str_done_ += take;
        if (ev->last) {
          arch_capture_ = false;
          if (array) state_ = ++index_ == count_ ? kKvEnd : kArrStrLen;
          else state_ = kKvEnd;
        }
        return kEvent;
      }

      case kArrType: {
        if (!gather(in, size, used, pos, 4)) return kNeedInput;
        int32_t t = int32_t(uint32_t(field_));
        if (t == int32_t(GgufType::Array)) return fail(Status::GgufNestedArray, field_pos_);
        if (t < 0 || t >= int32_t(kGgufTypeCount)) return fail(Status::GgufInvalidValueType, field_pos_);
        elem_type_ = static_cast<GgufType>(t);
        state_ = kArrCount;
        continue;
      }

      case kArrCount: {
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        count_ = field_;
        elem_size_ = gguf_type_size(elem_type_);
        uint64_t min_bytes = count_ * (elem_type_ == GgufType::String ? 8 : elem_size_);
        if (count_ > kMaxArray || !fits_remaining(min_bytes, pos + *used))
          return fail_value(Status::GgufArrayTooLong, field_pos_, count_, kMaxArray);
        index_ = 0;
        arr_bytes_left_ = elem_type_ == GgufType::String ? 0 : min_bytes;
        state_ = count_ == 0 ? kKvEnd : elem_type_ == GgufType::String ? kArrStrLen : kArrData;
        begin_kv_event(ev);
        return kEvent;
      }

      case kArrData: {
        size_t avail = size - *used;
        if (avail == 0) return kNeedInput;
        kv_event(ev, EventType::KvBytes);
        ev->index = index_;
        if (have_ != 0 || avail < elem_size_) {
          // An element split across pieces: assembled in buf_, handed out from there.
          if (!gather(in, size, used, pos, elem_size_)) return kNeedInput;
          ev->offset = field_pos_;
          ev->data = buf_;
          ev->size = elem_size_;
          ++index_;
          arr_bytes_left_ -= elem_size_;
        } else {
          uint64_t whole = (avail / elem_size_) * elem_size_;
          size_t take = size_t(whole < arr_bytes_left_ ? whole : arr_bytes_left_);
          ev->offset = pos + *used;
          ev->data = in + *used;
          ev->size = take;
          *used += take;
          index_ += take / elem_size_;
          arr_bytes_left_ -= take;
        }
        if (index_ == count_) state_ = kKvEnd;
        return kEvent;
      }

      case kKvEnd:
        if (nul_at_ != ~0ull) return fail(Status::GgufNulInArchitecture, nul_at_);
        kv_event(ev, EventType::KvEnd);
        ++kv_index_;
        state_ = kv_index_ == n_kv_ ? kKeysDone : kKeyLen;
        return kEvent;

      case kKeysDone: {
        Step s = finish_keys(pos + *used);
        if (s == kError) return s;
        continue;
      }

      case kTiNameLen:
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        ti_pos_ = field_pos_;
        name_len_ = field_;
        if (name_len_ >= 64) return fail_value(Status::GgufTensorNameTooLong, field_pos_, name_len_, 63);
        if (!fits_remaining(name_len_, pos + *used)) return fail_value(Status::GgufStringTooLong, field_pos_, name_len_, ~0ull);
        name_mark_ = arena_->low();
        if (uint8_t* hdr = arena_->grow_low(4)) store_u32(hdr, uint32_t(name_len_));
        name_done_ = 0;
        nul_at_ = ~0ull;
        state_ = kTiName;
        continue;

      case kTiName: {
        if (name_done_ < name_len_) {
          size_t avail = size - *used;
          if (avail == 0) return kNeedInput;
          uint64_t left = name_len_ - name_done_;
          size_t take = left < avail ? size_t(left) : avail;
          if (uint8_t* dst = arena_->grow_low(take)) memcpy(dst, in + *used, take);
          note_nul(in, *used, take, pos);
          *used += take;
          name_done_ += take;
          if (name_done_ < name_len_) continue;
        }
        state_ = kTiNDims;
        // Once the name is complete, so that the error names the tensor.
        if (nul_at_ != ~0ull) return fail_tensor(Status::GgufNulInTensorName, nul_at_);
        continue;
      }

      case kTiNDims:
        if (!gather(in, size, used, pos, 4)) return kNeedInput;
        n_dims_ = uint32_t(field_);
        if (n_dims_ > 4) return fail_tensor(Status::GgufTooManyDims, field_pos_, n_dims_, 4);
        dim_index_ = 0;
        running_elems_ = 1;
        state_ = n_dims_ ? kTiDims : kTiType;
        continue;

      case kTiDims:
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        if (int64_t(field_) < 0) return fail_tensor(Status::GgufNegativeDim, field_pos_);
        dims_[dim_index_] = int64_t(field_);
        // ggml's element-count check, in its order: each running product ne0*...*ne(j) must stay
        // below INT64_MAX (missing dimensions are 1). Order-dependent, like ggml: [2^40, 2^40, 0]
        // is rejected at its second dimension although it holds no elements.
        {
          uint64_t ne = field_;
          if (dim_index_ == 0) {
            running_elems_ = ne;
          } else if (ne != 0 && uint64_t(INT64_MAX) / ne <= running_elems_) {
            return fail_tensor(Status::ShapeOverflow, field_pos_);
          } else {
            running_elems_ *= ne;
          }
          ++dim_index_;
          if (dim_index_ == n_dims_ && n_dims_ < 4 && running_elems_ >= uint64_t(INT64_MAX))
            return fail_tensor(Status::ShapeOverflow, field_pos_);  // against an implicit 1
        }
        if (dim_index_ == n_dims_) state_ = kTiType;
        continue;

      case kTiType: {
        if (!gather(in, size, used, pos, 4)) return kNeedInput;
        ti_type_pos_ = field_pos_;
        int32_t id = int32_t(uint32_t(field_));
        GgmlTypeInfo info = ggml_type_info(id < 0 ? 0xFFFFFFFFu : uint32_t(id), dialect_);
        if (info.kind == GgmlTypeKind::Unknown || info.kind == GgmlTypeKind::Retired)
          return fail_tensor(info.kind == GgmlTypeKind::Unknown ? Status::GgufInvalidType : Status::GgufRetiredType,
                             field_pos_, uint32_t(field_));
        ggml_type_ = uint32_t(id);
        uint64_t elements = running_elems_;  // checked against INT64_MAX dimension by dimension
        uint64_t ne0 = n_dims_ ? uint64_t(dims_[0]) : 1;
        if (info.kind == GgmlTypeKind::Blocks && ne0 % info.block_elems != 0)
          return fail_tensor(Status::GgufBlockMisaligned, field_pos_, ne0, info.block_elems);
        // Byte size, and where this tensor and the next start, are known once the type is: an
        // overflow of any of them (the published CVE shapes) is reported here.
        if (!ggml_tensor_bytes(info, elements, &nbytes_) || __builtin_add_overflow(expected_offset_, nbytes_, &ti_end_) ||
            !align_up(ti_end_, alignment_, &ti_next_))
          return fail_tensor(Status::ShapeOverflow, field_pos_);
        state_ = kTiOffset;
        continue;
      }

      case kTiOffset: {
        if (!gather(in, size, used, pos, 8)) return kNeedInput;
        if (field_ != expected_offset_)
          return fail_tensor(Status::GgufInvalidTensorOffset, field_pos_, field_, expected_offset_);
        Step s = finish_tensor_info(pos + *used);
        if (s == kError) return s;
        continue;
      }

      case kInfosDone:
        return finish_infos(pos + *used, table);

      case kStateDone:
        return kDone;
    }
  }
}

// Duplicate among the first n keys kept in the arena ([u32 length][u64 position][bytes] each),
// with a hash table as scratch above them; true and the later one's position when found.
bool GgufHeaderParser::find_key_duplicate(uint32_t n, uint64_t* dup_pos) {
  if (n < 2) return false;
  size_t mark = arena_->low(), need_mark = arena_->need_low();
  // Sizing pass or short arena: the scratch counts toward arena_needed(), and the arena's
  // shortfall is reported instead.
  uint32_t* offs = arena_->grow_scratch(size_t(n) * 4 + duplicate_table_bytes(n));
  if (!offs) return false;
  const uint8_t* base = arena_->base();
  size_t off = keys_begin_;
  for (uint32_t i = 0; i < n; ++i) {
    offs[i] = uint32_t(off);
    off += 12 + load_u32(base + off);
  }
  auto key = [&](uint32_t i) {
    StrView k;
    k.data = reinterpret_cast<const char*>(base + offs[i] + 12);
    k.size = load_u32(base + offs[i]);
    return k;
  };
  uint32_t dup = find_duplicate(n, key, offs + n, reinterpret_cast<uintptr_t>(base));
  if (dup != kNoDuplicate) *dup_pos = load_u64(base + offs[dup] + 4);
  arena_->rewind_low(mark, need_mark);
  return dup != kNoDuplicate;
}

// Duplicate among the first n tensor names (records, pushed downwards) and, with `current`, the
// name being read; *dup is the later one's index (n for the current tensor).
bool GgufHeaderParser::find_name_duplicate(uint32_t n, bool current, uint32_t* dup) {
  uint32_t total = n + (current ? 1 : 0);
  if (total < 2) return false;
  size_t mark = arena_->low(), need_mark = arena_->need_low();
  uint32_t* scratch = arena_->grow_scratch(duplicate_table_bytes(total));
  if (!scratch) return false;
  const uint8_t* base = arena_->base();
  const TensorRecord* top = reinterpret_cast<const TensorRecord*>(arena_->high_begin());
  auto name_of = [&](uint32_t i) {
    const uint8_t* p = base + (i < n ? top[n - 1 - i].blob : uint32_t(name_mark_));
    StrView v;
    v.data = reinterpret_cast<const char*>(p + 4);
    v.size = load_u32(p);
    return v;
  };
  uint32_t d = find_duplicate(total, name_of, scratch, reinterpret_cast<uintptr_t>(base));
  arena_->rewind_low(mark, need_mark);
  if (d == kNoDuplicate) return false;
  *dup = d;
  return true;
}

// The later of two equal names, as an error: at its tensor info, naming it.
void GgufHeaderParser::report_name_duplicate(uint32_t dup) {
  uint32_t n = uint32_t(ti_index_);
  const TensorRecord* top = reinterpret_cast<const TensorRecord*>(arena_->high_begin());
  uint32_t blob = dup < n ? top[n - 1 - dup].blob : uint32_t(name_mark_);
  uint64_t at = dup < n ? ti_section_ + top[n - 1 - dup].header_pos : ti_pos_;
  error_ = Error();
  error_.code = Status::DuplicateTensorName;
  error_.offset = at;
  error_.tensor = dup;
  const uint8_t* p = arena_->base() + blob;
  error_.tensor_name = reinterpret_cast<const char*>(p + 4);
  error_.tensor_name_size = load_u32(p);
}

GgufHeaderParser::Step GgufHeaderParser::finish_keys(uint64_t pos) {
  uint64_t dup_pos;
  if (find_key_duplicate(uint32_t(n_kv_), &dup_pos)) return fail(Status::GgufDuplicateKey, dup_pos);
  // Keys are not needed any more (events carried them): release them.
  if (!arena_->counting()) arena_->rewind_low(keys_begin_, keys_begin_);
  if (arch_len_ >= 6 && memcmp(arch_, "bitnet", 6) == 0) dialect_ = GgmlDialect::BitNet;
  ti_section_ = pos;
  state_ = n_tensors_ ? kTiNameLen : kInfosDone;
  return kNeedInput;  // not returned to the caller: step() continues
}

GgufHeaderParser::Step GgufHeaderParser::finish_tensor_info(uint64_t) {
  // Blob after the name: [u8 type][varint rank][varint dims], like safetensors tables.
  size_t n = 1 + varint_size(n_dims_);
  for (uint32_t i = 0; i < n_dims_; ++i) n += varint_size(uint64_t(dims_[i]));
  if (uint8_t* out = arena_->grow_low(n)) {
    *out++ = uint8_t(ggml_type_);
    out = put_varint(out, n_dims_);
    for (uint32_t i = 0; i < n_dims_; ++i) out = put_varint(out, uint64_t(dims_[i]));
  }
  if (TensorRecord* rec = static_cast<TensorRecord*>(arena_->grow_high(sizeof(TensorRecord)))) {
    rec->begin = expected_offset_;
    rec->end = ti_end_;
    rec->blob = uint32_t(name_mark_);
    uint64_t rel = ti_pos_ - ti_section_;
    rec->header_pos = rel > 0xFFFFFFFFu ? 0xFFFFFFFFu : uint32_t(rel);
  }
  data_size_ = ti_end_;
  expected_offset_ = ti_next_;
  ++ti_index_;
  state_ = ti_index_ == n_tensors_ ? kInfosDone : kTiNameLen;
  return kNeedInput;
}

GgufHeaderParser::Step GgufHeaderParser::finish_infos(uint64_t pos, TensorTable* table) {
  uint32_t n = uint32_t(n_tensors_);
  if (arena_->counting()) {
    arena_->note_scratch(duplicate_table_bytes(n) + 4);
    return fail(Status::ArenaExhausted, pos);
  }
  uint32_t dup;
  if (find_name_duplicate(n, false, &dup)) {
    report_name_duplicate(dup);
    return kError;
  }
  if (arena_->counting()) return fail(Status::ArenaExhausted, pos);  // the check's scratch did not fit
  const uint8_t* base = arena_->base();
  TensorRecord* recs = reinterpret_cast<TensorRecord*>(arena_->high_begin());
  std::reverse(recs, recs + n);  // pushed downwards; declaration order is file order in GGUF
  table->set(base, recs, n, ti_section_);
  // Data starts at the next multiple of the alignment, when there is any tensor at all.
  if (n == 0) data_start_ = pos;
  else if (!align_up(pos, alignment_, &data_start_)) return fail(Status::ShapeOverflow, pos);
  state_ = kStateDone;
  return kDone;
}

}  // namespace detail
}  // namespace ws

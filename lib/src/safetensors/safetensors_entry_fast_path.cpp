// The fast path for one canonical tensor entry, `"name":{"dtype":…,"shape":[…],"data_offsets":[…]}`.
//
// Header bytes are nearly all tensor entries, and writers produce them in one simple shape. When a
// whole entry lies inside the current piece and stays within that shape (ASCII name, no escapes,
// only the three known fields, plain integers) and passes every per-entry check, it is stored
// here without the token-by-token lexer. Anything else — a piece boundary, an escape, an unknown
// field, a check that fails — returns 0 having consumed and stored nothing, and the general path
// takes the same bytes. So this path changes speed, never results: for the inputs it accepts it
// produces exactly what the general path would, and it never reports an error itself. Unknown
// fields (whose strings and numbers the general path checks as the reference crate does) and the
// dtype's object form ({"F32": null}) are such exits: no writer puts them in a canonical entry.
#include <string.h>

#include "weightstream/detail/bytes.h"
#include "weightstream/detail/checked_mul.h"
#include "weightstream/detail/json_scan.h"
#include "weightstream/detail/safetensors_header_parser.h"
#include "weightstream/dtype.h"

namespace ws {
namespace detail {

namespace {

constexpr uint32_t kFastMaxRank = 16;  // higher ranks take the general path

// Under wasm every method is forced inline: they run a dozen times per entry, and there the
// inliner left eat() and number() as calls (18 % of validating a 92k-tensor header in node).
// Natively GCC's own choice is 3 % faster.
#if defined(__wasm__)
#define WS_CURSOR_INLINE __attribute__((always_inline)) inline
#else
#define WS_CURSOR_INLINE inline
#endif
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;

  WS_CURSOR_INLINE void ws() {
    while (p < end && json_is_ws(*p)) ++p;
  }
  WS_CURSOR_INLINE bool eat(uint8_t c) {
    if (p < end && *p == c) {  // compact JSON has no whitespace: try the byte first
      ++p;
      return true;
    }
    ws();
    if (p == end || *p != c) return false;
    ++p;
    return true;
  }
  // The literal s (at most 16 bytes) at p. Under wasm, compared as two masked 8-byte words when
  // 16 bytes are there to load: a memcmp of a constant size is a call there. Natively the
  // compiler's inline memcmp is faster than the words (1,680 against 1,400 MB/s on DeepSeek-V3).
  template <size_t N>
  WS_CURSOR_INLINE bool literal(const char (&s)[N]) {
    constexpr size_t n = N - 1;
    static_assert(n >= 1 && n <= 16, "two words at most");
#if defined(__wasm__)
    if (size_t(end - p) >= 16) {
      uint64_t a, b, x = 0, y = 0;
      memcpy(&a, p, 8);
      memcpy(&b, p + 8, 8);
      memcpy(&x, s, n < 8 ? n : 8);
      if constexpr (n > 8) memcpy(&y, s + 8, n - 8);
      constexpr uint64_t ma = n >= 8 ? ~0ull : (1ull << (8 * (n % 8))) - 1;
      constexpr uint64_t mb = n <= 8 ? 0 : n >= 16 ? ~0ull : (1ull << (8 * (n % 8))) - 1;
      if (((a ^ x) & ma) | ((b ^ y) & mb)) return false;
      p += n;
      return true;
    }
#endif
    if (size_t(end - p) < n || memcmp(p, s, n) != 0) return false;
    p += n;
    return true;
  }
  // A plain non-negative integer of at most 19 digits (cannot overflow u64), followed by
  // something that is not part of a number. Leading zeros, signs, fractions and exponents: no.
  WS_CURSOR_INLINE bool number(uint64_t* out) {
    ws();
    if (p == end || !is_digit(*p)) return false;
    uint64_t v = 0;
    if (*p == '0') {
      ++p;
    } else if (end - p >= 24) {  // 8 digits per step (SWAR), as in fast_float
      unsigned total = 0;
      for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t t = w - 0x3030303030303030ull;
        uint64_t nd = (t | (t + 0x7676767676767676ull)) & 0x8080808080808080ull;
        unsigned n = nd ? unsigned(__builtin_ctzll(nd)) >> 3 : 8;
        if (n == 0) break;
        uint64_t d = n == 8 ? t : t << ((8 - n) * 8);
        d = (d * 10) + (d >> 8);
        d = (((d & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
             (((d >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
        static const uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
        v = v * kPow10[n] + d;
        p += n;
        total += n;
        if (n < 8 || total > 19) break;
      }
      if (total > 19) return false;
    } else {
      const uint8_t* start = p;
      while (p < end && is_digit(*p)) v = v * 10 + uint64_t(*p++ - '0');
      if (p - start > 19) return false;
    }
    if (p == end || is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E') return false;
    *out = v;
    return true;
  }
};

// dtype names as little-endian integer keys, compared inline.
constexpr uint64_t dkey(const char* s) {
  uint64_t k = 0;
  for (int i = 0; s[i] && i < 8; ++i) k |= uint64_t(uint8_t(s[i])) << (8 * i);
  return k;
}
inline bool fast_dtype(const uint8_t* s, size_t n, const uint8_t* end, DType* out) {
  if (n > 8 || n < 2 || end - s < 8) return dtype_from_name(reinterpret_cast<const char*>(s), n, out);
  uint64_t k;
  memcpy(&k, s, 8);  // fixed size: one load, no store-forwarding stall
  if (n < 8) k &= (uint64_t(1) << (8 * n)) - 1;
  switch (k) {
#define WS_DTYPE_CASE(name, bits) \
  case dkey(#name):               \
    if (sizeof(#name) - 1 <= 8) { \
      *out = DType::name;         \
      return true;                \
    }                             \
    break;
    WS_DTYPE_LIST(WS_DTYPE_CASE)
#undef WS_DTYPE_CASE
  }
  return false;
}
constexpr uint8_t kBitsTab[] = {
#define WS_DTYPE_BITS(name, bits) bits,
    WS_DTYPE_LIST(WS_DTYPE_BITS)
#undef WS_DTYPE_BITS
};



}  // namespace

size_t SafetensorsHeaderParser::fast_entry(const uint8_t* begin, const uint8_t* end, int boundary) {
  // An entry nests 3 deep (root, entry, shape): a lower nesting limit is the general path's.
  if (limits_.max_nesting < 3) return 0;
  Cursor c{begin, end};
  if (boundary == 2 && !c.eat(',')) return 0;
  if (!c.eat('"')) return 0;
  const uint8_t* quote = c.p - 1;
  const uint8_t* name = c.p;
  for (;;) {
    c.p = skip_plain_words(c.p, end);
    if (c.p == end) return 0;
    uint8_t b = *c.p;
    if (b == '"') break;
    if (b < 0x20 || b >= 0x80 || b == '\\') return 0;
    ++c.p;
  }
  size_t name_len = size_t(c.p - name);
  ++c.p;
  if (name_len > limits_.max_name_bytes || tensor_count_ >= limits_.max_tensors) return 0;
  if (name_len == 12 && memcmp(name, "__metadata__", 12) == 0) return 0;
  if (!c.eat(':') || !c.eat('{')) return 0;

  uint8_t seen = 0;
  uint8_t dtype = 0;
  uint32_t rank = 0;
  uint64_t dims[kFastMaxRank];
  uint64_t offsets[2] = {0, 0};
  for (;;) {
    if (!c.eat('"')) return 0;
    uint8_t field;
    if (c.literal("dtype\"")) field = kFieldDtype;
    else if (c.literal("shape\"")) field = kFieldShape;
    else if (c.literal("data_offsets\"")) field = kFieldOffsets;
    else return 0;
    if (seen & field) return 0;
    seen = uint8_t(seen | field);
    if (!c.eat(':')) return 0;
    if (field == kFieldDtype) {
      if (!c.eat('"')) return 0;
      const uint8_t* s = c.p;
      // Plain printable ASCII only: a control character, a non-ASCII byte or an escape goes to the
      // general path (the 8-byte key compare below would otherwise read "U8\0" as "U8").
      while (c.p < end && c.p - s <= 12 && *c.p != '"' && *c.p != '\\' && *c.p >= 0x20 && *c.p < 0x80) ++c.p;
      if (c.p == end || *c.p != '"') return 0;
      DType d;
      if (!fast_dtype(s, size_t(c.p - s), end, &d)) return 0;
      dtype = uint8_t(d);
      ++c.p;
    } else if (field == kFieldShape) {
      if (!c.eat('[')) return 0;
      c.ws();
      if (c.p < end && *c.p == ']') {
        ++c.p;
      } else {
        for (;;) {
          if (rank == kFastMaxRank || !c.number(&dims[rank])) return 0;
          ++rank;
          if (c.eat(',')) continue;
          if (!c.eat(']')) return 0;
          break;
        }
      }
    } else {
      if (!c.eat('[') || !c.number(&offsets[0]) || !c.eat(',') || !c.number(&offsets[1]) || !c.eat(']'))
        return 0;
    }
    if (c.eat(',')) continue;
    if (!c.eat('}')) return 0;
    break;
  }
  if (seen != (kFieldDtype | kFieldShape | kFieldOffsets) || rank > limits_.max_rank) return 0;

  // The per-entry checks; a failure is left to the general path, which reports it.
  if (offsets[1] < offsets[0]) return 0;
  uint64_t elements = 1;
  bool zero = false, overflow = false;
  for (uint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0) zero = true;
    else if (!overflow && mul_overflow_u64(elements, dims[i], &elements)) overflow = true;
  }
  if (zero) elements = 0;
  else if (overflow) return 0;
  uint64_t bits;
  if (mul_overflow_u64(elements, uint64_t(kBitsTab[dtype]), &bits)) return 0;
  if (bits % 8 != 0 || offsets[1] - offsets[0] != bits / 8) return 0;

  // Store [u32 name_len][name][u8 dtype][varint rank][varint dims] and the record, exactly as the
  // general path does.
  size_t blob = 4 + name_len + 1 + varint_size(rank);
  for (uint32_t i = 0; i < rank; ++i) blob += varint_size(dims[i]);
  // When the arena runs out, growing still counts what would be needed (sizing pass): the
  // stores are skipped, the accounting is the general path's.
  size_t blob_off = arena_->low();
  if (uint8_t* out = arena_->grow_low(blob)) {
    uint32_t len32 = uint32_t(name_len);
    memcpy(out, &len32, 4);
    copy_short(out + 4, name, name_len);
    out += 4 + name_len;
    *out++ = dtype;
    out = put_varint(out, rank);
    for (uint32_t i = 0; i < rank; ++i) out = put_varint(out, dims[i]);
  }
  if (TensorRecord* rec = static_cast<TensorRecord*>(arena_->grow_high(sizeof(TensorRecord)))) {
    rec->begin = offsets[0];
    rec->end = offsets[1];
    rec->blob = uint32_t(blob_off);
    rec->header_pos = uint32_t(lexer_.consumed() + uint64_t(quote - begin));
  }
  ++tensor_count_;
  return size_t(c.p - begin);
}
#undef WS_CURSOR_INLINE

}  // namespace detail
}  // namespace ws

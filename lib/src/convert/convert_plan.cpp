// convert's rules (convert_plan.h): per-weight decisions, shards and their names, the output's
// metadata, the index document and the config.json edit.
#include "weightstream/convert_plan.h"

#include <string.h>

#include "weightstream/detail/heap_sort.h"

namespace ws {

const char* convert_action_name(ConvertAction a) {
  switch (a) {
    case ConvertAction::Decode: return "decode";
    case ConvertAction::CopyStored: return "copy";
    case ConvertAction::Skip: return "skip";
  }
  return "?";
}

DType out_type_dtype(OutType t) {
  return t == OutType::F16 ? DType::F16 : t == OutType::BF16 ? DType::BF16 : DType::F32;
}

uint64_t convert_stored_formats(uint32_t keep_dtypes) {
  uint64_t formats = 0;
  for (uint32_t d = 0; d < 32; ++d) {
    QuantFormat f;
    if ((keep_dtypes >> d & 1u) && quant_format_from_dtype(static_cast<DType>(d), &f))
      formats |= uint64_t(1) << uint32_t(f);
  }
  return formats;
}

ConvertDecision convert_decide(const LogicalWeight& w, uint32_t stored_type, bool gguf, GgmlDialect dialect,
                               uint64_t stored_bytes, const ConvertOptions& options) {
  ConvertDecision d;
  // The stored type as a safetensors dtype, where it is one (GGUF: F32, F16, BF16, the integers, F64
  // by their ggml names).
  bool has_dtype = false;
  DType stored = DType::F32;
  if (gguf) {
    const char* name = ggml_type_info(stored_type, dialect).name;
    has_dtype = dtype_from_name(name, strlen(name), &stored);
  } else if (stored_type < kDTypeCount) {
    has_dtype = true;
    stored = static_cast<DType>(stored_type);
  }
  const bool plain = convention_info(w.convention).plain;
  // Kept: a weight whose decoding is the element-wise one of its own stored dtype (a plain
  // tensor, or a convention's unquantized layer), as ModelLoaderOptions::stored_formats passes
  // weights by format: the decision and the loader's bytes agree.
  QuantFormat own = QuantFormat::F32;
  const bool elementwise = has_dtype && quant_format_from_dtype(stored, &own) && w.decodable && w.format == own;
  const bool keep = elementwise && (options.keep_dtypes >> uint32_t(stored) & 1u);
  if (w.decodable && !keep) {
    d.action = ConvertAction::Decode;
    d.dtype = out_type_dtype(options.to);
    d.bytes = w.elements * out_type_bytes(options.to);
    return d;
  }
  if (has_dtype && (plain || !w.decodable || keep)) {
    d.action = ConvertAction::CopyStored;
    d.dtype = stored;
    d.bytes = stored_bytes;
  }
  return d;
}

uint32_t ShardAssigner::add(uint64_t bytes) {
  if (max_ == 0) {
    any_ = true;
    return 0;
  }
  // size_ passes max_ only through one weight larger than the limit, alone in its file.
  if (size_ != 0 && (size_ >= max_ || bytes > max_ - size_)) {
    ++cur_;
    size_ = 0;
  }
  any_ = true;
  size_ += bytes;
  return cur_;
}

namespace {

// Decimal digits of v, at least `width` (zero-padded), into buf (20 bytes); returns the count.
size_t put_decimal(uint64_t v, size_t width, char* buf) {
  char tmp[20];
  size_t k = 0;
  do {
    tmp[k++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  while (k < width && k < sizeof tmp) tmp[k++] = '0';
  for (size_t i = 0; i < k; ++i) buf[i] = tmp[k - 1 - i];
  return k;
}

}  // namespace

// transformers' naming (modeling_utils: "model-{i:05d}-of-{n:05d}.safetensors" from the weights
// name): printf's %05d, so wider numbers are not cut. No snprintf: lib/ stays free of stdio.
namespace {

// The unit `text` (`n` bytes) names: its multiplier, and whether it counts bits. False when it is
// none of parse_byte_size()'s.
bool byte_unit(const char* text, size_t n, uint64_t* mult, bool* bits) {
  *bits = false;
  if (n == 0) {
    *mult = 1;
    return true;
  }
  const char c = text[0];
  const int k = c == 'k' || c == 'K' ? 1 : c == 'm' || c == 'M' ? 2 : c == 'g' || c == 'G' ? 3 : 0;
  if (k == 0) return false;
  if (n == 1) {  // k, M, G: binary
    *mult = uint64_t(1) << (10 * k);
    return true;
  }
  if (n == 3 && (text[1] == 'i' || text[1] == 'I') && (text[2] == 'b' || text[2] == 'B')) {
    *mult = uint64_t(1) << (10 * k);
    return true;
  }
  if (n == 2 && (text[1] == 'b' || text[1] == 'B')) {
    *mult = k == 1 ? 1000u : k == 2 ? 1000000u : 1000000000u;
    *bits = text[1] == 'b';  // upstream: size.endswith("b")
    return true;
  }
  return false;
}

}  // namespace

bool parse_byte_size(const char* text, size_t n, uint64_t* out) {
  size_t i = 0;
  uint64_t whole = 0;
  while (i < n && text[i] >= '0' && text[i] <= '9') {
    if (__builtin_mul_overflow(whole, uint64_t(10), &whole) || __builtin_add_overflow(whole, uint64_t(text[i] - '0'), &whole))
      return false;
    ++i;
  }
  if (i == 0) return false;
  // The fraction's digits, as a numerator over 10^digits: the first nine (frac * mult then stays
  // below 10^9 * 2^30 < 2^60; a tenth digit moves the result by at most a byte of a GiB).
  uint64_t frac = 0, denom = 1;
  if (i < n && text[i] == '.') {
    ++i;
    const size_t first = i;
    while (i < n && text[i] >= '0' && text[i] <= '9') {
      if (denom < 1000000000u) {
        frac = frac * 10 + uint64_t(text[i] - '0');
        denom *= 10;
      }
      ++i;
    }
    if (i == first) return false;
  }
  uint64_t mult = 0, v = 0;
  bool bits = false;
  if (!byte_unit(text + i, n - i, &mult, &bits)) return false;
  if (denom > 1 && i == n) return false;  // a fraction of a byte: a fraction needs a unit
  if (__builtin_mul_overflow(whole, mult, &v)) return false;
  if (__builtin_add_overflow(v, frac * mult / denom, &v)) return false;  // truncated
  if (bits) v /= 8;
  if (v == 0) return false;
  *out = v;
  return true;
}

size_t convert_shard_name(uint32_t i, uint32_t n, char* out, size_t cap) {
  char buf[64];
  size_t k = 0;
  if (n <= 1) {
    memcpy(buf, "model.safetensors", 17);
    k = 17;
  } else {
    memcpy(buf, "model-", 6);
    k = 6;
    k += put_decimal(uint64_t(i) + 1, 5, buf + k);
    memcpy(buf + k, "-of-", 4);
    k += 4;
    k += put_decimal(n, 5, buf + k);
    memcpy(buf + k, ".safetensors", 12);
    k += 12;
  }
  if (cap) {
    const size_t c = k < cap - 1 ? k : cap - 1;
    memcpy(out, buf, c);
    out[c] = 0;
  }
  return k;
}

uint32_t convert_metadata(const TensorTable* input, const char* from, OutType to, WriterMetadata* out, uint32_t cap) {
  uint32_t n = 0;
  auto put = [&](const char* k, size_t kn, const char* v, size_t vn) {
    if (n >= cap) return;
    out[n].key = k;
    out[n].key_size = kn;
    out[n].value = v;
    out[n].value_size = vn;
    ++n;
  };
  StrView format;
  if (!input || !input->find_metadata("format", &format)) put("format", 6, "pt", 2);
  if (input) {
    uint32_t cursor = 0;
    for (uint32_t i = 0; i < input->metadata_count(); ++i) {
      const MetadataEntry e = input->metadata_at(&cursor);
      if (e.key.size >= 13 && memcmp(e.key.data, "weightstream.", 13) == 0) continue;
      put(e.key.data, e.key.size, e.value.data, e.value.size);
    }
  }
  put("weightstream.converted_from", 27, from, strlen(from));
  const char* t = out_type_name(to);
  put("weightstream.converted_to", 25, t, strlen(t));
  return n;
}

namespace {

// Buffered output to a ByteSink: small pieces gathered into one buffer.
struct Out {
  ByteSink sink;
  void* ctx;
  uint8_t buf[512];
  size_t n = 0;
  bool ok = true;
  void flush() {
    if (ok && n) ok = sink(ctx, buf, n);
    n = 0;
  }
  void put(const char* p, size_t len) {
    while (ok && len) {
      if (n == sizeof buf) flush();
      size_t k = sizeof buf - n < len ? sizeof buf - n : len;
      memcpy(buf + n, p, k);
      n += k;
      p += k;
      len -= k;
    }
  }
  void put(const char* z) { put(z, strlen(z)); }
  void put_hex4(uint32_t u) {
    static const char kHex[] = "0123456789abcdef";
    char e[6] = {'\\', 'u', kHex[u >> 12 & 15], kHex[u >> 8 & 15], kHex[u >> 4 & 15], kHex[u & 15]};
    put(e, 6);
  }
};

// A JSON string as Python's json.dumps writes it with ensure_ascii (Lib/json/encoder.py,
// py_encode_basestring_ascii): \" \\ \n \r \t \b \f, every other byte outside ' '..'~' as \uXXXX
// of its code point (a UTF-16 surrogate pair above U+FFFF). Returns the offset of a byte that is
// not UTF-8, or len.
size_t put_py_string(Out* o, const char* s, size_t len) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s);
  o->put("\"", 1);
  size_t i = 0;
  while (i < len) {
    const uint8_t c = p[i];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      size_t j = i;
      while (j < len && p[j] >= 0x20 && p[j] < 0x7F && p[j] != '"' && p[j] != '\\') ++j;
      o->put(s + i, j - i);
      i = j;
      continue;
    }
    if (c < 0x80) {
      const char* e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                      : c == 0x08 ? "\\b" : c == 0x0C ? "\\f" : nullptr;
      if (e) o->put(e, 2);
      else o->put_hex4(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its code point (validated: no overlongs, surrogates, or past U+10FFFF).
    uint32_t cp, need;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) cp = c & 0x1F, need = 1;
    else if (c >= 0xE0 && c <= 0xEF) cp = c & 0x0F, need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) cp = c & 0x07, need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (len - i <= need || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (uint32_t k = 1; k <= need; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      o->put_hex4(0xD800 | cp >> 10);
      o->put_hex4(0xDC00 | (cp & 0x3FF));
    } else {
      o->put_hex4(cp);
    }
    i += need + 1;
  }
  o->put("\"", 1);
  return len;
}

struct SortCtx {
  const ConvertIndexEntry* e;
};

bool name_less(const void* a, const void* b, const void* ctx) {
  const ConvertIndexEntry* e = static_cast<const SortCtx*>(ctx)->e;
  const uint32_t x = *static_cast<const uint32_t*>(a), y = *static_cast<const uint32_t*>(b);
  const size_t nx = e[x].name_size, ny = e[y].name_size;
  const int c = memcmp(e[x].name, e[y].name, nx < ny ? nx : ny);
  if (c != 0) return c < 0;
  if (nx != ny) return nx < ny;
  return x < y;
}

}  // namespace

Status write_convert_index(const ConvertIndexEntry* entries, uint32_t n, uint32_t shard_count, uint64_t total_size,
                           uint32_t* order, ByteSink sink, void* ctx) {
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  SortCtx sc{entries};
  detail::heap_sort(order, n, sizeof(uint32_t), name_less, &sc);
  Out o;
  o.sink = sink;
  o.ctx = ctx;
  char num[20];
  const size_t digits = put_decimal(total_size, 1, num);
  o.put("{\n  \"metadata\": {\n    \"total_size\": ");
  o.put(num, digits);
  o.put("\n  },\n  \"weight_map\": {");
  for (uint32_t k = 0; k < n; ++k) {
    const ConvertIndexEntry& e = entries[order[k]];
    o.put(k ? ",\n    " : "\n    ");
    if (put_py_string(&o, e.name, e.name_size) != e.name_size) return Status::InvalidUtf8;
    o.put(": \"");
    char file[64];
    o.put(file, convert_shard_name(e.shard, shard_count, file, sizeof file));
    o.put("\"");
  }
  o.put(n ? "\n  }\n}\n" : "}\n}\n");
  o.flush();
  return o.ok ? Status::Ok : Status::Aborted;
}

namespace {

bool is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end of the JSON value starting at p[i] (strings, numbers, literals, nested containers by a
// depth count: no recursion), or n when the document ends first.
size_t value_end(const uint8_t* p, size_t n, size_t i) {
  uint64_t depth = 0;
  while (i < n) {
    const uint8_t c = p[i];
    if (c == '"') {
      ++i;
      while (i < n && p[i] != '"') i += p[i] == '\\' ? 2 : 1;
      if (i >= n) return n;
      ++i;
    } else if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;
      --depth;
      ++i;
    } else if (c == ',' && depth == 0) {
      return i;
    } else {
      ++i;
    }
    if (depth == 0 && (c == '"' || c == '}' || c == ']')) {
      // A complete string or container at depth 0: the value ends here (trailing whitespace
      // is left to the caller).
      return i;
    }
  }
  return n;
}

bool key_is(const uint8_t* p, size_t b, size_t e, const char* k) {
  const size_t kn = strlen(k);
  return e - b == kn + 2 && memcmp(p + b + 1, k, kn) == 0;
}

}  // namespace

Status config_without_quantization(const uint8_t* json, size_t n, ByteSink sink, void* ctx, uint32_t* removed) {
  if (removed) *removed = 0;
  size_t i = 0;
  while (i < n && is_ws(json[i])) ++i;
  if (i >= n || json[i] != '{') return Status::ConfigNotObject;
  // Members: [key_begin, value_end) spans; a removed member takes the comma before it, or, when
  // it is the first, the comma after it, so the rest stays as it was.
  size_t emitted = 0;  // json[0, emitted) is out (or dropped)
  bool first = true;
  size_t prev_end = i + 1;  // where the previous member (or the '{') ended
  ++i;
  bool drop_next_comma = false;
  for (;;) {
    while (i < n && is_ws(json[i])) ++i;
    if (i >= n) return Status::ConfigNotObject;
    if (json[i] == '}') break;
    if (json[i] == ',') {
      ++i;
      continue;
    }
    if (json[i] != '"') return Status::ConfigNotObject;
    const size_t kb = i;
    const size_t ke = value_end(json, n, i);
    size_t j = ke;
    while (j < n && is_ws(json[j])) ++j;
    if (j >= n || json[j] != ':') return Status::ConfigNotObject;
    ++j;
    while (j < n && is_ws(json[j])) ++j;
    size_t ve = value_end(json, n, j);
    if (ve >= n || ve == j) return Status::ConfigNotObject;
    while (ve > j && is_ws(json[ve - 1])) --ve;  // a number or literal's span ends at the next ',' or '}'

    const bool drop = key_is(json, kb, ke, "quantization_config") || key_is(json, kb, ke, "quantization");
    if (drop) {
      if (removed) ++*removed;
      if (!first) {
        // From the comma after the previous member through this one's value.
        size_t c = prev_end;
        while (c < kb && json[c] != ',') ++c;
        if (c > emitted && !sink(ctx, json + emitted, c - emitted)) return Status::Aborted;
        emitted = ve;
      } else {
        // The first member: it and the comma (and whitespace) after it.
        if (kb > emitted && !sink(ctx, json + emitted, kb - emitted)) return Status::Aborted;
        emitted = ve;
        drop_next_comma = true;
      }
    } else {
      if (drop_next_comma) {
        // The dropped first member's comma: skip from its value's end to this key.
        emitted = kb;
        drop_next_comma = false;
      }
      first = false;
    }
    prev_end = ve;
    i = ve;
  }
  if (drop_next_comma) {
    // Every member so far dropped and nothing after: keep the whitespace before the '}'.
    size_t c = emitted;
    while (c < i && json[c] != ',') ++c;
    emitted = c < i ? c + 1 : emitted;
  }
  if (n > emitted && !sink(ctx, json + emitted, n - emitted)) return Status::Aborted;
  return Status::Ok;
}

}  // namespace ws

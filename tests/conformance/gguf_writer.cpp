// The tests' GGUF writer (see gguf_writer.h).
#include "gguf_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace wsgguf {

namespace {

[[noreturn]] void die(const std::string& why) {
  fprintf(stderr, "gguf_writer: %s\n", why.c_str());
  abort();
}

struct Row {
  const char* name;
  int kind;
  uint16_t elems, bytes;
};

// FORMATS.md §5, by id. kind: 1 retired, 2 blocks.
const Row kUpstream[] = {
    {"F32", 2, 1, 4},        {"F16", 2, 1, 2},        {"Q4_0", 2, 32, 18},     {"Q4_1", 2, 32, 20},
    {"Q4_2", 1, 0, 0},       {"Q4_3", 1, 0, 0},       {"Q5_0", 2, 32, 22},     {"Q5_1", 2, 32, 24},
    {"Q8_0", 2, 32, 34},     {"Q8_1", 2, 32, 36},     {"Q2_K", 2, 256, 84},    {"Q3_K", 2, 256, 110},
    {"Q4_K", 2, 256, 144},   {"Q5_K", 2, 256, 176},   {"Q6_K", 2, 256, 210},   {"Q8_K", 2, 256, 292},
    {"IQ2_XXS", 2, 256, 66}, {"IQ2_XS", 2, 256, 74},  {"IQ3_XXS", 2, 256, 98}, {"IQ1_S", 2, 256, 50},
    {"IQ4_NL", 2, 32, 18},   {"IQ3_S", 2, 256, 110},  {"IQ2_S", 2, 256, 82},   {"IQ4_XS", 2, 256, 136},
    {"I8", 2, 1, 1},         {"I16", 2, 1, 2},        {"I32", 2, 1, 4},        {"I64", 2, 1, 8},
    {"F64", 2, 1, 8},        {"IQ1_M", 2, 256, 56},   {"BF16", 2, 1, 2},       {"Q4_0_4_4", 1, 0, 0},
    {"Q4_0_4_8", 1, 0, 0},   {"Q4_0_8_8", 1, 0, 0},   {"TQ1_0", 2, 256, 54},   {"TQ2_0", 2, 256, 66},
    {"IQ4_NL_4_4", 1, 0, 0}, {"IQ4_NL_4_8", 1, 0, 0}, {"IQ4_NL_8_8", 1, 0, 0}, {"MXFP4", 2, 32, 17},
    {"NVFP4", 2, 64, 36},    {"Q1_0", 2, 128, 18},    {"Q2_0", 2, 64, 18},
};
constexpr uint32_t kUpstreamCount = sizeof(kUpstream) / sizeof(kUpstream[0]);

// The BitNet fork's 36..39: I2_S (n/4 bytes of codes + a 32-byte tail), then three types of one
// byte per element in its type table.
const Row kBitNet[] = {{"I2_S", 3, 1, 1}, {"I8_S", 2, 1, 1}, {"TL1", 2, 1, 1}, {"TL2", 2, 1, 1}};

std::string le(uint64_t v, uint32_t width) {
  std::string s(width, '\0');
  for (uint32_t i = 0; i < width; ++i) s[i] = char((v >> (8 * i)) & 0xFF);
  return s;
}

uint64_t align_up(uint64_t v, uint64_t a) { return v % a ? v + (a - v % a) : v; }

// Tensors bigger than this get no data bytes (nor does anything after them): they only exist in
// header-error cases.
constexpr uint64_t kMaxWrittenData = 1u << 24;

class Out {
 public:
  explicit Out(Built* b) : b_(b) {}
  uint64_t put(Field kind, const std::string& bytes, int index = -1, int64_t elem = -1,
               uint64_t value = 0, uint32_t elem_type = 0) {
    uint64_t at = b_->bytes.size();
    b_->bytes += bytes;
    b_->fields.push_back({kind, at, b_->bytes.size(), index, elem, value, elem_type});
    return at;
  }
  uint64_t num(Field kind, uint64_t v, uint32_t width, int index = -1, int64_t elem = -1) {
    return put(kind, le(v, width), index, elem, v);
  }
  void str(const std::string& s, int index, int64_t elem) {
    num(Field::StrLen, s.size(), 8, index, elem);
    put(Field::StrBytes, s, index, elem, s.size());
  }

 private:
  Built* b_;
};

}  // namespace

uint32_t value_size(uint32_t type) {
  switch (type) {
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: return 2;
    case kU32: case kI32: case kF32: return 4;
    case kU64: case kI64: case kF64: return 8;
    default: return 0;
  }
}

const char* value_type_name(uint32_t type) {
  static const char* const kNames[] = {"UINT8", "INT8",   "UINT16", "INT16", "UINT32",
                                       "INT32", "FLOAT32", "BOOL",  "STRING", "ARRAY",
                                       "UINT64", "INT64", "FLOAT64"};
  return type < 13 ? kNames[type] : "?";
}

GgmlType ggml_type(uint32_t id, bool bitnet) {
  GgmlType t;
  const Row* r = nullptr;
  if (bitnet && id >= 36 && id <= 39) r = &kBitNet[id - 36];
  else if (id < kUpstreamCount) r = &kUpstream[id];
  if (!r) return t;
  t.name = r->name;
  t.kind = r->kind;
  t.block_elems = r->elems;
  t.block_bytes = r->bytes;
  return t;
}

bool ggml_bytes(const GgmlType& t, uint64_t elements, uint64_t* out) {
  if (t.kind == 3) {
    *out = elements / 4 + 32;
    return true;
  }
  if (t.kind != 2) return false;
  return !__builtin_mul_overflow(elements / t.block_elems, t.block_bytes, out);
}

Kv kv_uint(const std::string& key, uint32_t type, uint64_t v) {
  Kv k;
  k.key = key;
  k.type = type;
  k.raw = v;
  return k;
}
Kv kv_int(const std::string& key, uint32_t type, int64_t v) {
  uint32_t w = value_size(type);
  return kv_uint(key, type, w == 8 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << (8 * w)) - 1));
}
Kv kv_f32(const std::string& key, float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  return kv_uint(key, kF32, bits);
}
Kv kv_f64(const std::string& key, double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  return kv_uint(key, kF64, bits);
}
Kv kv_str(const std::string& key, const std::string& v) {
  Kv k;
  k.key = key;
  k.type = kString;
  k.str = v;
  return k;
}
Kv kv_arr(const std::string& key, uint32_t elem_type, const std::vector<uint64_t>& raw_elems) {
  Kv k;
  k.key = key;
  k.type = kArray;
  k.elem_type = elem_type;
  k.elems = raw_elems;
  return k;
}
Kv kv_arr_str(const std::string& key, const std::vector<std::string>& v) {
  Kv k;
  k.key = key;
  k.type = kArray;
  k.elem_type = kString;
  k.strs = v;
  return k;
}

const char* field_name(Field f) {
  switch (f) {
    case Field::Magic: return "magic";
    case Field::Version: return "version";
    case Field::TensorCount: return "tensor count";
    case Field::KvCount: return "KV count";
    case Field::KeyLen: return "key length";
    case Field::Key: return "key";
    case Field::ValueType: return "value type";
    case Field::Scalar: return "scalar value";
    case Field::StrLen: return "string length";
    case Field::StrBytes: return "string bytes";
    case Field::ArrType: return "array element type";
    case Field::ArrCount: return "array count";
    case Field::ArrElem: return "array element";
    case Field::NameLen: return "tensor name length";
    case Field::Name: return "tensor name";
    case Field::NDims: return "n_dims";
    case Field::Dim: return "dimension";
    case Field::Type: return "tensor type";
    case Field::Offset: return "tensor offset";
    case Field::DataPadding: return "padding before the data";
    case Field::Gap: return "padding between tensors";
    case Field::Data: return "tensor data";
    case Field::TailPadding: return "padding after the last tensor";
  }
  return "?";
}

const FieldAt& Built::field(Field kind, int index, int64_t elem) const {
  for (const FieldAt& f : fields)
    if (f.kind == kind && (index < 0 || f.index == index) && (elem < 0 || f.elem == elem)) return f;
  die(std::string("no field ") + field_name(kind) + " for index " + std::to_string(index));
}

void Built::patch(Field kind, int index, uint64_t v, int64_t elem) {
  for (FieldAt& f : fields) {
    if (f.kind == kind && (index < 0 || f.index == index) && (elem < 0 || f.elem == elem)) {
      bytes.replace(f.begin, f.end - f.begin, le(v, uint32_t(f.end - f.begin)));
      f.value = v;
      return;
    }
  }
  die(std::string("patch: no field ") + field_name(kind));
}

std::string pattern(uint64_t n, uint32_t salt) {
  std::string s(n, '\0');
  for (uint64_t i = 0; i < n; ++i) s[i] = char((i * 37 + 11 + salt * 101 + (i >> 8)) & 0xFF);
  return s;
}

Built build(const Spec& spec) {
  Built b;
  Out o(&b);
  o.put(Field::Magic, "GGUF");
  o.num(Field::Version, spec.version, 4);
  o.num(Field::TensorCount, spec.override_counts ? spec.n_tensors : spec.tensors.size(), 8);
  o.num(Field::KvCount, spec.override_counts ? spec.n_kv : spec.kvs.size(), 8);

  for (size_t i = 0; i < spec.kvs.size(); ++i) {
    const Kv& k = spec.kvs[i];
    int idx = int(i);
    b.kv_offsets.push_back(o.num(Field::KeyLen, k.key.size(), 8, idx));
    o.put(Field::Key, k.key, idx, -1, k.key.size());
    o.num(Field::ValueType, k.type, 4, idx);
    if (k.type == kArray) {
      o.num(Field::ArrType, k.elem_type, 4, idx);
      uint64_t n = k.elem_type == kString ? k.strs.size() : k.elems.size();
      uint64_t at = b.bytes.size();
      b.bytes += le(n, 8);
      b.fields.push_back({Field::ArrCount, at, at + 8, idx, -1, n, k.elem_type});
      for (uint64_t j = 0; j < n; ++j) {
        if (k.elem_type == kString) o.str(k.strs[j], idx, int64_t(j));
        else o.num(Field::ArrElem, k.elems[j], value_size(k.elem_type), idx, int64_t(j));
      }
    } else if (k.type == kString) {
      o.str(k.str, idx, -1);
    } else {
      if (value_size(k.type) == 0) die("kv " + k.key + ": no such value type");
      o.num(Field::Scalar, k.raw, value_size(k.type), idx);
    }
  }

  // Tensor infos: offsets are the running sum of sizes padded to the alignment.
  uint64_t running = 0;
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const Tensor& t = spec.tensors[i];
    int idx = int(i);
    // The layout uses the real size (wrapping like u64 arithmetic); only small tensors get data.
    uint64_t elements = 1, bytes = 0;
    bool overflow = false;
    for (uint64_t d : t.ne) overflow |= __builtin_mul_overflow(elements, d, &elements);
    GgmlType gt = ggml_type(t.type, spec.bitnet);
    if (overflow || !ggml_bytes(gt, elements, &bytes)) bytes = 0;
    uint64_t offset = t.override_offset ? t.offset : running;
    b.ti_offsets.push_back(o.num(Field::NameLen, t.name.size(), 8, idx));
    o.put(Field::Name, t.name, idx, -1, t.name.size());
    o.num(Field::NDims, t.ne.size(), 4, idx);
    for (size_t j = 0; j < t.ne.size(); ++j) o.num(Field::Dim, t.ne[j], 8, idx, int64_t(j));
    o.num(Field::Type, t.type, 4, idx);
    o.num(Field::Offset, offset, 8, idx);
    b.tensor_begin.push_back(offset);
    b.tensor_bytes.push_back(bytes);
    sizes.push_back(bytes <= kMaxWrittenData ? bytes : 0);
    running = align_up(offset + bytes, spec.alignment);
  }
  b.infos_end = b.bytes.size();
  b.data_start = spec.tensors.empty() ? b.infos_end : align_up(b.infos_end, spec.alignment);
  if (!spec.tensors.empty())
    o.put(Field::DataPadding, std::string(b.data_start - b.infos_end, '\0'));

  b.data_end = 0;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    uint64_t begin = b.data_start + b.tensor_begin[i];
    // Overlapping, far-off or huge tensors end the data section (header-error cases only).
    if (begin < b.bytes.size() || begin - b.bytes.size() > kMaxWrittenData ||
        sizes[i] != b.tensor_bytes[i])
      break;
    if (begin > b.bytes.size()) o.put(Field::Gap, std::string(begin - b.bytes.size(), '\0'), int(i));
    o.put(Field::Data, pattern(sizes[i], uint32_t(i)), int(i));
    b.data_end = b.tensor_begin[i] + sizes[i];
  }
  if (spec.tail_padding && !spec.tensors.empty()) {
    uint64_t end = align_up(b.bytes.size(), spec.alignment);
    o.put(Field::TailPadding, std::string(end - b.bytes.size(), '\0'));
  }
  return b;
}

}  // namespace wsgguf

// ws-make-gguf-corpus OUTDIR — writes the malformed-input corpus for GGUF and its expected.json.
//
// Every case is built with the tests' GGUF writer (gguf_writer.h), which records where each field
// went; the expected status, absolute offset and tensor come from those records (the offending
// field's first byte), never from running the library. The committed copy lives in
// tests/corpus/gguf/ and a CTest test regenerates it and compares byte for byte.
//
// Conventions (also in tests/corpus/README.md):
//   * An error is reported at the first byte of the field where the input becomes invalid, in
//     file order: the version (4), a count (8 tensors, 16 KVs), a KV's first byte (its key length:
//     empty and duplicate keys), the value type, the scalar value (alignment), a string's or an
//     array's length, the array element type, the tensor info's first byte (name too long,
//     duplicate name), n_dims, the dimension (negative, or the one that makes the element count
//     overflow int64), the tensor type (unknown, retired, ne0 not a multiple of the block, byte
//     size or padded end overflowing 64 bits), the tensor offset.
//   * Duplicates (keys, tensor names) are detected when the second one is read, as ggml does:
//     a later error does not hide them.
//   * The input ending early: HeaderTooSmall before byte 8, TruncatedHeader inside the header,
//     TruncatedData after it — at the input's end. TrailingBytes at the end of the last tensor's
//     padding (which may be present, partly present or absent; with no tensors, the padding after
//     the KVs).
//   * "tensor": the tensor whose info was being read once its name is complete, the second of a
//     duplicate pair, or the tensor whose data (or leading padding) is cut off; otherwise null.
//   * status_with_size / offset_with_size / tensor_with_size: the verdict when the input's size
//     is declared up front (gguf_oracle.h): counts, lengths and arrays that the rest of the input
//     cannot hold are rejected where they are read. Equal to the plain verdict where that changes
//     nothing.
//   * Status Ok: "offset" is the file length and "expect" holds what the reader must report, in
//     the schema of the shared testdata's <file>.expect.json (plus data_offset: where the data
//     section starts, and dialect).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gguf_oracle.h"
#include "gguf_writer.h"
#include "sha256.h"

namespace {

using namespace wsgguf;

[[noreturn]] void die(const std::string& why) {
  fprintf(stderr, "ws-make-gguf-corpus: %s\n", why.c_str());
  exit(1);
}

std::string json_escape(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"') o += "\\\"";
    else if (c == '\\') o += "\\\\";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else o += char(c);
  }
  return o + "\"";
}

std::string num(uint64_t v) { return std::to_string(v); }

// A value of a fixed-size type as JSON: integers exactly (64-bit), floats with 17 significant
// digits (enough to read back the same double), bools as true/false.
std::string value_json(uint32_t type, uint64_t raw) {
  char buf[64];
  switch (type) {
    case kI8: return std::to_string(int64_t(int8_t(raw)));
    case kI16: return std::to_string(int64_t(int16_t(raw)));
    case kI32: return std::to_string(int64_t(int32_t(uint32_t(raw))));
    case kI64: return std::to_string(int64_t(raw));
    case kF32: {
      float f;
      uint32_t b = uint32_t(raw);
      memcpy(&f, &b, 4);
      snprintf(buf, sizeof buf, "%.17g", double(f));
      return buf;
    }
    case kF64: {
      double d;
      memcpy(&d, &raw, 8);
      snprintf(buf, sizeof buf, "%.17g", d);
      return buf;
    }
    case kBool: return raw ? "true" : "false";
    default: return num(raw);
  }
}

// The expectation of a valid file, in the schema of the shared <file>.expect.json.
std::string expect_json(const Spec& spec, const Built& b, const std::string& dialect) {
  std::string j = "{\"version\":" + num(spec.version) + ",\"tensor_count\":" +
                  num(spec.tensors.size()) + ",\"kv_count\":" + num(spec.kvs.size()) +
                  ",\"alignment\":" + num(spec.alignment) + ",\"data_offset\":" +
                  num(b.data_start) + ",\"dialect\":" + json_escape(dialect) + ",\"kv\":[";
  for (size_t i = 0; i < spec.kvs.size(); ++i) {
    const Kv& k = spec.kvs[i];
    j += std::string(i ? "," : "") + "{\"key\":" + json_escape(k.key) + ",\"offset\":" +
         num(b.kv_offsets[i]) + ",\"type\":" + num(k.type) + ",\"type_name\":\"" +
         value_type_name(k.type) + "\"";
    if (k.type == kString) {
      j += ",\"value\":" + json_escape(k.str);
    } else if (k.type == kArray) {
      bool strs = k.elem_type == kString;
      uint64_t n = strs ? k.strs.size() : k.elems.size();
      j += ",\"array_type\":" + num(k.elem_type) + ",\"array_type_name\":\"" +
           value_type_name(k.elem_type) + "\",\"array_len\":" + num(n);
      if (strs) {
        uint64_t total = 0;
        for (const std::string& s : k.strs) total += s.size();
        j += ",\"array_string_total_bytes\":" + num(total);
      }
      j += ",\"array_values\":[";
      for (uint64_t e = 0; e < n; ++e)
        j += std::string(e ? "," : "") +
             (strs ? json_escape(k.strs[e]) : value_json(k.elem_type, k.elems[e]));
      j += "]";
    } else {
      j += ",\"value\":" + value_json(k.type, k.raw);
    }
    j += "}";
  }
  j += "],\"tensors\":[";
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const Tensor& t = spec.tensors[i];
    uint64_t elements = 1;
    for (uint64_t d : t.ne) elements *= d;
    std::string data = b.bytes.substr(b.data_start + b.tensor_begin[i], b.tensor_bytes[i]);
    j += std::string(i ? "," : "") + "{\"name\":" + json_escape(t.name) + ",\"type\":" +
         num(t.type) + ",\"type_name\":\"" + ggml_type(t.type, spec.bitnet).name + "\",\"ne\":[";
    for (size_t d = 0; d < t.ne.size(); ++d) j += (d ? "," : "") + num(t.ne[d]);
    j += "],\"n_elements\":" + num(elements) + ",\"n_bytes\":" + num(b.tensor_bytes[i]) +
         ",\"offset\":" + num(b.tensor_begin[i]) + ",\"data_offset_absolute\":" +
         num(b.data_start + b.tensor_begin[i]) + ",\"header_entry_offset\":" + num(b.ti_offsets[i]) +
         ",\"data_sha256\":\"" + wstest::sha256_hex(data.data(), data.size()) + "\"}";
  }
  return j + "]}";
}

struct Case {
  std::string file, bytes;
  Verdict plain, sized;
  std::string description;
  std::string expect;  // valid cases
};

class Corpus {
 public:
  // An input the reader must reject (or, for truncations inside the end padding, accept); the
  // declared-size verdict follows from the field map.
  void bad(const std::string& name, const Built& b, const Verdict& plain, const std::string& why) {
    bad_sized(name, b.bytes, plain, with_declared_size(b, b.bytes.size(), plain), why);
  }
  void bad_sized(const std::string& name, const std::string& bytes, const Verdict& plain,
                 const Verdict& sized, const std::string& why) {
    push({name + ".gguf", bytes, plain, sized, why, std::string()});
  }
  // A valid input: `b` built from `spec` (possibly with end padding added or cut off).
  void good(const std::string& name, const Spec& spec, const Built& b, const std::string& why) {
    Verdict ok = verdict("Ok", b.bytes.size());
    Verdict sized = with_declared_size(b, b.bytes.size(), ok);
    if (sized.status != "Ok") die(name + ": a valid file fails the declared-size checks");
    push({name + ".gguf", b.bytes, ok, ok, why, expect_json(spec, b, spec.bitnet ? "bitnet" : "upstream")});
  }
  void good(const std::string& name, const Spec& spec, const std::string& why) {
    good(name, spec, build(spec), why);
  }
  size_t size() const { return cases_.size(); }

  void write(const std::string& dir) const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) die("cannot create " + dir);
    for (const Case& c : cases_) {
      std::string path = dir + "/" + c.file;
      FILE* f = fopen(path.c_str(), "wb");
      if (!f) die("cannot write " + path);
      if (!c.bytes.empty() && fwrite(c.bytes.data(), 1, c.bytes.size(), f) != c.bytes.size())
        die("short write " + path);
      fclose(f);
    }
    std::string j = "{\"cases\":[\n";
    for (size_t i = 0; i < cases_.size(); ++i) {
      const Case& c = cases_[i];
      auto tensor = [](const Verdict& v) {
        return v.has_tensor ? json_escape(v.tensor) : std::string("null");
      };
      j += " {\"file\":" + json_escape(c.file) + ",\"status\":" + json_escape(c.plain.status) +
           ",\"offset\":" + num(c.plain.offset) + ",\"tensor\":" + tensor(c.plain) +
           ",\"status_with_size\":" + json_escape(c.sized.status) +
           ",\"offset_with_size\":" + num(c.sized.offset) +
           ",\"tensor_with_size\":" + tensor(c.sized) +
           ",\"description\":" + json_escape(c.description);
      if (!c.expect.empty()) j += ",\"expect\":" + c.expect;
      j += i + 1 < cases_.size() ? "},\n" : "}\n";
    }
    j += "]}\n";
    std::string path = dir + "/expected.json";
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(j.data(), 1, j.size(), f) != j.size()) die("cannot write " + path);
    fclose(f);
    printf("ws-make-gguf-corpus: %zu cases written to %s\n", cases_.size(), dir.c_str());
  }

 private:
  void push(Case c) {
    if (!names_.insert(c.file).second) die("duplicate case file " + c.file);
    if (c.plain.status == "Ok" && c.expect.empty() && c.plain.offset != c.bytes.size())
      die(c.file + ": Ok must be at the file length");
    cases_.push_back(std::move(c));
  }
  std::vector<Case> cases_;
  std::set<std::string> names_;
};

const uint64_t kU64Max = ~uint64_t(0);
const uint64_t kI64Min = uint64_t(1) << 63;

// Raw bits of float values, for arrays.
uint64_t f32_bits(float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  return b;
}
uint64_t f64_bits(double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  return b;
}

Tensor T(const std::string& name, uint32_t type, std::vector<uint64_t> ne) {
  Tensor t;
  t.name = name;
  t.type = type;
  t.ne = std::move(ne);
  return t;
}

// A small, ordinary file: an architecture, two KVs, three tensors (8 + 6 + 34 data bytes, so
// every tensor but the first starts after padding).
Spec small() {
  Spec s;
  s.kvs = {kv_str("general.architecture", "llama"), kv_uint("llama.block_count", kU32, 2),
           kv_str("general.name", "small")};
  s.tensors = {T("a", 0, {2}), T("b", 1, {3}), T("c", 8, {32})};
  return s;
}

// A file whose last KV is `last` and which has no tensors: whatever that KV claims to contain
// runs into the end of the input.
Spec ending_with(const Kv& last) {
  Spec s;
  s.kvs = {kv_str("general.architecture", "llama"), last};
  return s;
}

// ---------------------------------------------------------------------------------------------
void preamble(Corpus& c) {
  Built b = build(small());
  c.bad_sized("magic_cut_3", "GGU", verdict("HeaderTooSmall", 3), verdict("HeaderTooSmall", 3),
              "input ends inside the magic: fewer than the 8 bytes of magic and version");
  c.bad_sized("version_cut_6", b.bytes.substr(0, 6), verdict("HeaderTooSmall", 6),
              verdict("HeaderTooSmall", 6), "input ends inside the version");
  struct V {
    const char* name;
    uint32_t v;
    const char* status;
    const char* why;
  } versions[] = {
      {"version_0", 0, "GgufInvalidVersion", "version 0 is no version (ggml's first check)"},
      {"version_1", 1, "GgufVersion1", "GGUF v1 had 32-bit counts; ggml no longer reads it"},
      {"version_4", 4, "GgufVersionTooNew", "version 4 is newer than 3"},
      {"version_byteswapped_3", 0x03000000u, "GgufByteSwapped",
       "version 3 written big-endian: the low 16 bits are zero (ggml's endianness guess)"},
      {"version_65536", 0x00010000u, "GgufByteSwapped",
       "0x00010000: low half zero, so byte-swapped before too new (ggml's order)"},
  };
  for (const V& v : versions) {
    Built x = b;
    x.patch(Field::Version, -1, v.v);
    c.bad(v.name, x, verdict(v.status, 4), v.why);
  }
  Spec v2 = small();
  v2.version = 2;
  c.good("ok_version_2", v2, "GGUF v2 (64-bit counts, like v3) is read");
}

// Counts: the published GGUF CVEs allocate from them before reading anything.
void counts(Corpus& c) {
  Built b = build(small());
  {
    Built x = b;
    x.patch(Field::TensorCount, -1, kU64Max);
    c.bad("count_tensors_negative", x, verdict("GgufNegativeCount", 8),
          "tensor count -1 (i64): negative");
  }
  {
    Built x = b;
    x.patch(Field::KvCount, -1, kI64Min);
    c.bad("count_kvs_negative", x, verdict("GgufNegativeCount", 16), "KV count INT64_MIN");
  }
  {
    Built x = b;
    x.patch(Field::TensorCount, -1, uint64_t(1) << 62);
    c.bad("count_tensors_huge", x, verdict("TooManyTensors", 8),
          "tensor count 2^62 (CVE shape: allocation from the count): over the tensor-count limit "
          "(2^32-1, table indices are u32), whether or not the input size is known");
  }
  {
    Built x = b;
    x.patch(Field::TensorCount, -1, uint64_t(1) << 32);
    c.bad("count_tensors_2pow32", x, verdict("TooManyTensors", 8),
          "tensor count 2^32: one over the default tensor-count limit");
  }
  {
    Built x = b;
    x.patch(Field::KvCount, -1, uint64_t(1) << 62);
    c.bad("count_kvs_huge", x, verdict("GgufCountTooLarge", 16),
          "KV count 2^62 (CVE shape): rejected at the KV count whether or not the input size is "
          "known");
  }
  {
    Built x = b;
    x.patch(Field::KvCount, -1, uint64_t(1) << 32);
    c.bad("count_kvs_2pow32", x, verdict("GgufCountTooLarge", 16),
          "KV count 2^32: more than the reader indexes (u32), at the KV count");
  }
  {
    // No tensors: after the two real KVs the reader wants the third KV's key length.
    Spec s = ending_with(kv_uint("x", kU8, 1));
    Built x = build(s);
    x.patch(Field::KvCount, -1, 1000);
    c.bad("count_kvs_beyond_input", x, verdict("TruncatedHeader", x.bytes.size()),
          "KV count 1000 in a 2-KV file: without a declared size the input ends where KV 2 "
          "should start; with it, 1000 KVs of at least 14 bytes cannot fit (at the KV count)");
  }
  {
    Spec s = ending_with(kv_uint("x", kU8, 1));
    Built x = build(s);
    x.patch(Field::TensorCount, -1, 1000);
    c.bad("count_tensors_beyond_input", x, verdict("TruncatedHeader", x.bytes.size()),
          "tensor count 1000 in a file with KVs only: the input ends where tensor info 0 should "
          "start; with a declared size, 1000 tensor infos of at least 24 bytes cannot fit (at the "
          "tensor count)");
  }
  {
    // Two smallest possible KVs (1-byte key, u8 value: 14 bytes each).
    Spec s;
    s.kvs = {kv_uint("a", kU8, 1), kv_uint("b", kU8, 2)};
    c.good("ok_two_smallest_kvs", s,
           "two 14-byte KVs: the counts fit the input exactly (the declared-size count check's "
           "boundary)");
    Built x = build(s);
    x.patch(Field::KvCount, -1, 3);
    c.bad("count_kvs_one_too_many", x, verdict("TruncatedHeader", x.bytes.size()),
          "KV count 3 with two 14-byte KVs: 42 bytes needed, 28 left after the counts");
    Built y = build(s);
    y.patch(Field::TensorCount, -1, 1);
    c.bad("count_tensors_and_kvs_together_too_many", y, verdict("TruncatedHeader", y.bytes.size()),
          "1 tensor and 2 KVs after the counts: either alone fits the 28 bytes left, both (24 + 28) "
          "do not — with a declared size the input becomes impossible at the KV count");
  }
  {
    Spec s;
    c.good("ok_empty", s, "no KVs, no tensors: the 24-byte preamble alone is a valid file");
  }
}

void keys(Corpus& c) {
  {
    Spec s = small();
    s.kvs.insert(s.kvs.begin() + 1, kv_uint("", kU32, 7));
    Built b = build(s);
    c.bad("key_empty", b, verdict("GgufEmptyKey", b.kv_offsets[1]),
          "KV 1 has an empty key (length 0): at the KV's first byte");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_str("general.name", "again"));
    Built b = build(s);
    c.bad("key_duplicate", b, verdict("GgufDuplicateKey", b.kv_offsets[3]),
          "general.name twice (KVs 2 and 3): at the second one's first byte");
  }
  {
    Spec s = small();
    s.kvs.insert(s.kvs.begin() + 1, kv_uint("dup", kU8, 1));
    s.kvs.push_back(kv_uint("dup", kI64, 2));
    Built b = build(s);
    c.bad("key_duplicate_other_type", b, verdict("GgufDuplicateKey", b.kv_offsets[4]),
          "key dup at KVs 1 and 4 with different value types: still a duplicate");
  }
  {
    // ggml checks each key against the earlier ones as it reads it.
    Spec s = small();
    s.kvs.push_back(kv_str("general.name", "again"));
    s.kvs.push_back(kv_uint("later", kU8, 1));
    Built b = build(s);
    b.patch(Field::ValueType, 4, 13);
    c.bad("key_duplicate_before_bad_type", b, verdict("GgufDuplicateKey", b.kv_offsets[3]),
          "duplicate general.name at KV 3, then KV 4 has value type 13: the duplicate comes first "
          "in the file (ggml checks keys as it reads them)");
  }
  {
    Spec s = small();
    Built b = build(s);
    b.patch(Field::KeyLen, 1, uint64_t(1) << 62);
    c.bad("key_length_huge", b, verdict("GgufStringTooLong", b.kv_offsets[1]),
          "key length 2^62 (CVE shape: allocation from a string length)");
  }
  {
    Built b = build(small());
    b.patch(Field::KeyLen, 1, kU64Max);
    c.bad("key_length_u64_max", b, verdict("GgufStringTooLong", b.kv_offsets[1]),
          "key length 2^64-1 (length + 1 wraps to 0)");
  }
  {
    Built b = build(ending_with(kv_uint("last.key", kU32, 5)));
    b.patch(Field::KeyLen, 1, (uint64_t(1) << 30) + 1);
    c.bad("key_length_1gib_plus_1", b, verdict("GgufStringTooLong", b.kv_offsets[1]),
          "key length 2^30+1: over ggml's 1 GiB string limit whatever the input size");
  }
  {
    // Cut after the key's own bytes: what followed (the value type) holds NUL bytes, which a
    // key may not (nul_in_truncated_key).
    Built b = build(ending_with(kv_uint("last.key", kU32, 5)));
    b.patch(Field::KeyLen, 1, uint64_t(1) << 30);
    b.bytes.resize(b.field(Field::Key, 1).end);
    c.bad("key_length_1gib", b, verdict("TruncatedHeader", b.bytes.size()),
          "key length exactly 2^30 is allowed; the input then ends inside the key (with a "
          "declared size: longer than the rest of the input)");
  }
  {
    Built b = build(ending_with(kv_uint("last.key", kU32, 5)));
    b.patch(Field::KeyLen, 1, 100000);
    b.bytes.resize(b.field(Field::Key, 1).end);  // as key_length_1gib
    c.bad("key_length_beyond_input", b, verdict("TruncatedHeader", b.bytes.size()),
          "the last key claims 100000 bytes: the input ends inside it");
  }
}

void value_types(Corpus& c) {
  Built b = build(small());
  struct V {
    const char* name;
    uint32_t type;
    const char* why;
  } bad_types[] = {{"value_type_13", 13, "value type 13: one past FLOAT64"},
                   {"value_type_minus_1", 0xFFFFFFFFu, "value type -1 (i32)"},
                   {"value_type_2pow31", 0x80000000u, "value type INT32_MIN"}};
  for (const V& v : bad_types) {
    Built x = b;
    x.patch(Field::ValueType, 1, v.type);
    c.bad(v.name, x, verdict("GgufInvalidValueType", x.field(Field::ValueType, 1).begin), v.why);
  }
  Spec s = small();
  s.kvs.push_back(kv_arr("arr", kU32, {1, 2, 3}));
  Built a = build(s);
  struct A {
    const char* name;
    uint32_t type;
    const char* status;
    const char* why;
  } arr_types[] = {
      {"array_nested", kArray, "GgufNestedArray",
       "array of arrays: ggml rejects nested arrays (at the element type)"},
      {"array_elem_type_13", 13, "GgufInvalidValueType", "array element type 13"},
      {"array_elem_type_minus_1", 0xFFFFFFFFu, "GgufInvalidValueType", "array element type -1"},
  };
  for (const A& v : arr_types) {
    Built x = a;
    x.patch(Field::ArrType, 3, v.type);
    c.bad(v.name, x, verdict(v.status, x.field(Field::ArrType, 3).begin), v.why);
  }
}

void strings_and_arrays(Corpus& c) {
  {
    Built b = build(small());
    b.patch(Field::StrLen, 2, uint64_t(1) << 63);
    c.bad("string_length_huge", b, verdict("GgufStringTooLong", b.field(Field::StrLen, 2).begin),
          "string value length 2^63 (CVE shape)");
  }
  {
    Built b = build(small());
    b.patch(Field::StrLen, 2, (uint64_t(1) << 30) + 1);
    c.bad("string_length_1gib_plus_1", b,
          verdict("GgufStringTooLong", b.field(Field::StrLen, 2).begin),
          "string value of 2^30+1 bytes: over ggml's 1 GiB limit");
  }
  {
    Built b = build(ending_with(kv_str("last", "value")));
    b.patch(Field::StrLen, 1, 1000000);
    c.bad("string_length_beyond_input", b, verdict("TruncatedHeader", b.bytes.size()),
          "the last string claims 10^6 bytes: the input ends inside it");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_arr("arr", kU8, {1, 2, 3}));
    Built b = build(s);
    b.patch(Field::ArrCount, 3, uint64_t(1) << 62);
    c.bad("array_count_huge", b, verdict("GgufArrayTooLong", b.field(Field::ArrCount, 3).begin),
          "array count 2^62 (CVE shape: allocation from an array count)");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_arr("arr", kU64, {1, 2, 3}));
    Built b = build(s);
    b.patch(Field::ArrCount, 3, uint64_t(1) << 61);
    c.bad("array_count_times_size_wraps", b,
          verdict("GgufArrayTooLong", b.field(Field::ArrCount, 3).begin),
          "u64 array of 2^61 elements: count × 8 wraps to 0 in 64 bits (CVE shape)");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_arr("arr", kU8, {1, 2, 3}));
    Built b = build(s);
    b.patch(Field::ArrCount, 3, (uint64_t(1) << 30) + 1);
    c.bad("array_count_2pow30_plus_1", b,
          verdict("GgufArrayTooLong", b.field(Field::ArrCount, 3).begin),
          "2^30+1 elements: over ggml's array limit whatever the input size");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_arr_str("arr", {"ab", "cd"}));
    Built b = build(s);
    b.patch(Field::ArrCount, 3, (uint64_t(1) << 62) + 1);
    c.bad("array_of_strings_count_huge", b,
          verdict("GgufArrayTooLong", b.field(Field::ArrCount, 3).begin),
          "array of 2^62+1 strings (CVE shape)");
  }
  {
    Built b = build(ending_with(kv_arr("last", kU32, {1, 2, 3})));
    b.patch(Field::ArrCount, 1, 1000000);
    c.bad("array_count_beyond_input", b, verdict("TruncatedHeader", b.bytes.size()),
          "the last array (u32) claims 10^6 elements: the input ends inside them");
  }
  {
    Built b = build(ending_with(kv_arr_str("last", {"ab", "cd", "ef"})));
    b.patch(Field::ArrCount, 1, 1000000);
    c.bad("array_of_strings_count_beyond_input", b, verdict("TruncatedHeader", b.bytes.size()),
          "the last array claims 10^6 strings (at least 8 bytes each): the input ends after 3");
  }
  {
    // Each string's length alone fits what is left, their total does not.
    Built b = build(ending_with(kv_arr_str("last", {std::string(40, 'a'), std::string(40, 'b'),
                                                    std::string(40, 'c')})));
    uint64_t cut = b.field(Field::StrBytes, 1, 1).begin + 20;
    Built x = b;
    x.bytes.resize(cut);
    c.bad("array_of_strings_total_beyond_input", x, verdict("TruncatedHeader", cut),
          "3 strings of 40 bytes, the input ends 20 bytes into the second: with a declared size, "
          "string 1 is longer than the rest (its length field)");
  }
  {
    Built b = build(ending_with(kv_arr_str("last", {"ab", "cd", "ef"})));
    b.patch(Field::StrLen, 1, 500000, 1);
    c.bad("array_string_length_beyond_input", b, verdict("TruncatedHeader", b.bytes.size()),
          "string element 1 of the last array claims 500000 bytes (CVE shape: string-array byte "
          "total beyond the file)");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_arr_str("arr", {"ab", "cd"}));
    Built b = build(s);
    b.patch(Field::StrLen, 3, uint64_t(1) << 40, 1);
    c.bad("array_string_length_huge", b,
          verdict("GgufStringTooLong", b.field(Field::StrLen, 3, 1).begin),
          "string element 1 of an array claims 2^40 bytes: over 1 GiB");
  }
}

void alignment(Corpus& c) {
  auto with_alignment = [](const Kv& k) {
    Spec s = small();
    s.kvs.insert(s.kvs.begin() + 1, k);
    return s;
  };
  for (uint64_t a : {0u, 3u, 48u}) {
    Built b = build(with_alignment(kv_uint("general.alignment", kU32, a)));
    c.bad("alignment_" + num(a), b, verdict("GgufInvalidAlignment", b.field(Field::Scalar, 1).begin),
          "general.alignment = " + num(a) + ": not a power of two (or zero), at the value");
  }
  struct T {
    const char* name;
    Kv kv;
  } types[] = {
      {"alignment_type_u64", kv_uint("general.alignment", kU64, 32)},
      {"alignment_type_i32", kv_int("general.alignment", kI32, 32)},
      {"alignment_type_string", kv_str("general.alignment", "32")},
      {"alignment_type_array", kv_arr("general.alignment", kU32, {32})},
  };
  for (const T& t : types) {
    Built b = build(with_alignment(t.kv));
    c.bad(t.name, b, verdict("GgufInvalidAlignmentType", b.field(Field::ValueType, 1).begin),
          std::string("general.alignment of type ") + value_type_name(t.kv.type) +
              ": must be UINT32 (at the value type)");
  }
  {
    Spec s = with_alignment(kv_uint("general.alignment", kU32, 64));
    s.alignment = 64;
    c.good("ok_alignment_64", s,
           "general.alignment = 64: the data section and every tensor start at multiples of 64");
    Spec t = s;
    t.tensors[1].override_offset = true;
    t.tensors[1].offset = 32;  // padded to the default 32
    Built b = build(t);
    c.bad("alignment_64_offset_padded_to_32", b,
          verdict_tensor("GgufInvalidTensorOffset", b.field(Field::Offset, 1).begin, "b"),
          "general.alignment = 64 but tensor b's offset is padded to 32");
  }
  {
    Spec s = with_alignment(kv_uint("general.alignment", kU32, 1));
    s.alignment = 1;
    c.good("ok_alignment_1", s, "general.alignment = 1: no padding anywhere");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_str("general.alignment2", "not it"));
    s.kvs.push_back(kv_uint("general.alignmen", kU64, 3));
    s.kvs.push_back(kv_str("general.architecture.x", "bitnet"));
    c.good("ok_alignment_lookalike_keys", s,
           "keys that start like general.alignment / general.architecture are ordinary KVs: "
           "alignment stays 32, the dialect upstream");
  }
}

void tensor_infos(Corpus& c) {
  {
    Spec s = small();
    s.tensors[1].name = std::string(63, 'n');
    c.good("ok_tensor_name_63", s, "a 63-byte tensor name: the longest ggml accepts");
    s.tensors[1].name = std::string(64, 'n');
    Built b = build(s);
    c.bad("tensor_name_64", b, verdict("GgufTensorNameTooLong", b.ti_offsets[1]),
          "a 64-byte tensor name (ggml: names are < 64 bytes), at its length; no tensor named");
  }
  {
    Built b = build(small());
    b.patch(Field::NameLen, 1, uint64_t(1) << 62);
    c.bad("tensor_name_length_huge", b, verdict("GgufTensorNameTooLong", b.ti_offsets[1]),
          "tensor name length 2^62: too long whatever the input size");
  }
  {
    Spec s = small();
    s.tensors[2].name = "a";
    Built b = build(s);
    c.bad("tensor_name_duplicate", b,
          verdict_tensor("DuplicateTensorName", b.ti_offsets[2], "a"),
          "tensors 0 and 2 are both named a: at the second one's entry");
  }
  {
    Spec s = small();
    s.tensors[1].name = "a";
    s.tensors.push_back(T("d", 0, {4}));
    Built b = build(s);
    b.patch(Field::Type, 3, 1000);
    c.bad("tensor_name_duplicate_before_bad_type", b,
          verdict_tensor("DuplicateTensorName", b.ti_offsets[1], "a"),
          "tensor 1 repeats tensor 0's name, tensor 3 has type 1000: the duplicate comes first in "
          "the file (ggml checks each name as it reads it)");
  }
  {
    Spec s = small();
    s.tensors[1].ne = {3, 1, 1, 1, 1};
    Built b = build(s);
    c.bad("tensor_5_dims", b, verdict_tensor("GgufTooManyDims", b.field(Field::NDims, 1).begin, "b"),
          "n_dims = 5 (ggml's maximum is 4)");
    Built x = build(small());
    x.patch(Field::NDims, 1, 0xFFFFFFFFu);
    c.bad("tensor_dims_u32_max", x,
          verdict_tensor("GgufTooManyDims", x.field(Field::NDims, 1).begin, "b"), "n_dims = 2^32-1");
  }
  {
    Spec s = small();
    s.tensors[2].ne = {32, 1, 1};
    Built b = build(s);
    b.patch(Field::Dim, 2, kU64Max, 1);
    c.bad("tensor_dim_negative", b,
          verdict_tensor("GgufNegativeDim", b.field(Field::Dim, 2, 1).begin, "c"),
          "dimension 1 of tensor c is -1");
    Built x = build(s);
    x.patch(Field::Dim, 2, kI64Min, 2);
    c.bad("tensor_dim_int64_min", x,
          verdict_tensor("GgufNegativeDim", x.field(Field::Dim, 2, 2).begin, "c"),
          "dimension 2 of tensor c is INT64_MIN");
  }
  struct Ty {
    const char* name;
    uint32_t id;
    const char* status;
  } types[] = {
      {"type_43", 43, "GgufInvalidType"},      {"type_minus_1", 0xFFFFFFFFu, "GgufInvalidType"},
      {"type_1000", 1000, "GgufInvalidType"},  {"type_retired_4", 4, "GgufRetiredType"},
      {"type_retired_5", 5, "GgufRetiredType"}, {"type_retired_31", 31, "GgufRetiredType"},
      {"type_retired_32", 32, "GgufRetiredType"}, {"type_retired_33", 33, "GgufRetiredType"},
      {"type_retired_36", 36, "GgufRetiredType"}, {"type_retired_37", 37, "GgufRetiredType"},
      {"type_retired_38", 38, "GgufRetiredType"},
  };
  for (const Ty& t : types) {
    Built b = build(small());
    b.patch(Field::Type, 1, t.id);
    c.bad(t.name, b, verdict_tensor(t.status, b.field(Field::Type, 1).begin, "b"),
          std::string(t.status == std::string("GgufInvalidType") ? "unknown" : "retired") +
              " GGML type id " + std::to_string(int32_t(t.id)) +
              " for tensor b (upstream dialect: general.architecture = llama)");
  }
  {
    Spec s = small();
    s.tensors[2].ne = {48};
    s.tensors[2].type = 2;  // Q4_0: blocks of 32
    Built b = build(s);
    c.bad("block_q4_0_ne0_48", b,
          verdict_tensor("GgufBlockMisaligned", b.field(Field::Type, 2).begin, "c"),
          "Q4_0 with ne0 = 48: not a multiple of its 32-element block (at the type)");
    s.tensors[2].ne = {128, 2};
    s.tensors[2].type = 12;  // Q4_K: blocks of 256
    Built k = build(s);
    c.bad("block_q4_k_ne0_128", k,
          verdict_tensor("GgufBlockMisaligned", k.field(Field::Type, 2).begin, "c"),
          "Q4_K with ne0 = 128 (256 elements in all, but the rows are half a block)");
    s.tensors[2].ne = {};
    s.tensors[2].type = 2;
    Built z = build(s);
    c.bad("block_q4_0_scalar", z,
          verdict_tensor("GgufBlockMisaligned", z.field(Field::Type, 2).begin, "c"),
          "a 0-dimensional Q4_0 tensor: ne0 = 1 is not a multiple of 32");
  }
}

// Overflow of the element count (int64, ggml's limit), the byte size and the padded running sum.
void overflows(Corpus& c) {
  {
    Spec s = small();
    s.tensors[1].ne = {uint64_t(1) << 32, uint64_t(1) << 32};
    Built b = build(s);
    c.bad("shape_elements_overflow", b,
          verdict_tensor("ShapeOverflow", b.field(Field::Dim, 1, 1).begin, "b"),
          "ne = [2^32, 2^32]: 2^64 elements overflow int64 at dimension 1 (CVE shape)");
  }
  {
    Spec s = small();
    s.tensors[1].ne = {uint64_t(1) << 40, uint64_t(1) << 40, 0};
    Built b = build(s);
    c.bad("shape_elements_overflow_before_zero", b,
          verdict_tensor("ShapeOverflow", b.field(Field::Dim, 1, 1).begin, "b"),
          "ne = [2^40, 2^40, 0]: ggml checks the running products and rejects the tensor at "
          "ne0·ne1 ≥ INT64_MAX, although a later 0 makes it empty");
  }
  {
    Spec s = small();
    s.tensors[1].ne = {uint64_t(1) << 62};
    s.tensors[1].type = 28;  // F64
    Built b = build(s);
    c.bad("shape_bytes_overflow", b,
          verdict_tensor("ShapeOverflow", b.field(Field::Type, 1).begin, "b"),
          "F64 with 2^62 elements (fits int64): 2^65 bytes overflow 64 bits once the type is known "
          "(CVE shape: tensor byte size)");
  }
  {
    Spec s = small();
    s.tensors = {T("a", 0, {uint64_t(1) << 61}), T("b", 0, {uint64_t(1) << 61})};
    Built b = build(s);
    c.bad("padded_sum_overflow", b,
          verdict_tensor("ShapeOverflow", b.field(Field::Type, 1).begin, "b"),
          "two F32 tensors of 2^63 bytes: b starts at 2^63 and would end at 2^64 (CVE shape: "
          "padded-size sum overflow), known at b's type");
  }
  {
    Spec s = small();
    s.tensors = {T("a", 24, {uint64_t(1) << 62}), T("b", 24, {uint64_t(1) << 62}),
                 T("c", 24, {(uint64_t(1) << 63) - 16})};
    Built b = build(s);
    c.bad("padded_sum_overflow_in_padding", b,
          verdict_tensor("ShapeOverflow", b.field(Field::Type, 2).begin, "c"),
          "I8 tensors of 2^62, 2^62 and 2^63-16 bytes: c ends at 2^64-16, its padding to 32 "
          "overflows (ggml adds padded sizes)");
  }
}

void offsets(Corpus& c) {
  struct O {
    const char* name;
    int tensor;
    uint64_t offset;
    const char* why;
  } cases[] = {
      {"offset_first_not_zero", 0, 32, "tensor a (the first) at offset 32 instead of 0"},
      {"offset_misaligned", 1, 8, "tensor b right after a's 8 bytes (8) instead of padded 32"},
      {"offset_overlap", 1, 0, "tensor b at 0, overlapping a"},
      {"offset_gap", 1, 64, "tensor b at 64, one alignment unit too far"},
      {"offset_huge", 2, uint64_t(1) << 63, "tensor c at 2^63"},
      {"offset_last_misaligned", 2, 65, "tensor c at 65 instead of 64"},
  };
  for (const O& o : cases) {
    Spec s = small();
    s.tensors[size_t(o.tensor)].override_offset = true;
    s.tensors[size_t(o.tensor)].offset = o.offset;
    Built b = build(s);
    c.bad(o.name, b,
          verdict_tensor("GgufInvalidTensorOffset", b.field(Field::Offset, o.tensor).begin,
                         s.tensors[size_t(o.tensor)].name),
          std::string(o.why) + ": offsets must equal the running padded sum");
  }
  {
    Spec s = small();
    s.tensors[0].override_offset = s.tensors[1].override_offset = true;
    s.tensors[0].offset = 32;
    s.tensors[1].offset = 0;
    Built b = build(s);
    c.bad("offset_out_of_order", b,
          verdict_tensor("GgufInvalidTensorOffset", b.field(Field::Offset, 0).begin, "a"),
          "tensors a and b swapped in the data section (a at 32, b at 0): at a's offset");
  }
}

void data_section(Corpus& c) {
  {
    Spec s = small();
    s.tail_padding = true;
    c.good("ok_tail_padding_present", s, "the last tensor's data padded to 32 bytes");
    Built b = build(s);
    uint64_t end = b.bytes.size();
    b.bytes += "x";
    c.bad("trailing_byte_after_padding", b, verdict("TrailingBytes", end),
          "one byte after the last tensor's padding: at the padded end");
  }
  {
    Spec s = small();
    c.good("ok_tail_padding_absent", s, "the file ends with the last tensor's last byte");
    Built b = build(s);
    uint64_t padded = (b.bytes.size() + 31) / 32 * 32;
    b.bytes += std::string(padded - b.bytes.size() + 40, '\0');
    c.bad("trailing_zeros_beyond_padding", b, verdict("TrailingBytes", padded),
          "40 zero bytes beyond the padded end: padding is up to the alignment, no further");
  }
  {
    Spec s = small();
    Built b = build(s);
    b.bytes += std::string(5, '\0');
    c.good("ok_tail_padding_partial", s, b, "5 of the last tensor's padding bytes are present");
  }
  {
    Spec s = small();
    s.tensors[2].ne = {64};  // 68 bytes: ends at 64 + 68 = 132
    s.tensors.push_back(T("d", 24, {28}));  // I8: 160..188
    s.tensors[3].ne = {32};                  // 160..192: ends aligned
    Built b = build(s);
    uint64_t end = b.bytes.size();
    if (end % 32) die("data_section: expected an aligned end");
    b.bytes += "\x01";
    c.bad("trailing_byte_after_aligned_end", b, verdict("TrailingBytes", end),
          "the last tensor ends on a multiple of 32 (no padding): one more byte is trailing");
  }
  {
    Spec s = ending_with(kv_str("general.name", "vocab only"));
    Built b = build(s);
    if (b.bytes.size() % 32 == 0) die("data_section: the KVs should end unaligned");
    c.good("ok_no_tensors", s, b,
           "no tensors: the file ends right after the KVs, unaligned, like llama.cpp's vocab files");
    Built p = b;
    uint64_t padded = (b.bytes.size() + 31) / 32 * 32;
    p.bytes += std::string(padded - b.bytes.size(), '\0');
    c.good("ok_no_tensors_padded", s, p,
           "no tensors, the KVs padded to 32: the padding may be present (data_offset stays the "
           "end of the KVs)");
    Built t = p;
    t.bytes.push_back('x');
    c.bad("no_tensors_trailing_byte", t, verdict("TrailingBytes", padded),
          "no tensors, a byte after the KVs' padding: at the padded end");
  }
  {
    Spec s = small();
    s.tensors.insert(s.tensors.begin() + 1, T("empty", 0, {0, 3}));
    c.good("ok_zero_size_tensor", s,
           "a tensor of 0 elements between two others: its offset is the next padded sum, and "
           "the next tensor shares it");
  }
  {
    // The data section's end, data start + 2^64 - 8, is past 2^64: it wrapped to 8 bytes before
    // the data start, and with the input size declared the file was TrailingBytes there (inside
    // the header), streamed TruncatedData.
    Spec s;
    s.kvs = {kv_uint("general.alignment", kU32, 1)};
    s.alignment = 1;
    s.tensors = {T("huge", 27, {(uint64_t(1) << 61) - 1})};  // I64: 2^64 - 8 bytes
    Built b = build(s);
    c.bad("data_end_past_2_pow_64", b, verdict_tensor("TruncatedData", b.bytes.size(), "huge"),
          "one I64 tensor of 2^61 - 1 elements (2^64 - 8 bytes), alignment 1: its data would end "
          "past 2^64, so past any input: at the input's end, in it");
  }
  {
    Spec s;
    s.kvs = {kv_str("general.name", "empty")};
    s.tensors = {T("a", 0, {0}), T("b", 1, {4, 0})};
    Built b = build(s);
    if (b.data_start == b.infos_end) die("data_section: the tensor infos should end unaligned");
    c.good("ok_empty_tensors_padded", s, b,
           "only empty tensors: the file ends at the data section, after the padding to it");
    Verdict cut = truncated_at(b, s, b.infos_end);  // in the padding before the data: TruncatedData in a
    b.bytes.resize(b.infos_end);
    c.bad("empty_tensors_without_data_padding", b, cut,
          "only empty tensors, the file ends right after the tensor infos: the data section (and "
          "its padding) is missing. ggml seeks to the data section and rejects the file; at the "
          "input's end, in the first tensor");
  }
}

// Every value type and array element type, read back exactly.
void valid_values(Corpus& c) {
  {
    Spec s;
    s.kvs = {kv_str("general.architecture", "testdata"),
             kv_uint("v.u8", kU8, 255),
             kv_int("v.i8", kI8, -128),
             kv_uint("v.u16", kU16, 65535),
             kv_int("v.i16", kI16, -32768),
             kv_uint("v.u32", kU32, 4294967295u),
             kv_int("v.i32", kI32, -2147483647 - 1),
             kv_f32("v.f32", -1.5e-7f),
             kv_uint("v.bool_true", kBool, 1),
             kv_uint("v.bool_false", kBool, 0),
             kv_str("v.string", "h\xC3\xA9llo \xE2\x9C\x93 \"q\" \\ /"),
             kv_str("v.string_empty", ""),
             kv_uint("v.u64", kU64, 18446744073709551615ull),
             kv_int("v.i64", kI64, -9223372036854775807ll - 1),
             kv_f64("v.f64", 1.0 / 3.0)};
    s.tensors = {T("t", 0, {3})};
    c.good("ok_every_scalar_type", s,
           "every scalar type at its extremes (u64 2^64-1, i64 INT64_MIN), an empty and a UTF-8 "
           "string");
  }
  {
    Spec s;
    s.kvs = {kv_arr("a.u8", kU8, {0, 1, 255}),
             kv_arr("a.i8", kI8, {0x80, 0x7F, 0xFF}),
             kv_arr("a.u16", kU16, {1, 65535}),
             kv_arr("a.i16", kI16, {0x8000, 0x7FFF}),
             kv_arr("a.u32", kU32, {4000000000u}),
             kv_arr("a.i32", kI32, {0xFFFFFFFFu, 7}),
             kv_arr("a.f32", kF32, {f32_bits(0.5f), f32_bits(-1.25f), f32_bits(3.0e38f)}),
             kv_arr("a.bool", kBool, {1, 0, 1}),
             kv_arr_str("a.string", {"a", "", "\xC3\xBC", "tokens"}),
             kv_arr("a.u64", kU64, {18000000000000000000ull}),
             kv_arr("a.i64", kI64, {uint64_t(-5), kI64Min}),
             kv_arr("a.f64", kF64, {f64_bits(0.1), f64_bits(-2.5e300)}),
             kv_arr("a.empty_u32", kU32, {}),
             kv_arr_str("a.empty_string", {})};
    c.good("ok_every_array_type", s,
           "an array of every element type, an empty numeric and an empty string array; no "
           "tensors");
  }
  {
    Spec s;
    s.kvs = {kv_str("general.architecture", "llama")};
    s.tensors = {T("scalar", 0, {}), T("four_dims", 1, {2, 3, 1, 2}), T("q4_0", 2, {64, 2}),
                 T("q4_k", 12, {256}), T("q6_k", 14, {256}), T("iq2_xxs", 16, {256}),
                 T("bf16", 30, {5}), T("tq2_0", 35, {256}), T("mxfp4", 39, {64}),
                 T("nvfp4", 40, {64}), T("q1_0", 41, {128}), T("q2_0", 42, {64}),
                 T("i64", 27, {2})};
    c.good("ok_tensor_types", s,
           "a 0-dimensional F32, a 4-dimensional F16 and tensors of block types (Q4_0, Q4_K, "
           "Q6_K, IQ2_XXS, TQ2_0, MXFP4 = 39 upstream, NVFP4, Q1_0, Q2_0) and BF16, I64");
  }
}

// BitNet's fork numbers 36..39 I2_S, I8_S, TL1, TL2 when general.architecture names bitnet.
void bitnet(Corpus& c) {
  Spec s;
  s.bitnet = true;
  s.kvs = {kv_str("general.architecture", "bitnet"), kv_uint("bitnet.block_count", kU32, 1)};
  s.tensors = {T("i2_s", 36, {128, 2}), T("i8_s", 37, {5}), T("tl1", 38, {7}), T("tl2", 39, {48})};
  c.good("ok_bitnet_types", s,
         "general.architecture = bitnet: 36 I2_S (256 elements: 256/4 + 32 = 96 bytes), 37 I8_S, "
         "38 TL1, 39 TL2 (one byte per element, so ne0 = 48 is fine)");
  {
    Spec t = s;
    t.kvs = {kv_uint("x.before", kU32, 1), kv_str("general.architecture", "bitnet-b1.58")};
    t.tensors = {T("i2_s", 36, {64})};
    c.good("ok_bitnet_arch_not_first", t,
           "the architecture (bitnet-b1.58) after another KV still selects the dialect: I2_S "
           "[64] = 16 + 32 bytes");
  }
  {
    Spec t = s;
    t.bitnet = false;
    t.kvs[0] = kv_str("general.architecture", "llama");
    t.tensors = {T("w", 36, {128, 2})};
    Built b = build(t);
    c.bad("bitnet_i2_s_upstream", b,
          verdict_tensor("GgufRetiredType", b.field(Field::Type, 0).begin, "w"),
          "type 36 (I2_S in BitNet's fork) in a llama file: retired upstream");
  }
  {
    Spec t;
    t.kvs = {kv_str("general.name", "no architecture")};
    t.tensors = {T("w", 38, {16})};
    Built b = build(t);
    c.bad("bitnet_tl1_without_architecture", b,
          verdict_tensor("GgufRetiredType", b.field(Field::Type, 0).begin, "w"),
          "type 38 without general.architecture: upstream numbering, retired");
  }
  {
    Spec t;
    t.kvs = {kv_str("general.architecture", "llama")};
    t.tensors = {T("w", 39, {48})};
    Built b = build(t);
    c.bad("mxfp4_upstream_ne0_48", b,
          verdict_tensor("GgufBlockMisaligned", b.field(Field::Type, 0).begin, "w"),
          "type 39 upstream is MXFP4 (blocks of 32): ne0 = 48 is misaligned — the same tensor "
          "is valid TL2 in a bitnet file (ok_bitnet_types)");
  }
  {
    Spec t = s;
    t.tensors = {T("w", 31, {16})};
    Built b = build(t);
    c.bad("bitnet_retired_31", b,
          verdict_tensor("GgufRetiredType", b.field(Field::Type, 0).begin, "w"),
          "the dialect only renumbers 36..39: 31 stays retired in a bitnet file");
  }
}

// NUL bytes. ggml compares keys and tensor names as C strings (gguf_find_key and the duplicate
// name check use strcmp; ggml_set_name copies up to the first NUL) and llama.cpp reads
// general.architecture as one: a NUL would end them there and not in a byte-exact reader, so such
// files are rejected at the first NUL (GgufNulInKey, GgufNulInTensorName, GgufNulInArchitecture),
// once the key or name is complete, the architecture's value before its KV ends.
// Other string values keep their NULs in ggml too (std::string) and stay valid.
void nul_bytes(Corpus& c) {
  {
    // The differential test's finding: ggml and a byte-exact reader both accept this file, and
    // ggml reads every tensor 16 bytes before where the byte-exact reader does.
    Spec s;
    s.kvs = {kv_str("general.architecture", "llama"),
             kv_uint(std::string("general.alignment\0", 18), kU32, 16), kv_str("general.name", "")};
    // 32, 64 and 34 bytes: the offsets (0, 32, 96) are the same at alignment 16 and 32.
    s.tensors = {T("a", 0, {8}), T("b", 0, {16}), T("c", 8, {32})};
    s.alignment = 32;  // laid out as a byte-exact reader (no general.alignment: 32) reads it
    Built b = build(s);
    while (b.infos_end % 32 == 0 || b.infos_end % 32 > 16) {  // so that the two data starts differ
      s.kvs[2].str += "x";
      b = build(s);
    }
    uint64_t ggml_start = (b.infos_end + 15) / 16 * 16;
    c.bad("nul_key_general_alignment", b, verdict("GgufNulInKey", b.field(Field::Key, 1).begin + 17),
          "key general.alignment + NUL (18 bytes) = 16, tensors laid out with the default 32: ggml "
          "(strcmp) takes it for general.alignment and reads the data from byte " + num(ggml_start) +
              ", a byte-exact reader sees an unknown key and reads it from byte " + num(b.data_start) +
              " — both accepted the file (weightstream did until the NUL rule), with every tensor 16 "
              "bytes apart. At the NUL");
  }
  {
    Spec s = small();
    s.kvs.insert(s.kvs.begin() + 1, kv_uint(std::string("general.alignment\0", 18), kU32, 64));
    s.alignment = 64;  // laid out as ggml reads it
    Built b = build(s);
    c.bad("nul_key_general_alignment_ggml_layout", b,
          verdict("GgufNulInKey", b.field(Field::Key, 1).begin + 17),
          "key general.alignment + NUL = 64, tensors laid out with alignment 64: valid to ggml, whose "
          "lookups see general.alignment; at the NUL");
  }
  {
    Spec s = small();
    s.kvs[2].key = std::string("general.name\0x", 14);
    Built b = build(s);
    c.bad("nul_key_inside", b, verdict("GgufNulInKey", b.field(Field::Key, 2).begin + 12),
          "key general.name + NUL + x: ggml's lookups see general.name; at the NUL");
    s.kvs[2].key = std::string("\0", 1);
    b = build(s);
    c.bad("nul_key_only", b, verdict("GgufNulInKey", b.field(Field::Key, 2).begin),
          "a 1-byte key that is a NUL: not empty to a byte-exact reader, \"\" to ggml's lookups");
  }
  {
    // Duplicate keys are looked for when the KVs end, or before any other error: one among the
    // keys before the NUL comes first in the file.
    Spec s = small();
    s.kvs.push_back(kv_str("general.name", "again"));
    s.kvs.push_back(kv_uint(std::string("x\0", 2), kU8, 1));
    Built b = build(s);
    c.bad("nul_key_after_duplicate", b, verdict("GgufDuplicateKey", b.kv_offsets[3]),
          "general.name twice (KVs 2 and 3), then KV 4's key x + NUL: the duplicate, at KV 3's "
          "first byte, comes first");
  }
  {
    Built b = build(ending_with(kv_uint("last.key", kU32, 5)));
    b.patch(Field::KeyLen, 1, 100000);
    c.bad("nul_in_truncated_key", b,
          verdict("GgufNulInKey", b.field(Field::ValueType, 1).begin + 1),
          "the last key claims 100000 bytes; the input ends inside it, after last.key and the "
          "bytes 04 00 00 00 that were its value type: at that first NUL, before the input's "
          "end (with a declared size: too long at its length)");
  }
  {
    Spec s = small();
    s.tensors[0].name = std::string("a\0x", 3);
    s.tensors[1].name = std::string("a\0y", 3);
    Built b = build(s);
    c.bad("nul_tensor_name_pair", b,
          verdict_tensor("GgufNulInTensorName", b.field(Field::Name, 0).begin + 1, s.tensors[0].name),
          "tensors a + NUL + x and a + NUL + y: one name \"a\" twice to ggml (strcmp: it rejects "
          "the file), two names to a byte-exact reader. At the first name's NUL, naming it");
  }
  {
    Spec s = small();
    s.tensors[2].name = std::string("blk.0\0.attn_q.weight", 20);
    Built b = build(s);
    c.bad("nul_tensor_name", b,
          verdict_tensor("GgufNulInTensorName", b.field(Field::Name, 2).begin + 5, s.tensors[2].name),
          "tensor blk.0 + NUL + .attn_q.weight: ggml names it blk.0 (ggml_set_name copies a C "
          "string); at the NUL, naming it");
  }
  {
    Spec s = small();
    s.tensors[1].name = "a";
    s.tensors[1].name += std::string("\0", 1);
    Built b = build(s);
    c.bad("nul_tensor_name_after_equal_name", b,
          verdict_tensor("GgufNulInTensorName", b.field(Field::Name, 1).begin + 1, s.tensors[1].name),
          "tensor 0 is a, tensor 1 a + NUL: a duplicate to ggml, two names to a byte-exact "
          "reader; at tensor 1's NUL");
  }
  {
    Spec s;
    s.bitnet = true;
    s.kvs = {kv_str("general.architecture", std::string("bitnet\0-b1.58", 13))};
    s.tensors = {T("w", 36, {128})};
    Built b = build(s);
    c.bad("nul_architecture", b, verdict("GgufNulInArchitecture", b.field(Field::StrBytes, 0).begin + 6),
          "general.architecture = bitnet + NUL + -b1.58: llama.cpp reads bitnet; at the NUL (once "
          "the value's pieces are out, before the KV ends)");
  }
  {
    Spec s = small();
    s.kvs.push_back(kv_str("general.description", std::string("a\0b", 3)));
    s.kvs.push_back(kv_arr_str("tokenizer.ggml.tokens", {std::string("\0", 1), "x", std::string("y\0", 2)}));
    s.kvs.push_back(kv_str("llama.note", std::string("bitnet\0", 7)));
    c.good("ok_nul_in_string_values", s,
           "NUL bytes in ordinary string values and string array elements: ggml keeps them "
           "(std::string), so they are valid; only keys, tensor names and general.architecture "
           "are read as C strings");
  }
  {
    // general.architecture = "" left the architecture capture on, and the next string value
    // (general.name = bitnet) became the architecture: the BitNet dialect for a file without it.
    Spec s;
    s.kvs = {kv_str("general.architecture", ""), kv_str("general.name", "bitnet")};
    s.tensors = {T("w", 36, {128})};
    Built b = build(s);
    c.bad("bitnet_empty_architecture_then_name", b,
          verdict_tensor("GgufRetiredType", b.field(Field::Type, 0).begin, "w"),
          "general.architecture is empty and general.name is bitnet: the dialect stays upstream, "
          "so type 36 is retired");
  }
}

// A file with a field of every kind, cut inside each of them.
void truncations(Corpus& c) {
  Spec s;
  s.kvs = {kv_str("general.architecture", "llama"),
           // Long enough that after it the input can hold the counts' minimum sizes, so that
           // a declared size shows the check of the field that is cut, not the counts'.
           kv_str("general.description", std::string(300, 'd')),
           kv_uint("t.u8", kU8, 200),
           kv_int("t.i8", kI8, -100),
           kv_uint("t.u16", kU16, 60000),
           kv_int("t.i16", kI16, -30000),
           kv_uint("t.u32", kU32, 4000000000u),
           kv_int("t.i32", kI32, -2000000000),
           kv_f32("t.f32", 0.25f),
           kv_uint("t.bool", kBool, 1),
           kv_uint("t.u64", kU64, 18000000000000000000ull),
           kv_int("t.i64", kI64, -9000000000000000000ll),
           kv_f64("t.f64", 0.125),
           kv_str("t.string", "hello world"),
           kv_arr("t.arr_u16", kU16, {1, 2, 3}),
           kv_arr_str("t.arr_str", {"alpha", "beta"})};
  s.tensors = {T("t0", 0, {2, 3}), T("t1", 8, {32}), T("t2", 24, {5})};
  s.tail_padding = true;
  const Built b = build(s);
  if (b.data_start == b.infos_end) die("truncations: the base needs padding before the data");
  c.good("ok_truncation_base", s, b, "the file the trunc_* cases cut: every field kind");

  auto at = [&](Field kind, int index, int64_t elem = -1) { return b.field(kind, index, elem); };
  struct Cut {
    const char* name;
    uint64_t p;
    const char* what;
  };
  auto mid = [](const FieldAt& f) { return f.begin + (f.end - f.begin) / 2; };
  const Cut cuts[] = {
      {"trunc_magic", 2, "inside the magic"},
      {"trunc_version", 5, "inside the version"},
      {"trunc_before_counts", 8, "right after the version"},
      {"trunc_tensor_count", 12, "inside the tensor count"},
      {"trunc_kv_count", 20, "inside the KV count"},
      {"trunc_after_counts", 24, "right after the counts"},
      {"trunc_key_length", mid(at(Field::KeyLen, 2)), "inside a key length"},
      {"trunc_key", mid(at(Field::Key, 2)), "inside a key"},
      {"trunc_value_type", mid(at(Field::ValueType, 2)), "inside a value type"},
      {"trunc_before_u8", at(Field::Scalar, 2).begin, "before a u8 value"},
      {"trunc_before_i8", at(Field::Scalar, 3).begin, "before an i8 value"},
      {"trunc_in_u16", mid(at(Field::Scalar, 4)), "inside a u16 value"},
      {"trunc_in_i16", mid(at(Field::Scalar, 5)), "inside an i16 value"},
      {"trunc_in_u32", mid(at(Field::Scalar, 6)), "inside a u32 value"},
      {"trunc_in_i32", mid(at(Field::Scalar, 7)), "inside an i32 value"},
      {"trunc_in_f32", mid(at(Field::Scalar, 8)), "inside an f32 value"},
      {"trunc_before_bool", at(Field::Scalar, 9).begin, "before a bool value"},
      {"trunc_in_u64", mid(at(Field::Scalar, 10)), "inside a u64 value"},
      {"trunc_in_i64", mid(at(Field::Scalar, 11)) + 3, "inside an i64 value"},
      {"trunc_in_f64", mid(at(Field::Scalar, 12)) - 3, "inside an f64 value"},
      {"trunc_string_length", mid(at(Field::StrLen, 13)), "inside a string length"},
      {"trunc_string_bytes", mid(at(Field::StrBytes, 13)), "inside a string"},
      {"trunc_array_type", mid(at(Field::ArrType, 14)), "inside an array's element type"},
      {"trunc_array_count", mid(at(Field::ArrCount, 14)), "inside an array count"},
      {"trunc_array_element", mid(at(Field::ArrElem, 14, 1)), "inside a u16 array element"},
      {"trunc_array_between_elements", at(Field::ArrElem, 14, 2).begin,
       "between two u16 array elements"},
      {"trunc_array_string_length", mid(at(Field::StrLen, 15, 1)),
       "inside a string element's length"},
      {"trunc_array_string_bytes", mid(at(Field::StrBytes, 15, 1)), "inside a string element"},
      {"trunc_tensor_name_length", mid(at(Field::NameLen, 1)), "inside a tensor name length"},
      {"trunc_tensor_name", at(Field::Name, 1).begin + 1, "inside a tensor name"},
      {"trunc_n_dims", mid(at(Field::NDims, 1)), "inside n_dims"},
      {"trunc_dim", mid(at(Field::Dim, 0, 1)), "inside a dimension"},
      {"trunc_tensor_type", mid(at(Field::Type, 1)), "inside a tensor type"},
      {"trunc_tensor_offset", mid(at(Field::Offset, 2)), "inside the last tensor offset"},
      {"trunc_after_infos", b.infos_end, "right after the tensor infos"},
      {"trunc_data_padding", mid(at(Field::DataPadding, -1)), "inside the padding before the data"},
      {"trunc_data_first", mid(at(Field::Data, 0)), "inside the first tensor's data"},
      {"trunc_data_gap", mid(at(Field::Gap, 1)), "inside the padding before the second tensor"},
      {"trunc_data_last", mid(at(Field::Data, 2)), "inside the last tensor's data"},
  };
  for (const Cut& k : cuts) {
    Built x = b;
    x.bytes.resize(k.p);
    Verdict plain = truncated_at(b, s, k.p);
    if (plain.status == "Ok") die(std::string(k.name) + ": the cut leaves a valid file");
    c.bad(k.name, x, plain,
          std::string("the truncation base cut ") + k.what + " (after " + num(k.p) + " bytes)");
  }
  {
    uint64_t end = at(Field::Data, 2).end;
    Built x = b;
    x.bytes.resize(end);
    c.good("ok_truncation_base_unpadded", s, x,
           "the truncation base without the last tensor's padding");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ws-make-gguf-corpus OUTDIR\n");
    return 2;
  }
  Corpus c;
  preamble(c);
  counts(c);
  keys(c);
  value_types(c);
  strings_and_arrays(c);
  alignment(c);
  tensor_infos(c);
  overflows(c);
  offsets(c);
  data_section(c);
  valid_values(c);
  bitnet(c);
  nul_bytes(c);
  truncations(c);
  c.write(argv[1]);
  return 0;
}

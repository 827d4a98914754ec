// GGUF expectation comparison (see gguf_expect.h).
#include "gguf_expect.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "sha256.h"

namespace wstest {

namespace {

using ws::GgufType;

bool is_unsigned(GgufType t) {
  return t == GgufType::U8 || t == GgufType::U16 || t == GgufType::U32 || t == GgufType::U64;
}
bool is_signed(GgufType t) {
  return t == GgufType::I8 || t == GgufType::I16 || t == GgufType::I32 || t == GgufType::I64;
}

int64_t parse_i64(const Json& j) {
  EXPECT_EQ(j.type, Json::kNumber);
  errno = 0;
  char* end = nullptr;
  long long v = strtoll(j.text.c_str(), &end, 10);
  EXPECT_TRUE(errno == 0 && *end == '\0') << "not a 64-bit integer: " << j.text;
  return v;
}

// A number as the double it denotes (17 significant digits read back exactly).
uint64_t parse_f64_bits(const Json& j) {
  EXPECT_EQ(j.type, Json::kNumber);
  double d = strtod(j.text.c_str(), nullptr);
  uint64_t bits;
  memcpy(&bits, &d, 8);
  return bits;
}

// A string value: plain, or {"hex": ...} for bytes that are not UTF-8.
std::string string_value(const Json& j) {
  if (j.type == Json::kObject) {
    const std::string& hex = j.at("hex").str();
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      out += char(strtoul(hex.substr(i, 2).c_str(), nullptr, 16));
    return out;
  }
  return j.str();
}

// Element `e` of a numeric array, as raw little-endian bits.
uint64_t element_bits(const KvRecord& k, uint64_t e) {
  uint32_t w = ws::gguf_type_size(k.elem_type);
  uint64_t v = 0;
  for (uint32_t b = 0; b < w; ++b) v |= uint64_t(uint8_t(k.bytes[size_t(e * w + b)])) << (8 * b);
  return v;
}

// A fixed-size value given as raw bits compared with its JSON form.
void expect_value(GgufType t, uint64_t bits, const Json& want, const std::string& what) {
  SCOPED_TRACE(what);
  uint32_t w = ws::gguf_type_size(t);
  if (is_unsigned(t)) {
    EXPECT_EQ(bits, want.u64());
  } else if (is_signed(t)) {
    int64_t v = w == 8 ? int64_t(bits) : int64_t(bits << (64 - 8 * w)) >> (64 - 8 * w);
    EXPECT_EQ(v, parse_i64(want));
  } else if (t == GgufType::F32) {
    float f;
    uint32_t b = uint32_t(bits);
    memcpy(&f, &b, 4);
    double d = f;
    uint64_t got;
    memcpy(&got, &d, 8);
    EXPECT_EQ(got, parse_f64_bits(want)) << f << " vs " << want.text;
  } else if (t == GgufType::F64) {
    EXPECT_EQ(bits, parse_f64_bits(want)) << want.text;
  } else if (t == GgufType::Bool) {
    ASSERT_EQ(want.type, Json::kBool);
    EXPECT_EQ(bits, want.boolean ? 1u : 0u);
  } else {
    ADD_FAILURE() << "not a fixed-size type: " << int(t);
  }
}

// Array element `e` compared with its JSON form.
void expect_element(const KvRecord& k, uint64_t e, const Json& want) {
  std::string what = "element " + std::to_string(e);
  if (k.elem_type == GgufType::String) {
    ASSERT_LT(e, k.strings.size());
    EXPECT_EQ(printable(k.strings[size_t(e)]), printable(string_value(want))) << what;
  } else {
    ASSERT_LT(e, k.count);
    expect_value(k.elem_type, element_bits(k, e), want, what);
  }
}

void expect_kv(const Json& want, const KvRecord& k) {
  SCOPED_TRACE("kv " + std::to_string(k.index) + " " + printable(k.key));
  EXPECT_EQ(printable(k.key), printable(want.at("key").str()));
  EXPECT_EQ(k.offset, want.at("offset").u64());
  EXPECT_EQ(uint64_t(k.type), want.at("type").u64());
  EXPECT_TRUE(k.ended) << "no KvEnd";
  if (k.type == GgufType::String) {
    EXPECT_EQ(printable(k.bytes), printable(string_value(want.at("value"))));
    return;
  }
  if (k.type != GgufType::Array) {
    ASSERT_TRUE(k.has_scalar) << "no KvScalar";
    expect_value(k.type, k.u, want.at("value"), "value");
    return;
  }
  EXPECT_EQ(uint64_t(k.elem_type), want.at("array_type").u64());
  ASSERT_EQ(k.count, want.at("array_len").u64());
  // Every element was delivered.
  if (k.elem_type == GgufType::String) {
    ASSERT_EQ(k.strings.size(), k.count);
  } else {
    ASSERT_EQ(k.bytes.size(), k.count * ws::gguf_type_size(k.elem_type));
  }
  if (const Json* all = want.find("array_values")) {
    ASSERT_EQ(all->items.size(), k.count);
    for (uint64_t e = 0; e < k.count; ++e) expect_element(k, e, all->items[size_t(e)]);
  }
  if (const Json* head = want.find("array_head")) {
    ASSERT_LE(head->items.size(), k.count);
    for (size_t e = 0; e < head->items.size(); ++e) expect_element(k, e, head->items[e]);
  }
  if (const Json* last = want.find("array_last")) {
    ASSERT_GT(k.count, 0u);
    expect_element(k, k.count - 1, *last);
  }
  if (const Json* total = want.find("array_string_total_bytes")) {
    uint64_t sum = 0;
    for (const std::string& s : k.strings) sum += s.size();
    EXPECT_EQ(sum, total->u64());
  }
}

}  // namespace

uint64_t expected_data_offset(const Json& expect) {
  if (const Json* d = expect.find("data_offset")) return d->u64();
  return expect.at("ggml_gguf_cpp_cross_check").at("data_offset").u64();
}

void expect_gguf_matches(const Json& expect, const RunResult& run, const std::vector<uint8_t>& file) {
  ASSERT_TRUE(run.ended) << "reader did not reach End: " << run.summary();
  ASSERT_TRUE(run.header_ready);
  EXPECT_EQ(run.gguf_version, expect.at("version").u64());
  EXPECT_EQ(run.tensor_count, expect.at("tensor_count").u64());
  EXPECT_EQ(run.gguf_kv_count, expect.at("kv_count").u64());
  EXPECT_EQ(run.gguf_alignment, expect.at("alignment").u64());
  EXPECT_EQ(run.data_start, expected_data_offset(expect));
  if (const Json* d = expect.find("dialect")) {
    EXPECT_EQ(run.gguf_dialect == ws::GgmlDialect::BitNet ? "bitnet" : "upstream", d->str());
  }

  const Json& kvs = expect.at("kv");
  ASSERT_EQ(run.kvs.size(), kvs.items.size());
  for (size_t i = 0; i < kvs.items.size(); ++i) expect_kv(kvs.items[i], run.kvs[i]);

  const Json& tensors = expect.at("tensors");
  ASSERT_EQ(run.tensors.size(), tensors.items.size());
  ASSERT_EQ(run.tensor_bytes.size(), tensors.items.size());
  uint64_t data_end = 0;
  for (size_t i = 0; i < tensors.items.size(); ++i) {
    const Json& t = tensors.items[i];
    const TensorRow& got = run.tensors[i];
    SCOPED_TRACE("tensor " + std::to_string(i) + " " + printable(t.at("name").str()));
    EXPECT_EQ(printable(got.name), printable(t.at("name").str()));
    EXPECT_EQ(got.type_id, t.at("type").u64());
    EXPECT_EQ(got.dtype, t.at("type_name").str());
    std::vector<uint64_t> ne;
    for (const Json& d : t.at("ne").items) ne.push_back(d.u64());
    EXPECT_EQ(got.shape, ne);
    uint64_t elements = 1;
    for (uint64_t d : got.shape) elements *= d;
    EXPECT_EQ(elements, t.at("n_elements").u64());
    EXPECT_EQ(got.end - got.begin, t.at("n_bytes").u64());
    EXPECT_EQ(got.begin, t.at("offset").u64());
    EXPECT_EQ(run.data_start + got.begin, t.at("data_offset_absolute").u64());
    EXPECT_EQ(got.entry_offset, t.at("header_entry_offset").u64());
    const std::string& bytes = run.tensor_bytes[i];
    EXPECT_EQ(sha256_hex(bytes.data(), bytes.size()), t.at("data_sha256").str());
    uint64_t abs_begin = run.data_start + got.begin, abs_end = run.data_start + got.end;
    ASSERT_LE(abs_end, file.size());
    EXPECT_TRUE(bytes.size() == abs_end - abs_begin &&
                memcmp(bytes.data(), file.data() + abs_begin, bytes.size()) == 0)
        << "streamed bytes differ from the file's bytes at [" << abs_begin << ", " << abs_end << ")";
    data_end = got.end;
  }
  EXPECT_EQ(run.data_size, data_end);
}

}  // namespace wstest

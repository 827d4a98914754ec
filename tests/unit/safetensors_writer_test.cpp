// ws::SafetensorsWriter (lib/src/safetensors/safetensors_writer.cpp): the exact bytes of the
// reference crate's own serialization tests (huggingface/safetensors safetensors/src/tensor.rs,
// test_serialization, test_serialization_fp4, test_empty), serde_json's string escapes, the header
// under every output buffer size, the byte accounting's refusals with their positions, no
// allocation, and a round trip through the project's own reader under 1-byte and random chunkings.
#include "weightstream/safetensors_writer.h"

#include <gtest/gtest.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "weightstream/reader.h"

namespace {

using ws::DType;
using ws::Status;

// The row keeps pointers: `name` and `shape` must outlive it (literals or the caller's objects).
ws::WriterTensor row(const char* name, size_t name_size, DType dt, const std::vector<uint64_t>& shape, uint64_t bytes) {
  ws::WriterTensor t;
  t.name = name;
  t.name_size = name_size;
  t.dtype = dt;
  t.shape = shape.data();
  t.rank = uint32_t(shape.size());
  t.byte_size = bytes;
  return t;
}
ws::WriterTensor row(const std::string& name, DType dt, const std::vector<uint64_t>& shape, uint64_t bytes) {
  return row(name.data(), name.size(), dt, shape, bytes);
}
ws::WriterTensor row(const char* name, DType dt, const std::vector<uint64_t>& shape, uint64_t bytes) {
  return row(name, strlen(name), dt, shape, bytes);
}
ws::WriterTensor row(std::string&&, DType, const std::vector<uint64_t>&, uint64_t) = delete;

// The whole header, asked for in pieces of `cap` bytes.
std::string header_of(ws::SafetensorsWriter& w, size_t cap) {
  std::string out;
  std::vector<uint8_t> buf(cap);
  while (!w.header_done()) {
    size_t n = 0;
    EXPECT_EQ(w.header(buf.data(), cap, &n), Status::Ok);
    EXPECT_GT(n, 0u);
    out.append(reinterpret_cast<const char*>(buf.data()), n);
    if (n == 0) break;
  }
  return out;
}

std::string bytes_of(std::initializer_list<int> v) {
  std::string s;
  for (int c : v) s.push_back(char(c));
  return s;
}

// tensor.rs test_serialization: one F32 [1,2,3] tensor "attn.0", no metadata.
TEST(SafetensorsWriter, CrateSerializationVector) {
  const std::string name = "attn.0";
  const std::vector<uint64_t> shape = {1, 2, 3};
  ws::WriterTensor t = row(name, DType::F32, shape, 24);
  const std::string expected = bytes_of({64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 46, 48, 34, 58, 123, 34, 100,
                                         116, 121, 112, 101, 34, 58, 34, 70, 51, 50, 34, 44, 34, 115, 104, 97, 112, 101, 34,
                                         58, 91, 49, 44, 50, 44, 51, 93, 44, 34, 100, 97, 116, 97, 95, 111, 102, 102, 115,
                                         101, 116, 115, 34, 58, 91, 48, 44, 50, 52, 93, 125, 125});
  for (size_t cap = 1; cap <= expected.size() + 1; ++cap) {
    ws::SafetensorsWriter w;
    ASSERT_EQ(w.init(&t, 1, nullptr, 0, false), Status::Ok);
    EXPECT_EQ(w.header_size(), 72u);
    EXPECT_EQ(w.file_size(), 96u);
    ASSERT_EQ(header_of(w, cap), expected) << "cap " << cap;
    EXPECT_EQ(w.position(), 72u);
    EXPECT_EQ(w.data(0, 24), Status::Ok);
    EXPECT_EQ(w.finish(), Status::Ok);
    EXPECT_EQ(w.position(), 96u);
  }
}

// tensor.rs test_serialization_fp4: F4 [1,2] (one byte), the JSON padded with four spaces.
TEST(SafetensorsWriter, CrateFp4VectorPadsWithSpaces) {
  const std::string name = "attn.0";
  const std::vector<uint64_t> shape = {1, 2};
  ws::WriterTensor t = row(name, DType::F4, shape, 1);
  ws::SafetensorsWriter w;
  ASSERT_EQ(w.init(&t, 1, nullptr, 0, false), Status::Ok);
  EXPECT_EQ(header_of(w, 5),
            bytes_of({64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 46, 48, 34, 58, 123, 34, 100,
                      116, 121, 112, 101, 34, 58, 34, 70, 52, 34, 44, 34, 115, 104, 97, 112, 101, 34, 58,
                      91, 49, 44, 50, 93, 44, 34, 100, 97, 116, 97, 95, 111, 102, 102, 115, 101, 116,
                      115, 34, 58, 91, 48, 44, 49, 93, 125, 125, 32, 32, 32, 32}));
}

// tensor.rs test_empty: no tensors, without and with a one-entry __metadata__.
TEST(SafetensorsWriter, CrateEmptyVectors) {
  ws::SafetensorsWriter w;
  ASSERT_EQ(w.init(nullptr, 0, nullptr, 0, false), Status::Ok);
  EXPECT_EQ(header_of(w, 3), bytes_of({8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32}));
  EXPECT_EQ(w.finish(), Status::Ok);

  ws::WriterMetadata m;
  m.key = "framework", m.key_size = 9, m.value = "pt", m.value_size = 2;
  ASSERT_EQ(w.init(nullptr, 0, &m, 1, true), Status::Ok);
  EXPECT_EQ(header_of(w, 7),
            bytes_of({40, 0, 0, 0, 0, 0, 0, 0, 123, 34, 95, 95, 109, 101, 116, 97, 100, 97, 116, 97, 95,
                      95, 34, 58, 123, 34, 102, 114, 97, 109, 101, 119, 111, 114, 107, 34, 58, 34, 112,
                      116, 34, 125, 125, 32, 32, 32, 32, 32}));
  // An empty __metadata__ object is kept as one (the input had it).
  ASSERT_EQ(w.init(nullptr, 0, nullptr, 0, true), Status::Ok);
  EXPECT_EQ(header_of(w, 64).substr(8), "{\"__metadata__\":{}}     ");
}

// serde_json's escapes (src/ser.rs ESCAPE): \" \\ \b \t \n \f \r, \u00xx for the other control
// bytes, lowercase hex; DEL, '/' and non-ASCII UTF-8 as they are. Order: the caller's.
TEST(SafetensorsWriter, StringsEscapedAsSerdeJson) {
  const std::string a = std::string("q\"b\\s/\x08\x09\x0a\x0c\x0d\x01\x1f\x7f") + "\xc3\xa9", b = "a";
  const std::vector<uint64_t> s0 = {}, s1 = {0, 5};
  ws::WriterTensor rows[2] = {row(a, DType::BF16, s0, 2), row(b, DType::U8, s1, 0)};
  ws::WriterMetadata m;
  m.key = "k\n", m.key_size = 2, m.value = "v\x1b", m.value_size = 2;
  ws::SafetensorsWriter w;
  ASSERT_EQ(w.init(rows, 2, &m, 1, true), Status::Ok);
  const std::string json = header_of(w, 1).substr(8);
  const std::string want = std::string("{\"__metadata__\":{\"k\\n\":\"v\\u001b\"},") +
                           "\"q\\\"b\\\\s/\\b\\t\\n\\f\\r\\u0001\\u001f\x7f\xc3\xa9\":{\"dtype\":\"BF16\",\"shape\":[],"
                           "\"data_offsets\":[0,2]},\"a\":{\"dtype\":\"U8\",\"shape\":[0,5],\"data_offsets\":[2,2]}}";
  EXPECT_EQ(json.substr(0, want.size()), want);
  EXPECT_EQ(json.size() % 8, 0u);
  EXPECT_EQ(json.size() - want.size(), (8 - want.size() % 8) % 8);
  EXPECT_EQ(json.find_first_not_of(' ', want.size()), std::string::npos);
}

TEST(SafetensorsWriter, TableErrors) {
  ws::SafetensorsWriter w;
  const std::vector<uint64_t> s = {3, 5};
  ws::WriterTensor t = row("x", DType::F32, s, 59);
  ASSERT_EQ(w.init(&t, 1, nullptr, 0, false), Status::TensorSizeMismatch);
  EXPECT_EQ(w.error().tensor, 0u);
  EXPECT_EQ(w.error().found, 59u);
  EXPECT_EQ(w.error().expected, 60u);

  const std::vector<uint64_t> odd = {3};
  t = row("x", DType::F4, odd, 2);
  EXPECT_EQ(w.init(&t, 1, nullptr, 0, false), Status::MisalignedSlice);

  const std::vector<uint64_t> huge = {1ull << 40, 1ull << 30};
  t = row("x", DType::F32, huge, 0);
  EXPECT_EQ(w.init(&t, 1, nullptr, 0, false), Status::ShapeOverflow);

  const std::string bad = "ab\xc0\x80";
  t = row(bad, DType::U8, s, 15);
  ASSERT_EQ(w.init(&t, 1, nullptr, 0, false), Status::InvalidUtf8);
  EXPECT_EQ(w.error().offset, 2u);
  const std::string surrogate = "\xed\xa0\x80";
  t = row(surrogate, DType::U8, s, 15);
  EXPECT_EQ(w.init(&t, 1, nullptr, 0, false), Status::InvalidUtf8);

  t = row("__metadata__", DType::U8, s, 15);
  EXPECT_EQ(w.init(&t, 1, nullptr, 0, false), Status::UsageError);

  ws::WriterMetadata m;
  m.key = "a", m.key_size = 1, m.value = "b", m.value_size = 1;
  EXPECT_EQ(w.init(nullptr, 0, &m, 1, false), Status::UsageError);

  // Duplicates, found with the caller's scratch (the later row).
  ws::WriterTensor rows[3] = {row("a", DType::U8, s, 15), row("b", DType::U8, s, 15), row("a", DType::U8, s, 15)};
  std::vector<uint32_t> scratch(ws::SafetensorsWriter::scratch_bytes(3) / 4);
  ASSERT_EQ(w.init(rows, 3, nullptr, 0, false, scratch.data(), scratch.size() * 4), Status::DuplicateTensorName);
  EXPECT_EQ(w.error().tensor, 2u);
  ws::WriterMetadata ms[2] = {m, m};
  EXPECT_EQ(w.init(rows, 2, ms, 2, true, scratch.data(), scratch.size() * 4), Status::DuplicateMetadataKey);
  EXPECT_EQ(w.init(rows, 2, ms, 2, true), Status::Ok);  // without scratch: not checked
}

TEST(SafetensorsWriter, DataAccountingRefusesWithPositions) {
  const std::vector<uint64_t> s = {4}, z = {0};
  ws::WriterTensor rows[3] = {row("a", DType::F32, s, 16), row("e", DType::F32, z, 0), row("b", DType::U8, s, 4)};
  ws::SafetensorsWriter w;
  ASSERT_EQ(w.init(rows, 3, nullptr, 0, false), Status::Ok);
  EXPECT_EQ(w.data(0, 1), Status::UsageError);  // header first
  const uint64_t h = header_of(w, 1000).size();
  EXPECT_EQ(h, w.header_size());
  EXPECT_EQ(w.tensor_begin(2), 16u);
  EXPECT_EQ(w.data(0, 10), Status::Ok);
  EXPECT_EQ(w.data(0, 7), Status::WriterPastTensorEnd);
  EXPECT_EQ(w.error().offset, h + 10);
  EXPECT_EQ(w.error().tensor, 0u);
  EXPECT_EQ(w.error().found, 7u);
  EXPECT_EQ(w.error().expected, 6u);
  EXPECT_EQ(w.data(2, 1), Status::WriterTensorOutOfOrder);
  EXPECT_EQ(w.error().found, 2u);
  EXPECT_EQ(w.error().expected, 0u);
  EXPECT_EQ(w.finish(), Status::WriterIncomplete);
  EXPECT_EQ(w.error().offset, h + 10);
  EXPECT_EQ(w.data(0, 6), Status::Ok);
  // The empty tensor is skipped: "b" is due.
  EXPECT_EQ(w.current_tensor(), 2u);
  EXPECT_EQ(w.data(1, 1), Status::WriterTensorOutOfOrder);
  EXPECT_EQ(w.data(2, 4), Status::Ok);
  EXPECT_EQ(w.finish(), Status::Ok);
  EXPECT_EQ(w.position(), w.file_size());
  EXPECT_EQ(w.data(2, 1), Status::WriterTensorOutOfOrder);  // nothing is due
}

// A file of several dtypes, a scalar, an empty tensor and metadata: written with header pieces of
// every size and random data pieces, read back by ws::Reader under 1-byte and random chunkings.
struct Built {
  std::string file;
  std::vector<std::string> names;
  std::vector<std::vector<uint64_t>> shapes;
  std::vector<DType> dtypes;
  std::vector<std::string> data;
};

Built build(size_t header_cap, std::mt19937* rng) {
  Built b;
  b.names = {"model.embed_tokens.weight", "layers.0.mlp.down_proj.weight", "scalar", "empty", "\xe2\x82\xac.bias"};
  b.shapes = {{3, 4}, {2, 3, 5}, {}, {0, 7}, {9}};
  b.dtypes = {DType::BF16, DType::F32, DType::I64, DType::F16, DType::U8};
  std::vector<ws::WriterTensor> rows;
  for (size_t i = 0; i < b.names.size(); ++i) {
    uint64_t el = 1;
    for (uint64_t d : b.shapes[i]) el *= d;
    std::string bytes(el * ws::dtype_bits(b.dtypes[i]) / 8, '\0');
    for (auto& c : bytes) c = char((*rng)());
    b.data.push_back(bytes);
    rows.push_back(row(b.names[i], b.dtypes[i], b.shapes[i], bytes.size()));
  }
  ws::WriterMetadata meta[2];
  meta[0].key = "format", meta[0].key_size = 6, meta[0].value = "pt", meta[0].value_size = 2;
  meta[1].key = "weightstream.converted_from", meta[1].key_size = 27;
  meta[1].value = "q \"4\"", meta[1].value_size = 5;
  ws::SafetensorsWriter w;
  std::vector<uint32_t> scratch(ws::SafetensorsWriter::scratch_bytes(5) / 4);
  EXPECT_EQ(w.init(rows.data(), uint32_t(rows.size()), meta, 2, true, scratch.data(), scratch.size() * 4), Status::Ok);
  b.file = header_of(w, header_cap);
  for (size_t i = 0; i < b.data.size(); ++i) {
    size_t at = 0;
    while (at < b.data[i].size()) {
      size_t n = 1 + (*rng)() % (b.data[i].size() - at);
      EXPECT_EQ(w.data(uint32_t(i), n), Status::Ok);
      b.file += b.data[i].substr(at, n);
      at += n;
    }
  }
  EXPECT_EQ(w.finish(), Status::Ok);
  EXPECT_EQ(b.file.size(), w.file_size());
  return b;
}

void read_back(const Built& b, size_t chunk, std::mt19937* rng) {
  alignas(8) static uint8_t arena[1 << 16];
  ws::Reader r(arena, sizeof arena);
  r.set_input_size(b.file.size());
  size_t pos = 0;
  std::vector<std::string> got(b.names.size());
  uint32_t tensor = 0;
  bool header = false;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (pos == b.file.size()) {
        r.finish();
        continue;
      }
      size_t n = chunk ? chunk : 1 + (*rng)() % 97;
      if (n > b.file.size() - pos) n = b.file.size() - pos;
      r.feed(b.file.data() + pos, n);
      pos += n;
    } else if (e.type == ws::EventType::HeaderReady) {
      header = true;
      ASSERT_EQ(r.tensor_count(), b.names.size());
      for (uint32_t i = 0; i < r.tensor_count(); ++i) {
        ws::TensorInfo t = r.tensor(i);
        EXPECT_TRUE(t.name.equals(b.names[i].data(), b.names[i].size())) << i;
        EXPECT_EQ(t.dtype(), b.dtypes[i]);
        uint64_t dims[8];
        ASSERT_EQ(t.copy_shape(dims, 8), b.shapes[i].size());
        for (size_t d = 0; d < b.shapes[i].size(); ++d) EXPECT_EQ(dims[d], b.shapes[i][d]);
        EXPECT_EQ(t.byte_size(), b.data[i].size());
      }
      ASSERT_EQ(r.tensors().metadata_count(), 2u);
      ws::StrView v;
      ASSERT_TRUE(r.tensors().find_metadata("weightstream.converted_from", &v));
      EXPECT_EQ(std::string(v.data, v.size), "q \"4\"");
    } else if (e.type == ws::EventType::TensorBytes) {
      tensor = e.tensor;
      got[tensor].append(reinterpret_cast<const char*>(e.data), e.size);
    } else if (e.type == ws::EventType::End) {
      break;
    } else if (e.type == ws::EventType::Error) {
      FAIL() << ws::status_name(r.error().code) << " at " << r.error().offset;
    }
  }
  EXPECT_TRUE(header);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], b.data[i]) << i;
}

TEST(SafetensorsWriter, RoundTripThroughReader) {
  std::mt19937 rng(29);
  std::string first;
  for (size_t cap : {1, 2, 3, 7, 8, 64, 333, 4096}) {
    std::mt19937 data_rng(7);
    Built b = build(cap, &data_rng);
    if (first.empty()) first = b.file;
    EXPECT_EQ(b.file, first) << "header pieces of " << cap << " bytes give other bytes";
    read_back(b, 1, &rng);
    read_back(b, 0, &rng);
    read_back(b, b.file.size(), &rng);
  }
}

TEST(SafetensorsWriter, AllocatesNothing) {
#if defined(WS_COUNTING_ALLOCATOR)
  const std::string n1 = "a", n2 = "b";
  const std::vector<uint64_t> s = {4, 4};
  ws::WriterTensor rows[2] = {row(n1, DType::F32, s, 64), row(n2, DType::BF16, s, 32)};
  uint32_t scratch[16];
  uint8_t buf[5];
  wsalloc::g_allocs = 0;
  wsalloc::g_armed = true;
  ws::SafetensorsWriter w;
  Status st = w.init(rows, 2, nullptr, 0, false, scratch, sizeof scratch);
  size_t n;
  while (st == Status::Ok && !w.header_done()) st = w.header(buf, sizeof buf, &n);
  if (st == Status::Ok) st = w.data(0, 64);
  if (st == Status::Ok) st = w.data(1, 32);
  if (st == Status::Ok) st = w.finish();
  wsalloc::g_armed = false;
  EXPECT_EQ(st, Status::Ok);
  EXPECT_EQ(wsalloc::g_allocs.load(), 0);
#else
  GTEST_SKIP() << "sanitizer build: no counting allocator";
#endif
}

}  // namespace

// The reference kernels of the GGML block formats reproduce ggml's own dequantization bit for
// bit: every GGML block entry of shared/testdata/vectors/ggml (produced by ggml's C reference,
// README §4), decoded through ws::Dequantizer whole, in 1-byte pieces and in random pieces with
// a small output buffer, to f32 and to f16; and the same blocks inside a real GGUF file
// (synthetic/gguf/all_quant_types.gguf), streamed through ws::Reader tensor by tensor.
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/reader.h"

namespace {

using kernel_test::Pieces;

const char kVectorDir[] = "testdata/vectors/ggml/";

struct VectorCase {
  const char* label;   // file stem in vectors/ggml
  ws::QuantFormat format;
  bool valid;          // every block passes ggml's row validation
};

void PrintTo(const VectorCase& c, std::ostream* os) { *os << c.label; }

// Every entry of index.json in a GGML block format (F16/BF16 are element-wise, tested with those
// kernels). MXFP4_edge runs through every E8M0 byte including 0xFF, which ggml's validation
// rejects but its dequantizer decodes (to 2^127·F, README §4): decoded here with validation off.
const VectorCase kCases[] = {
    {"Q4_0", ws::QuantFormat::Q4_0, true},       {"Q4_1", ws::QuantFormat::Q4_1, true},
    {"Q5_0", ws::QuantFormat::Q5_0, true},       {"Q5_1", ws::QuantFormat::Q5_1, true},
    {"Q8_0", ws::QuantFormat::Q8_0, true},       {"Q2_K", ws::QuantFormat::Q2_K, true},
    {"Q3_K", ws::QuantFormat::Q3_K, true},       {"Q4_K", ws::QuantFormat::Q4_K, true},
    {"Q5_K", ws::QuantFormat::Q5_K, true},       {"Q6_K", ws::QuantFormat::Q6_K, true},
    {"Q8_K", ws::QuantFormat::Q8_K, true},       {"IQ2_XXS", ws::QuantFormat::IQ2_XXS, true},
    {"IQ2_XS", ws::QuantFormat::IQ2_XS, true},   {"IQ3_XXS", ws::QuantFormat::IQ3_XXS, true},
    {"IQ1_S", ws::QuantFormat::IQ1_S, true},     {"IQ4_NL", ws::QuantFormat::IQ4_NL, true},
    {"IQ3_S", ws::QuantFormat::IQ3_S, true},     {"IQ2_S", ws::QuantFormat::IQ2_S, true},
    {"IQ4_XS", ws::QuantFormat::IQ4_XS, true},   {"IQ1_M", ws::QuantFormat::IQ1_M, true},
    {"TQ1_0", ws::QuantFormat::TQ1_0, true},     {"TQ2_0", ws::QuantFormat::TQ2_0, true},
    {"MXFP4", ws::QuantFormat::MXFP4, true},     {"NVFP4", ws::QuantFormat::NVFP4, true},
    {"Q1_0", ws::QuantFormat::Q1_0, true},       {"Q2_0", ws::QuantFormat::Q2_0, true},
    {"MXFP4_edge", ws::QuantFormat::MXFP4, false}, {"NVFP4_edge", ws::QuantFormat::NVFP4, true},
};

bool is_element_wise(const std::string& type) { return type == "F16" || type == "BF16"; }

TEST(RefGgmlVectors, CasesAreExactlyTheIndexsBlockEntries) {
  std::vector<uint8_t> index = kernel_test::load_shared(std::string(kVectorDir) + "index.json");
  const std::string json(index.begin(), index.end());
  std::vector<std::string> labels = kernel_test::json_string_values(json, "label");
  std::vector<std::string> types = kernel_test::json_string_values(json, "type");
  ASSERT_EQ(labels.size(), types.size());
  ASSERT_FALSE(labels.empty());
  std::set<std::string> listed, tested;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!is_element_wise(types[i])) listed.insert(labels[i]);
  }
  for (const VectorCase& c : kCases) tested.insert(c.label);
  EXPECT_EQ(listed, tested);
}

class RefGgmlVectors : public ::testing::TestWithParam<VectorCase> {
 protected:
  void SetUp() override {
    const VectorCase& c = GetParam();
    blocks_ = kernel_test::load_shared(std::string(kVectorDir) + c.label + ".blocks.bin");
    expected_ = kernel_test::as_floats(kernel_test::load_shared(std::string(kVectorDir) + c.label + ".f32.bin"));
    const ws::QuantFormatInfo info = ws::quant_format_info(c.format);
    ASSERT_GT(info.block_bytes, 0u);
    ASSERT_EQ(blocks_.size() % info.block_bytes, 0u);
    ASSERT_EQ(blocks_.size() / info.block_bytes * info.block_elems, expected_.size());
    spec_.format = c.format;
    spec_.impl = ws::KernelImpl::Reference;
    spec_.elements = expected_.size();
    spec_.validate = c.valid;
    spec_.input_offset = 4096;  // as if the tensor sat inside a file
  }

  void expect_f32(const Pieces& pieces) {
    std::vector<uint8_t> out = kernel_test::decode_in_pieces(spec_, blocks_.data(), blocks_.size(), pieces);
    ASSERT_EQ(out.size(), expected_.size() * 4);
    EXPECT_TRUE(kernel_test::floats_identical(reinterpret_cast<const float*>(out.data()), expected_.data(),
                                              expected_.size()));
  }

  std::vector<uint8_t> blocks_;
  std::vector<float> expected_;
  ws::DequantSpec spec_;
};

TEST_P(RefGgmlVectors, WholeInput) { expect_f32(Pieces()); }

TEST_P(RefGgmlVectors, OneBytePieces) {
  Pieces p;
  p.kind = Pieces::Fixed;
  p.size = 1;
  expect_f32(p);
}

TEST_P(RefGgmlVectors, RandomPiecesSmallOutput) {
  // Pieces of 1 byte to three blocks, and an output buffer of one to a few blocks, so blocks split
  // across pieces and decode() stops for output space mid-piece.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Pieces p;
    p.kind = Pieces::Random;
    p.max_size = 3 * ws::quant_format_info(spec_.format).block_bytes;
    p.seed = seed;
    p.out_blocks = size_t(seed);
    SCOPED_TRACE(seed);
    expect_f32(p);
  }
}

TEST_P(RefGgmlVectors, F16OutputIsTheRoundedF32) {
  spec_.out = ws::OutType::F16;
  std::vector<uint16_t> want(expected_.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = ws::f32_to_f16(expected_[i]);
  for (int whole = 1; whole >= 0; --whole) {
    Pieces p;
    if (!whole) {
      p.kind = Pieces::Random;
      p.max_size = 2 * ws::quant_format_info(spec_.format).block_bytes;
      p.seed = 7;
    }
    SCOPED_TRACE(whole ? "whole" : "random pieces");
    std::vector<uint8_t> out = kernel_test::decode_in_pieces(spec_, blocks_.data(), blocks_.size(), p);
    ASSERT_EQ(out.size(), want.size() * 2);
    std::vector<uint16_t> got(want.size());
    memcpy(got.data(), out.data(), out.size());
    EXPECT_TRUE(kernel_test::halves_identical(got.data(), want.data(), want.size()));
  }
}

TEST_P(RefGgmlVectors, OneShotDequantize) {
  std::vector<float> out(expected_.size());
  ws::Error err;
  ASSERT_EQ(ws::dequantize(spec_, blocks_.data(), blocks_.size(), out.data(), out.size() * 4, &err), ws::Status::Ok);
  EXPECT_TRUE(kernel_test::floats_identical(out.data(), expected_.data(), expected_.size()));
}

INSTANTIATE_TEST_SUITE_P(Vectors, RefGgmlVectors, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<VectorCase>& i) { return std::string(i.param.label); });

// ---------------------------------------------------------------------------------------------
// GGUF end to end: all_quant_types.gguf holds the blocks of vectors/ggml/<TYPE>.blocks.bin as its
// tensors; each is decoded as the reader streams it, by the format quant_format_from_ggml names.

struct MappedTensor {
  std::string name, expected_file;
  std::vector<float> expected;
  std::vector<uint8_t> out;
  bool seen = false;
};

void stream_gguf(const std::vector<uint8_t>& file, size_t chunk, std::vector<MappedTensor>* mapped) {
  alignas(8) static uint8_t arena[1 << 20];
  ws::Reader r(arena, sizeof arena);
  r.set_input_size(file.size());
  size_t fed = 0;
  MappedTensor* cur = nullptr;
  ws::Dequantizer dq;
  size_t written = 0;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (fed == file.size()) {
        r.finish();
      } else {
        size_t n = std::min(chunk, file.size() - fed);
        r.feed(file.data() + fed, n);
        fed += n;
      }
    } else if (e.type == ws::EventType::TensorBegin) {
      const ws::TensorInfo info = r.tensor(e.tensor);
      const std::string name(info.name.data, info.name.size);
      cur = nullptr;
      for (MappedTensor& m : *mapped) {
        if (m.name == name) cur = &m;
      }
      if (!cur) continue;  // F32/F64/I8.. tensors: not block formats, not in the mapping
      ws::DequantSpec spec;
      ASSERT_TRUE(ws::quant_format_from_ggml(info.type, r.gguf_dialect(), &spec.format)) << name;
      spec.impl = ws::KernelImpl::Reference;
      spec.elements = info.element_count();
      spec.input_offset = e.offset;
      ASSERT_EQ(dq.init(spec), ws::Status::Ok) << name;
      ASSERT_EQ(dq.input_bytes(), info.byte_size()) << name;
      cur->out.assign(size_t(spec.elements) * 4, 0xA5);
      written = 0;
    } else if (e.type == ws::EventType::TensorBytes) {
      if (!cur) continue;
      size_t used = 0;
      while (used < e.size) {
        size_t in_used = 0, out_written = 0;
        ASSERT_EQ(dq.decode(e.data + used, e.size - used, &in_used, cur->out.data() + written,
                            cur->out.size() - written, &out_written),
                  ws::Status::Ok)
            << cur->name << " at " << dq.error().offset;
        ASSERT_TRUE(in_used || out_written);
        used += in_used;
        written += out_written;
      }
    } else if (e.type == ws::EventType::TensorEnd) {
      if (!cur) continue;
      EXPECT_TRUE(dq.done()) << cur->name;
      EXPECT_EQ(written, cur->out.size()) << cur->name;
      cur->seen = true;
      cur = nullptr;
    } else if (e.type == ws::EventType::End) {
      return;
    } else if (e.type == ws::EventType::Error) {
      FAIL() << "reader: " << ws::status_name(r.error().code) << " at " << r.error().offset;
    }
  }
}

TEST(RefGgmlGguf, AllQuantTypesFileDecodesToTheVectors) {
  const std::string dir = "testdata/synthetic/gguf/";
  std::vector<uint8_t> file = kernel_test::load_shared(dir + "all_quant_types.gguf");
  std::vector<uint8_t> map_bytes = kernel_test::load_shared(dir + "all_quant_types.tensor_vectors.json");
  ASSERT_FALSE(file.empty());
  const std::string map_json(map_bytes.begin(), map_bytes.end());
  std::vector<std::string> names = kernel_test::json_string_values(map_json, "tensor");
  std::vector<std::string> files = kernel_test::json_string_values(map_json, "expected_file");
  ASSERT_EQ(names.size(), files.size());
  ASSERT_EQ(names.size(), 28u);  // one tensor per GGML type of vectors/ggml

  std::vector<MappedTensor> mapped(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    mapped[i].name = names[i];
    mapped[i].expected_file = files[i];
    mapped[i].expected = kernel_test::as_floats(kernel_test::load_shared(dir + files[i]));  // relative to the map
  }
  for (size_t chunk : {size_t(1) << 20, size_t(4093), size_t(61)}) {
    SCOPED_TRACE(chunk);
    for (MappedTensor& m : mapped) m.seen = false;
    stream_gguf(file, chunk, &mapped);
    if (HasFatalFailure()) return;
    for (const MappedTensor& m : mapped) {
      SCOPED_TRACE(m.name);
      ASSERT_TRUE(m.seen);
      ASSERT_EQ(m.out.size(), m.expected.size() * 4);
      EXPECT_TRUE(kernel_test::floats_identical(reinterpret_cast<const float*>(m.out.data()), m.expected.data(),
                                                m.expected.size()));
    }
  }
}

}  // namespace

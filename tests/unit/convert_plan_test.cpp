// convert's rules (lib/src/convert/convert_plan.cpp): per-weight decisions, Hugging Face's shard
// rule and names, the output metadata, the index document byte for byte as Python's
// json.dumps(indent=2, sort_keys=True) writes it (expected strings produced by CPython 3), and the
// config.json edit keeping every other byte.
#include "weightstream/convert_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using ws::ConvertAction;
using ws::DType;

ws::LogicalWeight weight(bool decodable, ws::Convention c, uint64_t elements) {
  ws::LogicalWeight w;
  w.decodable = decodable;
  w.convention = c;
  w.elements = elements;
  return w;
}

TEST(ConvertPlan, Decisions) {
  ws::ConvertOptions o;
  o.to = ws::OutType::BF16;
  // A plain F32 weight: decoded to bf16.
  ws::ConvertDecision d = ws::convert_decide(weight(true, ws::Convention::Plain, 10), uint32_t(DType::F32), false,
                                             ws::GgmlDialect::Upstream, 40, o);
  EXPECT_EQ(d.action, ConvertAction::Decode);
  EXPECT_EQ(d.dtype, DType::BF16);
  EXPECT_EQ(d.bytes, 20u);
  // --keep f32: copied as stored.
  o.keep_dtypes = 1u << uint32_t(DType::F32);
  d = ws::convert_decide(weight(true, ws::Convention::Plain, 10), uint32_t(DType::F32), false, ws::GgmlDialect::Upstream,
                         40, o);
  EXPECT_EQ(d.action, ConvertAction::CopyStored);
  EXPECT_EQ(d.dtype, DType::F32);
  EXPECT_EQ(d.bytes, 40u);
  // An integer tensor has no float decoding: copied.
  d = ws::convert_decide(weight(false, ws::Convention::Plain, 10), uint32_t(DType::I64), false, ws::GgmlDialect::Upstream,
                         80, o);
  EXPECT_EQ(d.action, ConvertAction::CopyStored);
  EXPECT_EQ(d.dtype, DType::I64);
  // A quantized (MLX) weight whose packed dtype is U32 is decoded, --keep u32 or not.
  o.keep_dtypes = 1u << uint32_t(DType::U32);
  o.to = ws::OutType::F16;
  d = ws::convert_decide(weight(true, ws::Convention::Mlx, 64), uint32_t(DType::U32), false, ws::GgmlDialect::Upstream,
                         32, o);
  EXPECT_EQ(d.action, ConvertAction::Decode);
  EXPECT_EQ(d.dtype, DType::F16);
  EXPECT_EQ(d.bytes, 128u);
  // GGUF: Q4_K (12) decoded; I32 (26) copied as I32; TL1 of BitNet (38) has no dtype: skipped.
  d = ws::convert_decide(weight(true, ws::Convention::Plain, 256), 12, true, ws::GgmlDialect::Upstream, 144, o);
  EXPECT_EQ(d.action, ConvertAction::Decode);
  d = ws::convert_decide(weight(false, ws::Convention::Plain, 4), 26, true, ws::GgmlDialect::Upstream, 16, o);
  EXPECT_EQ(d.action, ConvertAction::CopyStored);
  EXPECT_EQ(d.dtype, DType::I32);
  d = ws::convert_decide(weight(false, ws::Convention::Plain, 4), 38, true, ws::GgmlDialect::BitNet, 16, o);
  EXPECT_EQ(d.action, ConvertAction::Skip);
  EXPECT_STREQ(ws::convert_action_name(ConvertAction::CopyStored), "copy");
}

TEST(ConvertPlan, ShardsAsHuggingFaceSplits) {
  auto run = [](uint64_t max, std::vector<uint64_t> sizes) {
    ws::ShardAssigner a(max);
    std::vector<uint32_t> got;
    for (uint64_t s : sizes) got.push_back(a.add(s));
    got.push_back(a.count());
    return got;
  };
  EXPECT_EQ(run(10, {5, 5, 5}), (std::vector<uint32_t>{0, 0, 1, 2}));
  EXPECT_EQ(run(10, {3, 20, 3}), (std::vector<uint32_t>{0, 1, 2, 3}));  // the large one alone
  EXPECT_EQ(run(10, {20, 0, 3}), (std::vector<uint32_t>{0, 1, 1, 2}));
  EXPECT_EQ(run(10, {0, 0, 10, 1}), (std::vector<uint32_t>{0, 0, 0, 1, 2}));
  EXPECT_EQ(run(0, {5, 50, 5}), (std::vector<uint32_t>{0, 0, 0, 1}));
  EXPECT_EQ(run(10, {}), (std::vector<uint32_t>{1}));
  char b[64];
  EXPECT_EQ(ws::convert_shard_name(0, 1, b, sizeof b), 17u);
  EXPECT_STREQ(b, "model.safetensors");
  ws::convert_shard_name(1, 3, b, sizeof b);
  EXPECT_STREQ(b, "model-00002-of-00003.safetensors");
}

// Values as transformers' convert_file_size_to_int gives them (Python, run by hand: int(float(n) *
// unit), // 8 for a lowercase final b), and the CLI's own spellings.
TEST(ConvertPlan, ByteSizesAsHuggingFaceSpellsThem) {
  const std::pair<const char*, uint64_t> good[] = {
      {"5GB", 5000000000u},  {"5GiB", 5368709120u}, {"1.5GB", 1500000000u}, {"0.5MiB", 524288u},
      {"100KB", 100000u},    {"100kb", 12500u},     {"8Gb", 1000000000u},   {"10gB", 10000000000u},
      {"1.25MB", 1250000u},  {"2.5KiB", 2560u},     {"0.001KB", 1u},        {"0.3GB", 300000000u},
      {"2.675MiB", 2804940u}, {"64k", 65536u},      {"1M", 1048576u},       {"3G", 3221225472u},
      {"65536", 65536u},     {"18446744073709551615", ~uint64_t(0)}};
  for (const auto& g : good) {
    uint64_t v = 0;
    EXPECT_TRUE(ws::parse_byte_size(g.first, strlen(g.first), &v)) << g.first;
    EXPECT_EQ(v, g.second) << g.first;
  }
  for (const char* bad : {"", "0", "0GB", "GB", "1.GB", ".5GB", "1.5", "5 GB", "5TB", "5GiBs", "-1GB", "1e9", "7b",
                          "0.0001KB", "18446744073709551616", "17179869184G", "5Gi", "5iB"}) {
    uint64_t v = 7;
    EXPECT_FALSE(ws::parse_byte_size(bad, strlen(bad), &v)) << bad;
    EXPECT_EQ(v, 7u) << bad;
  }
}

TEST(ConvertPlan, MetadataKeptAndMarked) {
  ws::WriterMetadata m[8];
  uint32_t n = ws::convert_metadata(nullptr, "gguf", ws::OutType::BF16, m, 8);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(std::string(m[0].key, m[0].key_size), "format");
  EXPECT_EQ(std::string(m[0].value, m[0].value_size), "pt");
  EXPECT_EQ(std::string(m[1].key, m[1].key_size), "weightstream.converted_from");
  EXPECT_EQ(std::string(m[1].value, m[1].value_size), "gguf");
  EXPECT_EQ(std::string(m[2].value, m[2].value_size), "bf16");
}

std::string index_of(const std::vector<ws::ConvertIndexEntry>& e, uint32_t shards, uint64_t total) {
  std::string out;
  std::vector<uint32_t> order(e.size());
  auto sink = [](void* ctx, const uint8_t* p, size_t n) {
    static_cast<std::string*>(ctx)->append(reinterpret_cast<const char*>(p), n);
    return true;
  };
  EXPECT_EQ(ws::write_convert_index(e.data(), uint32_t(e.size()), shards, total, order.data(), sink, &out), ws::Status::Ok);
  return out;
}

TEST(ConvertPlan, IndexAsTransformersWritesIt) {
  const std::string emoji = "\xc3\xa9\xf0\x9f\x98\x80";
  std::vector<ws::ConvertIndexEntry> e = {
      {"b.weight", 8, 1}, {"a\"q", 3, 0}, {emoji.data(), emoji.size(), 1}, {"a", 1, 0}};
  EXPECT_EQ(index_of(e, 2, 1234),
            "{\n  \"metadata\": {\n    \"total_size\": 1234\n  },\n  \"weight_map\": {\n    \"a\": "
            "\"model-00001-of-00002.safetensors\",\n    \"a\\\"q\": \"model-00001-of-00002.safetensors\",\n    "
            "\"b.weight\": \"model-00002-of-00002.safetensors\",\n    \"\\u00e9\\ud83d\\ude00\": "
            "\"model-00002-of-00002.safetensors\"\n  }\n}\n");
  EXPECT_EQ(index_of({}, 1, 0), "{\n  \"metadata\": {\n    \"total_size\": 0\n  },\n  \"weight_map\": {}\n}\n");
}

std::string edit(const std::string& in, ws::Status* st = nullptr, uint32_t* removed = nullptr) {
  std::string out;
  auto sink = [](void* ctx, const uint8_t* p, size_t n) {
    static_cast<std::string*>(ctx)->append(reinterpret_cast<const char*>(p), n);
    return true;
  };
  ws::Status s = ws::config_without_quantization(reinterpret_cast<const uint8_t*>(in.data()), in.size(), sink, &out,
                                                 removed);
  if (st) *st = s;
  return s == ws::Status::Ok ? out : "<" + std::string(ws::status_name(s)) + ">";
}

TEST(ConvertPlan, ConfigWithoutQuantization) {
  uint32_t removed = 0;
  // transformers' layout: indent 2, the section in the middle.
  EXPECT_EQ(edit("{\n  \"a\": 1,\n  \"quantization_config\": {\n    \"quant_method\": \"fp8\",\n    \"weight_block_size\": [128, 128]\n  },\n  \"z\": \"}\"\n}\n",
                 nullptr, &removed),
            "{\n  \"a\": 1,\n  \"z\": \"}\"\n}\n");
  EXPECT_EQ(removed, 1u);
  // mlx-lm writes both; first, last, and a string with braces and escaped quotes left alone.
  EXPECT_EQ(edit("{\"quantization\": {\"group_size\": 64, \"bits\": 4}, \"x\": \"a\\\"{\", \"quantization_config\": {\"bits\": 4}}",
                 nullptr, &removed),
            "{\"x\": \"a\\\"{\"}");
  EXPECT_EQ(removed, 2u);
  EXPECT_EQ(edit("{\"quantization\": 4}"), "{}");
  EXPECT_EQ(edit("{ \"quantization\": 4 ,\n \"b\": [1, {\"quantization\": 2}] }"), "{ \"b\": [1, {\"quantization\": 2}] }");
  EXPECT_EQ(edit("{\"a\": true, \"quantization\": null\n}"), "{\"a\": true\n}");
  EXPECT_EQ(edit("{}"), "{}");
  EXPECT_EQ(edit("{\"a\": 1}  \n"), "{\"a\": 1}  \n");
  EXPECT_EQ(edit("[1]"), "<ConfigNotObject>");
  EXPECT_EQ(edit("{\"a\": 1"), "<ConfigNotObject>");
}

}  // namespace

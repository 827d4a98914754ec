// Ollama's quant_type names and shape rule (weightstream/ollama_quant.h), and how build_ollama()
// resolves a tensor's type and group (ollama x/mlxrunner/model root.go readBlobTensorQuantInfo,
// x/quant/quant.go Canonical / Params): per-tensor metadata, else the blob's, else the shapes
// (with the stated type as the hint), else the type's default; which tensors are companions.
#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "convention_fixtures.h"
#include "weightstream/conventions.h"
#include "weightstream/ollama_quant.h"

namespace {

using convtest::Parsed;
using convtest::Split;
using ws::OllamaQuantType;
using ws::QuantMode;
using ws::Status;

OllamaQuantType type_of(const std::string& s) { return ws::ollama_quant_type(s.data(), s.size()); }

TEST(OllamaQuantType, NamesAndAliases) {
  EXPECT_EQ(type_of("int4"), OllamaQuantType::Int4);
  EXPECT_EQ(type_of("FP4"), OllamaQuantType::Int4);
  EXPECT_EQ(type_of("Q4"), OllamaQuantType::Int4);
  EXPECT_EQ(type_of("int8"), OllamaQuantType::Int8);
  EXPECT_EQ(type_of("fp8"), OllamaQuantType::Int8);
  EXPECT_EQ(type_of("q8"), OllamaQuantType::Int8);
  EXPECT_EQ(type_of("nvfp4"), OllamaQuantType::Nvfp4);
  EXPECT_EQ(type_of("mxfp4"), OllamaQuantType::Mxfp4);
  EXPECT_EQ(type_of("mxfp8"), OllamaQuantType::Mxfp8);
}

// strings.ToUpper(strings.TrimSpace(s)): any case, Unicode White_Space at either end.
TEST(OllamaQuantType, TrimmedAndCaseInsensitiveAsGo) {
  EXPECT_EQ(type_of("INT4"), OllamaQuantType::Int4);
  EXPECT_EQ(type_of("Nvfp4"), OllamaQuantType::Nvfp4);
  EXPECT_EQ(type_of("mXfP8"), OllamaQuantType::Mxfp8);
  EXPECT_EQ(type_of(" q8"), OllamaQuantType::Int8);
  EXPECT_EQ(type_of("\t\n\v\f\r int8 \r\n"), OllamaQuantType::Int8);
  EXPECT_EQ(type_of("\xC2\x85mxfp4\xC2\xA0"), OllamaQuantType::Mxfp4);           // NEL, NBSP
  EXPECT_EQ(type_of("\xE3\x80\x80nvfp4\xE2\x80\xAF"), OllamaQuantType::Nvfp4);  // U+3000, U+202F
  EXPECT_EQ(type_of("\xE2\x80\x80\xE2\x80\x8A\xE1\x9A\x80" "fp4\xE2\x81\x9F\xE2\x80\xA8\xE2\x80\xA9"),
            OllamaQuantType::Int4);  // U+2000, U+200A, U+1680 / U+205F, U+2028, U+2029
  // Go upper-cases U+0131 (dotless i) to 'I': "ınt4" is INT4 to Ollama.
  EXPECT_EQ(type_of("\xC4\xB1nt4"), OllamaQuantType::Int4);
  // Not White_Space (U+200B zero width space, U+FEFF), inner spaces, other letters: unknown.
  EXPECT_EQ(type_of("\xE2\x80\x8Bint4"), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of("\xEF\xBB\xBFint4"), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of("int 4"), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of("int5"), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of("int4x"), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of("\xC3\xAFnt4"), OllamaQuantType::Unknown);  // ï
  EXPECT_EQ(type_of(""), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of(" \t "), OllamaQuantType::Unknown);
  EXPECT_EQ(type_of("int4int4int4"), OllamaQuantType::Unknown);
}

TEST(OllamaQuantType, ParamsAreQuantGos) {
  struct Row {
    OllamaQuantType t;
    QuantMode mode;
    uint32_t bits, group;
  };
  const Row rows[] = {{OllamaQuantType::Int4, QuantMode::Affine, 4, 64}, {OllamaQuantType::Int8, QuantMode::Affine, 8, 64},
                      {OllamaQuantType::Nvfp4, QuantMode::Nvfp4, 4, 16}, {OllamaQuantType::Mxfp4, QuantMode::Mxfp4, 4, 32},
                      {OllamaQuantType::Mxfp8, QuantMode::Mxfp8, 8, 32}, {OllamaQuantType::Unknown, QuantMode::None, 0, 0}};
  for (const Row& r : rows) {
    const ws::QuantParams p = ws::ollama_quant_params(r.t);
    EXPECT_EQ(p.mode, r.mode) << ws::ollama_quant_type_name(r.t);
    EXPECT_EQ(p.bits, r.bits) << ws::ollama_quant_type_name(r.t);
    EXPECT_EQ(p.group, r.group) << ws::ollama_quant_type_name(r.t);
  }
}

ws::OllamaInferred infer(uint64_t w, uint64_t s, const std::string& hint = "") {
  return ws::ollama_infer_from_shapes(w, s, hint.data(), hint.size());
}

// Every case of inferQuantTypeFromShapes, with g4 = W*8/S and g8 = W*4/S.
TEST(OllamaInfer, EveryBranchOfTheShapeRule) {
  auto expect = [](ws::OllamaInferred got, OllamaQuantType t, uint32_t g, const char* what) {
    EXPECT_EQ(got.type, t) << what;
    EXPECT_EQ(got.group, g) << what;
  };
  expect(infer(8, 2), OllamaQuantType::Int4, 32, "g4 = 32: int4 g32");
  expect(infer(16, 1), OllamaQuantType::Int8, 64, "g8 = 64 (g4 = 128): int8 g64");
  expect(infer(16, 2), OllamaQuantType::Unknown, 0, "g4 = 64, g8 = 32 without a hint: nothing");
  expect(infer(16, 2, "INT8"), OllamaQuantType::Int8, 32, "the hint has an 8: int8 g32");
  expect(infer(16, 2, "mxfp8"), OllamaQuantType::Int8, 32, "any 8 counts");
  expect(infer(16, 2, "int4"), OllamaQuantType::Int4, 64, "the hint has a 4: int4 g64");
  expect(infer(16, 2, "q48"), OllamaQuantType::Int8, 32, "an 8 before a 4 is looked for");
  expect(infer(16, 2, "fp"), OllamaQuantType::Unknown, 0, "neither digit");
  expect(infer(8, 4), OllamaQuantType::Int4, 16, "g4 = 16, g8 = 8: int4 g16");
  expect(infer(16, 1, "int4"), OllamaQuantType::Int8, 64, "g8 = 64 wins before the hint is read");
  expect(infer(32, 2), OllamaQuantType::Int8, 64, "g4 = 128, g8 = 64: g8 == 64 is tested first (an int4 g128 weight reads as int8 g64)");
  expect(infer(32, 1), OllamaQuantType::Int8, 128, "g8 = 128, g4 = 256: int8 g128");
  expect(infer(6, 1), OllamaQuantType::Unknown, 0, "g4 = 48, g8 = 24: no common group");
  expect(infer(12, 3), OllamaQuantType::Int4, 32, "integer division: 96/3 = 32");
  expect(infer(37, 9), OllamaQuantType::Int4, 32, "truncating: 37*8/9 = 32 (296/9), as Go's int division");
  expect(infer(7, 2), OllamaQuantType::Unknown, 0, "g4 = 28, g8 = 14");
  expect(infer(0, 2), OllamaQuantType::Unknown, 0, "an empty weight row");
  expect(infer(8, 0), OllamaQuantType::Unknown, 0, "no scales");
  expect(infer(uint64_t(1) << 61, 1), OllamaQuantType::Unknown, 0, "past Go's int arithmetic");
}

// --- build_ollama over small blobs (written by the sample generator's writer). ---

samplegen::RawTensor tensor(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape) {
  const uint64_t bytes = samplegen::element_count(shape) * (dtype == "U32" || dtype == "F32" ? 4 : dtype == "U8" ? 1 : 2);
  samplegen::RawTensor t{name, dtype, shape, std::vector<uint8_t>(bytes)};
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = uint8_t(0x20 + i % 7);  // finite scales
  return t;
}

struct Built {
  Status status = Status::Ok;
  ws::Error error;
  std::string name;
  std::map<std::string, ws::QuantParams> params;  // every weight
  std::vector<uint8_t> file;
};

Built build(const std::vector<samplegen::RawTensor>& tensors, const std::map<std::string, std::string>& meta) {
  Built b;
  std::vector<size_t> order;
  for (size_t i = 0; i < tensors.size(); ++i) order.push_back(i);
  b.file = samplegen::serialize_raw(tensors, order, meta, true);
  Parsed p;
  convtest::parse(b.file, Split::Whole, 1, true, &p);
  EXPECT_EQ(p.status, Status::Ok);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  b.status = m.build_ollama();
  b.error = m.error();
  if (b.error.tensor_name) b.name.assign(b.error.tensor_name, b.error.tensor_name_size);
  for (uint32_t i = 0; b.status == Status::Ok && i < m.weight_count(); ++i)
    b.params[std::string(m.weight(i).name.data, m.weight(i).name.size)] = m.weight(i).params;
  return b;
}

// w: int4-or-int8-ambiguous shapes (16 words, 2 scales per row: g4 = 64, g8 = 32), BF16 affine.
std::vector<samplegen::RawTensor> ambiguous_weight(const std::string& n = "w") {
  return {tensor(n, "U32", {2, 16}), tensor(n + ".bias", "BF16", {2, 2}), tensor(n + ".scale", "BF16", {2, 2})};
}

void expect_params(const Built& b, const std::string& name, QuantMode mode, uint32_t bits, uint32_t group) {
  ASSERT_EQ(b.status, Status::Ok) << ws::status_name(b.status) << " " << b.name;
  ASSERT_TRUE(b.params.count(name)) << name;
  EXPECT_EQ(b.params.at(name).mode, mode) << name;
  EXPECT_EQ(b.params.at(name).bits, bits) << name;
  EXPECT_EQ(b.params.at(name).group, group) << name;
}

TEST(OllamaBuild, TypeAndGroupResolutionOrder) {
  // Per-tensor type wins over the blob's; the group comes from the shapes with it as the hint.
  expect_params(build(ambiguous_weight(), {{"quant_type", "int4"}, {"w.quant_type", "INT8"}}), "w", QuantMode::Affine, 8, 32);
  // An empty per-tensor type falls back to the blob's (Ollama: qt != "").
  expect_params(build(ambiguous_weight(), {{"quant_type", "q4"}, {"w.quant_type", ""}}), "w", QuantMode::Affine, 4, 64);
  // The blob's type alone: early int4 g32 blobs had no group_size, and the shapes say 32.
  std::vector<samplegen::RawTensor> g32 = {tensor("w", "U32", {2, 8}), tensor("w.bias", "BF16", {2, 2}),
                                           tensor("w.scale", "BF16", {2, 2})};
  expect_params(build(g32, {{"quant_type", "int4"}}), "w", QuantMode::Affine, 4, 32);
  // No type at all: the shapes decide both (int4 g32 here).
  expect_params(build(g32, {}), "w", QuantMode::Affine, 4, 32);
  // A stated group wins over the shapes: per tensor over the blob's ("0" and "" are unset).
  expect_params(build(ambiguous_weight(), {{"quant_type", "int8"}, {"group_size", "64"}, {"w.group_size", "32"}}), "w",
                QuantMode::Affine, 8, 32);
  expect_params(build(ambiguous_weight(), {{"quant_type", "int8"}, {"group_size", "0"}}), "w", QuantMode::Affine, 8, 32);
  expect_params(build(ambiguous_weight(), {{"quant_type", "int8"}, {"w.group_size", ""}}), "w", QuantMode::Affine, 8, 32);
  // The shapes fit nothing and no group is stated: the type's default (int8: 64), which the
  // companion check then rejects here (the scales say 32 per row of 64).
  std::vector<samplegen::RawTensor> odd = {tensor("w", "U32", {2, 6}), tensor("w.bias", "BF16", {2, 1}),
                                           tensor("w.scale", "BF16", {2, 1})};
  Built b = build(odd, {{"quant_type", "int8"}});
  EXPECT_EQ(b.status, Status::ConventionGroupNotDividing) << ws::status_name(b.status);
  EXPECT_EQ(b.name, "w");
  // Trimmed and case-insensitive type names.
  std::vector<samplegen::RawTensor> nv = {tensor("v", "U32", {2, 8}), tensor("v.scale", "U8", {2, 4})};
  expect_params(build(nv, {{"v.quant_type", " Nvfp4\t"}}), "v", QuantMode::Nvfp4, 4, 16);
}

TEST(OllamaBuild, NothingToInferIsAnErrorNamingTheTensor) {
  // g4 = 64, g8 = 32 and no quant_type anywhere: both widths fit.
  Built b = build(ambiguous_weight(), {});
  EXPECT_EQ(b.status, Status::ConventionGroupNotInferable);
  EXPECT_EQ(b.name, "w");
  EXPECT_EQ(b.error.offset, std::string(b.file.begin(), b.file.end()).find("\"w\""));
  EXPECT_EQ(b.error.found, 16u);    // the weight's words per row
  EXPECT_EQ(b.error.expected, 2u);  // its scales per row
  // 6 words, 1 scale: g4 = 48, g8 = 24, no common group.
  std::vector<samplegen::RawTensor> odd = {tensor("w", "U32", {2, 6}), tensor("w.bias", "BF16", {2, 1}),
                                           tensor("w.scale", "BF16", {2, 1})};
  b = build(odd, {{"other.quant_type", "int4"}});
  EXPECT_EQ(b.status, Status::ConventionGroupNotInferable);
  // An unknown, a blank and a whitespace-only type are errors, not "no type" (Ollama would run
  // them as 8-bit affine g32; weightstream is stricter).
  for (const char* qt : {"int5", " \t", "\xE2\x80\x8B"}) {
    b = build(ambiguous_weight(), {{"w.quant_type", qt}});
    EXPECT_EQ(b.status, Status::ConventionUnknownQuantType) << qt;
    EXPECT_EQ(b.name, "w");
  }
  // A group_size that is not a number.
  b = build(ambiguous_weight(), {{"quant_type", "int4"}, {"group_size", "-64"}});
  EXPECT_EQ(b.status, Status::ConventionUnknownParams);
}

// A main tensor is quantized iff "<name>.scale" is in its blob; ".scale", ".bias" and
// ".global_scale" are companions only of such a tensor, ordinary tensors otherwise.
TEST(OllamaBuild, CompanionsOnlyOfAQuantizedMainTensor) {
  std::vector<samplegen::RawTensor> t = ambiguous_weight("model.layers.0.mlp.experts.down_proj.weight");
  t.push_back(tensor("model.layers.0.router.scale", "F32", {8}));         // no base: plain (Gemma-4)
  t.push_back(tensor("model.layers.0.router.global_scale", "F32", {}));  // no quantized base: plain
  t.push_back(tensor("norm.weight", "BF16", {4}));
  t.push_back(tensor("norm.weight.bias", "BF16", {4}));  // its base has no .scale: plain
  t.push_back(tensor("lin.bias", "F32", {2}));
  Built b = build(t, {{"quant_type", "int4"}});
  ASSERT_EQ(b.status, Status::Ok) << ws::status_name(b.status) << " " << b.name;
  EXPECT_EQ(b.params.size(), 6u);
  expect_params(b, "model.layers.0.mlp.experts.down_proj.weight", QuantMode::Affine, 4, 64);
  for (const char* plain : {"model.layers.0.router.scale", "model.layers.0.router.global_scale", "norm.weight",
                            "norm.weight.bias", "lin.bias"})
    expect_params(b, plain, QuantMode::None, 0, 0);
  // A tensor whose own name ends in ".scale" is never a main tensor, even with a ".scale" of
  // its own: "x.scale.scale" is then the companion of nothing either.
  b = build({tensor("x.scale", "U32", {2, 8}), tensor("x.scale.scale", "BF16", {2, 2})}, {{"quant_type", "int4"}});
  ASSERT_EQ(b.status, Status::Ok);
  expect_params(b, "x.scale", QuantMode::None, 0, 0);
  expect_params(b, "x.scale.scale", QuantMode::None, 0, 0);
}

}  // namespace

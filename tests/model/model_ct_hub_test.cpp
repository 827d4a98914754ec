// compressed-tensors pack-quantized checkpoints (issue #27): recognised by config.json's
// quant_method "compressed-tensors" (format "pack-quantized", config_groups' weights arguments) and
// decoded to the values of neuralmagic/compressed-tensors' own decompression —
// unpack_from_int32 (compressors/quantized_compressors/pack_quantized.py: value i of an int32 word
// at bit i * num_bits, minus 2^(num_bits-1); zero points packed down the rows) and _dequantize
// (quantization/lifecycle/forward.py: (q - zp) * scale) — recomputed here from the fixtures'
// stored words and scales, f32 exactly and f16 as that rounded to nearest even, in every load mode,
// chunking and access. Fixtures: tests/data/conventions/hub/ct-* (tools/samplegen/hub_fixtures.cpp;
// their verdicts for the malformed neighbours are in hub/expected.json, checked by
// model_quantized_test and the CLI tests).
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"
#include "weightstream/mlx_config.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::read_file;

using hubtest::output_of;
using hubtest::load;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

// A stored tensor's bytes, from the file's header (the test's own reading).
Bytes stored(const Bytes& file, const std::string& name) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t e = h.find("\"" + name + "\":");
  EXPECT_NE(e, std::string::npos) << name;
  if (e == std::string::npos) return {};
  const size_t o = h.find("\"data_offsets\":[", e) + 16;
  const uint64_t a = strtoull(h.c_str() + o, nullptr, 10);
  const uint64_t b = strtoull(h.c_str() + h.find(',', o) + 1, nullptr, 10);
  return Bytes(file.begin() + long(8 + n + a), file.begin() + long(8 + n + b));
}

uint32_t word(const Bytes& b, size_t i) {
  return uint32_t(b[4 * i]) | uint32_t(b[4 * i + 1]) << 8 | uint32_t(b[4 * i + 2]) << 16 | uint32_t(b[4 * i + 3]) << 24;
}

float bf16(const Bytes& b, size_t i) {
  const uint32_t u = uint32_t(b[2 * i] | b[2 * i + 1] << 8) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// unpack_from_int32(packed_dim=1): q[r][c] = ((word[r][c / pf] >> (c % pf) * bits) & mask) - 2^(bits-1).
int unpacked(const Bytes& words, uint64_t row_words, uint64_t r, uint64_t c, uint32_t bits) {
  const uint32_t pf = 32 / bits;
  return int((word(words, r * row_words + c / pf) >> ((c % pf) * bits)) & ((1u << bits) - 1)) - (1 << (bits - 1));
}

// The upstream values of one Linear: (q - zp) * scale in f32; scales [rows, groups] BF16, zero
// points (empty: symmetric) packed down the rows, [ceil(rows / pf), groups].
// g_idx (empty: column order): weight_g_idx's int32 values, column c in group g_idx[c].
std::vector<float> ct_values(const Bytes& packed, const Bytes& scale, const Bytes& zp, uint64_t rows, uint64_t cols,
                             uint32_t bits, uint64_t groups, bool legacy = false, const Bytes& g_idx = Bytes()) {
  const uint32_t pf = 32 / bits;
  const uint64_t row_words = cols / pf, group = cols / groups;
  std::vector<float> v;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t g = g_idx.empty() ? c / group : word(g_idx, c);
      // unpack_from_int32(zero_point, packed_dim=0): row r of the zero points at bit (r % pf) * bits;
      // older files: int8 [rows, groups] as stored.
      const int z = zp.empty() ? 0
                    : legacy   ? int(int8_t(zp[r * groups + g]))
                               : int((word(zp, (r / pf) * groups + g) >> ((r % pf) * bits)) & ((1u << bits) - 1)) -
                                     (1 << (bits - 1));
      v.push_back((float(unpacked(packed, row_words, r, c, bits)) - float(z)) * bf16(scale, r * groups + g));
    }
  return v;
}

// The output bytes the values give: f32 as they are, f16 rounded to nearest even.


struct Fixture {
  const char* dir;
  uint32_t bits;
  uint64_t groups;  // scale columns
  bool symmetric;
  bool legacy_zp;   // int8 zero points, unpacked
};
const Fixture kFixtures[] = {{"ct-w4a16-group", 4, 2, true, false},
                             {"ct-w4-asym-group", 4, 2, false, false},
                             {"ct-w4-asym-legacy-zp", 4, 2, false, true},
                             {"ct-w8-channel", 8, 1, true, false},
                             {"ct-w2-asym-channel", 2, 1, false, false}};

std::map<std::string, std::vector<float>> expected(const Fixture& f) {
  const Bytes file = read_file(kHub + "/" + f.dir + "/model.safetensors");
  std::map<std::string, std::vector<float>> out;
  for (const std::string m : {"mlp.down_proj", "self_attn.q_proj"}) {
    const std::string p = L + m;
    out[p + ".weight"] = ct_values(stored(file, p + ".weight_packed"), stored(file, p + ".weight_scale"),
                                   f.symmetric ? Bytes() : stored(file, p + ".weight_zero_point"), 8, 32, f.bits, f.groups,
                                   f.legacy_zp);
  }
  return out;
}

TEST(CtHub, PackQuantizedDecodesAsCompressedTensors) {
  for (const Fixture& f : kFixtures) {
    const std::map<std::string, std::vector<float>> expect = expected(f);
    // The generator writes each range's extremes first: -2^(bits-1) and 2^(bits-1) - 1.
    const Bytes file = read_file(kHub + std::string("/") + f.dir + "/model.safetensors");
    const Bytes packed = stored(file, L + "mlp.down_proj.weight_packed");
    EXPECT_EQ(unpacked(packed, 32 / (32 / f.bits), 0, 0, f.bits), -(1 << (f.bits - 1))) << f.dir;
    EXPECT_EQ(unpacked(packed, 32 / (32 / f.bits), 0, 1, f.bits), (1 << (f.bits - 1)) - 1) << f.dir;
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
        for (bool seekable : {true, false}) {
          HostOptions o;
          o.out = out;
          o.feed = feed;
          o.seekable = seekable;
          o.seed = 13;
          o.out_size = feed == Feed::Random ? 128 : 1 << 16;
          const LoadResult r = load(f.dir, o);
          const std::string what = std::string(f.dir) + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                   std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
          ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
          EXPECT_EQ(std::string(ws::convention_name(r.convention)), "compressed-tensors") << what;
          EXPECT_EQ(r.weight_names.size(), 4u) << what;  // 2 packed + norm + lm_head (ignored: BF16)
          EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
          for (const auto& e : expect) {
            ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
            EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
          }
        }
  }
}

TEST(CtHub, WeightIsNamedShapedAndParameterised) {
  for (const Fixture& f : kFixtures) {
    HostOptions o;
    o.mode = ws::ModelLoadMode::Headers;
    uint32_t seen = 0;
    o.on_ready = [&](const ws::ModelLoader& ld) {
      const uint32_t i = hubtest::weight_index(ld, L + "mlp.down_proj.weight");
      if (i == ld.weight_count()) return;
      const ws::LogicalWeight& w = ld.weight(i);
      ++seen;
      EXPECT_EQ(w.rank, 2u);
      EXPECT_EQ(w.shape[0], 8u);
      EXPECT_EQ(w.shape[1], 32u);
      EXPECT_EQ(w.format, ws::QuantFormat::CtPacked);
      const ws::DequantSpec s = w.spec();
      EXPECT_EQ(s.bits, f.bits);
      EXPECT_EQ(s.row_elems, 32u);
      EXPECT_EQ(s.group, 32u / f.groups);
      EXPECT_EQ(s.block_rows, 1u);
      EXPECT_EQ(s.scale_dtype, ws::DType::BF16);
      ws::QuantParameter q[ws::kMaxQuantParameters];
      const uint32_t n = ws::quant_parameters(w, q, ws::kMaxQuantParameters);
      ASSERT_EQ(n, (f.groups > 1 ? 6u : 5u) + (f.legacy_zp ? 1u : 0u));
      EXPECT_STREQ(q[0].text, "compressed-tensors pack-quantized");
      EXPECT_STREQ(q[1].text, f.groups > 1 ? "group" : "channel");
      EXPECT_EQ(q[2].number, f.bits);
      EXPECT_STREQ(q[n - (f.legacy_zp ? 3 : 2)].text, f.symmetric ? "true" : "false");
      if (f.legacy_zp) {
        EXPECT_STREQ(q[n - 2].text, "unpacked int8");
      }
      EXPECT_STREQ(q[n - 1].text, "BF16");
      // Every stored tensor of the Linear belongs to the weight, in its role.
      const ws::LogicalModel& m = *ld.model();
      ws::PieceRole role;
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Packed), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Packed);
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Scales), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Scales);
      EXPECT_EQ(m.owner(w.ref(ws::PieceRole::Shape), &role), i);
      EXPECT_EQ(role, ws::PieceRole::Shape);
      EXPECT_EQ(w.ref(ws::PieceRole::Biases).present(), !f.symmetric);
    };
    const LoadResult r = load(f.dir, o);
    ASSERT_EQ(r.code, ws::Status::Ok) << f.dir << ": " << r.verdict();
    EXPECT_EQ(seen, 1u) << f.dir;
  }
}

// The absolute offset of a stored tensor's data (the test's own reading of the header).
uint64_t data_at(const Bytes& file, const std::string& name) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t o = h.find("\"data_offsets\":[", h.find("\"" + name + "\":")) + 16;
  return 8 + n + strtoull(h.c_str() + o, nullptr, 10);
}

// weight_shape (PackedQuantizationCompressor.compress_weight's torch.tensor(weight.shape), what
// decompress_weight cuts the unpacked rows to) is read and must be the shape the packed tensor and
// its scales give: else ConventionCompanionShape at its data, found the stored value, expected the
// inferred one. Seekable: before ModelReady in every mode. Sequential: as the stream passes it
// (Validate, Decode); headers alone do not read it.
TEST(CtHub, WeightShapeDisagreeingIsRefusedAtItsData) {
  struct Case {
    const char* dir;
    std::string tensor;
    uint64_t found, expected;
  };
  // cols: down_proj's I64 [8, 24] over 4 words and 2 groups of 16 (32 columns); rows-i32:
  // down_proj's I32 [8, 32] agrees, q_proj's I32 [4, 32] has 4 rows for 8.
  const Case cases[] = {{"ct-weight-shape-cols", L + "mlp.down_proj.weight_shape", 24, 32},
                        {"ct-weight-shape-rows-i32", L + "self_attn.q_proj.weight_shape", 4, 8}};
  for (const Case& c : cases) {
    const Bytes file = read_file(kHub + "/" + c.dir + "/model.safetensors");
    const uint64_t at = data_at(file, c.tensor);
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Headers, ws::ModelLoadMode::Validate, ws::ModelLoadMode::Decode})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
        for (bool seekable : {true, false}) {
          HostOptions o;
          o.mode = mode;
          o.feed = feed;
          o.seekable = seekable;
          o.seed = 5;
          const LoadResult r = load(c.dir, o);
          const std::string what = std::string(c.dir) + " mode " + std::to_string(int(mode)) + " feed " +
                                   std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
          if (!seekable && mode == ws::ModelLoadMode::Headers) {
            EXPECT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
            EXPECT_TRUE(r.ready) << what;
            continue;
          }
          EXPECT_EQ(r.code, ws::Status::ConventionCompanionShape) << what << ": " << r.verdict();
          EXPECT_EQ(r.offset, at) << what;
          EXPECT_EQ(r.tensor, c.tensor) << what;
          EXPECT_EQ(r.file, "model.safetensors") << what;
          EXPECT_TRUE(r.has_found && r.has_expected) << what;
          EXPECT_EQ(r.found, c.found) << what;
          EXPECT_EQ(r.expected, c.expected) << what;
          EXPECT_TRUE(r.convention_error) << what;
          EXPECT_EQ(r.ready, !seekable) << what;
          // Upstream's order puts every weight_shape before the scales: no weight is whole yet.
          EXPECT_TRUE(r.weights.empty()) << what;
        }
  }
}

// actorder "group": weight_g_idx names each column's group (compressed-tensors forward.py
// _process_quantization: columns regrouped by argsort(g_idx), dequantized a group_size run at a
// time, put back), so column c takes scale[r][g_idx[c]] and its zero point; all -1 (the initial
// value) is column order. The fixture's g_idx has GPTQ's shape ([i // group][invperm]): (7c mod 32) // 16.
TEST(CtHub, ActorderGroupIndexDecodesEachColumnWithItsGroup) {
  for (const char* dir : {"ct-g-idx", "ct-g-idx-unset"}) {
    const bool unset = std::string(dir) == "ct-g-idx-unset";
    const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
    const std::string d = L + "mlp.down_proj", q = L + "self_attn.q_proj";
    const Bytes g_idx = stored(file, d + ".weight_g_idx");
    ASSERT_EQ(g_idx.size(), 32u * 4);
    EXPECT_EQ(word(g_idx, 1), unset ? 0xFFFFFFFFu : 0u);  // 7 // 16
    EXPECT_EQ(word(g_idx, 3), unset ? 0xFFFFFFFFu : 1u);  // 21 // 16
    auto zp = [&](const std::string& m) { return unset ? stored(file, m + ".weight_zero_point") : Bytes(); };
    std::map<std::string, std::vector<float>> expect = {
        {d + ".weight", ct_values(stored(file, d + ".weight_packed"), stored(file, d + ".weight_scale"), zp(d), 8, 32, 4, 2,
                                  false, unset ? Bytes() : g_idx)},
        {q + ".weight", ct_values(stored(file, q + ".weight_packed"), stored(file, q + ".weight_scale"), zp(q), 8, 32, 4, 2)}};
    // The actorder values differ from column order's (the test can tell them apart).
    if (!unset) {
      EXPECT_NE(expect[d + ".weight"], ct_values(stored(file, d + ".weight_packed"), stored(file, d + ".weight_scale"),
                                                 Bytes(), 8, 32, 4, 2));
    }
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
        for (bool seekable : {true, false}) {
          HostOptions o;
          o.out = out;
          o.feed = feed;
          o.seekable = seekable;
          o.seed = 17;
          o.out_size = feed == Feed::Random ? 96 : 1 << 16;
          const LoadResult r = load(dir, o);
          const std::string what = std::string(dir) + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                   std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
          ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
          EXPECT_EQ(r.weight_names.size(), 4u) << what;
          for (const auto& e : expect) {
            ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
            EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
          }
        }
    // The parameters say so.
    HostOptions o;
    o.mode = ws::ModelLoadMode::Headers;
    bool seen = false;
    o.on_ready = [&](const ws::ModelLoader& ld) {
      const uint32_t i = hubtest::weight_index(ld, d + ".weight");
      if (i == ld.weight_count()) return;
      const ws::LogicalWeight& w = ld.weight(i);
      seen = true;
      ws::QuantParameter p[ws::kMaxQuantParameters];
      const uint32_t n = ws::quant_parameters(w, p, ws::kMaxQuantParameters);
      ASSERT_EQ(n, 7u);
      EXPECT_STREQ(p[5].key, "actorder");
      EXPECT_STREQ(p[5].text, "group (weight_g_idx)");
      ws::PieceRole role;
      EXPECT_EQ(ld.model()->owner(w.ref(ws::PieceRole::GlobalScale), &role), i);
      EXPECT_EQ(role, ws::PieceRole::GlobalScale);
    };
    ASSERT_EQ(load(dir, o).code, ws::Status::Ok) << dir;
    EXPECT_TRUE(seen) << dir;
  }
}

// A g_idx value past the scales' groups, or a group holding more than group_size columns (where
// compressed-tensors' argsort regrouping would give some column another group than g_idx names):
// QuantGroupIndexOutOfRange at the value's byte when the weight decodes, in every access.
TEST(CtHub, GroupIndexOutOfRangeOrOverfullIsRefusedAtItsByte) {
  const std::string d = L + "mlp.down_proj";
  for (const char* dir : {"ct-g-idx-range", "ct-g-idx-overfull"}) {
    const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
    const Bytes g_idx = stored(file, d + ".weight_g_idx");
    // The test's own finding: the first value past the groups, or that fills a group past 16.
    uint64_t bad = 32;
    uint32_t held[2] = {};
    for (uint64_t c = 0; c < 32 && bad == 32; ++c) {
      const uint32_t g = word(g_idx, c);
      if (g >= 2 || ++held[g] > 16) bad = c;
    }
    // range: column 5 holds 2; overfull: column 3 moved to group 0, whose 17th column is 29.
    EXPECT_EQ(bad, std::string(dir) == "ct-g-idx-range" ? 5u : 29u) << dir;
    for (Feed feed : {Feed::Whole, Feed::OneByte})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.feed = feed;
        o.seekable = seekable;
        const LoadResult r = load(dir, o);
        EXPECT_EQ(r.code, ws::Status::QuantGroupIndexOutOfRange) << dir << ": " << r.verdict();
        EXPECT_EQ(r.offset, data_at(file, d + ".weight_g_idx") + 4 * bad) << dir;
        EXPECT_EQ(r.tensor, d + ".weight") << dir;
      }
  }
}

// E4M3FN (torch.float8_e4m3fn) from its definition: bias 7, subnormals m / 8 * 2^-6, no infinities.
float e4m3fn(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  const float v = e == 0 ? float(m) / 8.0f * 0.015625f : (1.0f + float(m) / 8.0f) * float(1 << e) / 128.0f;
  return (b & 0x80) ? -v : v;
}

float f32_at(const Bytes& b, size_t i) {
  const uint32_t u = word(b, i);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// naive- / int- / float-quantized: the weight as stored (I8, F8_E4M3), the scale's shape the
// strategy (forward.py dequantize's inference), value (q - zp) * scale (_dequantize) in f32: for
// F8 the FP8 convention's f32(q) * f32(scale).
TEST(CtHub, StoredFormatsDecodeAsCompressedTensors) {
  struct Case {
    const char* dir;
    const char* method;
    uint64_t br, bc;  // rows and columns a scale
    bool fp8, zp, f32_scale;
  };
  const Case cases[] = {{"ct-int8-channel", "compressed-tensors int-quantized", 1, 32, false, false, false},
                        {"ct-int8-asym-group", "compressed-tensors naive-quantized", 1, 16, false, true, false},
                        {"ct-fp8-channel", "compressed-tensors float-quantized", 1, 32, true, false, false},
                        {"ct-fp8-block", "compressed-tensors float-quantized", 4, 16, true, false, true},
                        {"ct-fp8-tensor", "compressed-tensors float-quantized", 8, 32, true, false, true}};
  for (const Case& c : cases) {
    const Bytes file = read_file(kHub + "/" + c.dir + "/model.safetensors");
    std::map<std::string, std::vector<float>> expect;
    for (const std::string m : {"mlp.down_proj", "self_attn.q_proj"}) {
      const std::string p = L + m;
      const Bytes q = stored(file, p + ".weight"), sc = stored(file, p + ".weight_scale");
      const Bytes z = c.zp ? stored(file, p + ".weight_zero_point") : Bytes();
      const uint64_t groups = 32 / c.bc;
      std::vector<float> v;
      for (uint64_t r = 0; r < 8; ++r)
        for (uint64_t col = 0; col < 32; ++col) {
          const size_t si = size_t((r / c.br) * groups + col / c.bc);
          const float scale = c.f32_scale ? f32_at(sc, si) : bf16(sc, si);
          const uint8_t b = q[r * 32 + col];
          const float x = c.fp8 ? e4m3fn(b) : float(int(int8_t(b)) - (c.zp ? int(int8_t(z[si])) : 0));
          v.push_back(x * scale);
        }
      if (!c.fp8) {
        EXPECT_EQ(int8_t(q[0]), -128) << c.dir;
        EXPECT_EQ(int8_t(q[1]), 127) << c.dir;
      }
      expect[p + ".weight"] = v;
    }
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
        for (bool seekable : {true, false}) {
          HostOptions o;
          o.out = out;
          o.feed = feed;
          o.seekable = seekable;
          o.seed = 23;
          o.out_size = feed == Feed::Random ? 128 : 1 << 16;
          const LoadResult r = load(c.dir, o);
          const std::string what = std::string(c.dir) + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " +
                                   std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
          ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
          EXPECT_EQ(std::string(ws::convention_name(r.convention)), "compressed-tensors") << what;
          // 2 quantized + norm + lm_head (+ the FP8 tensor fixture's input_scale, as stored).
          EXPECT_EQ(r.weight_names.size(), std::string(c.dir) == "ct-fp8-tensor" ? 5u : 4u) << what;
          for (const auto& e : expect) {
            ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
            EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
          }
        }
    HostOptions o;
    o.mode = ws::ModelLoadMode::Headers;
    bool seen = false;
    o.on_ready = [&](const ws::ModelLoader& ld) {
      const uint32_t i = hubtest::weight_index(ld, L + "mlp.down_proj.weight");
      if (i == ld.weight_count()) return;
      const ws::LogicalWeight& w = ld.weight(i);
      seen = true;
      EXPECT_EQ(w.format, c.fp8 ? ws::QuantFormat::Fp8Block : ws::QuantFormat::CtPacked) << c.dir;
      EXPECT_EQ(w.shape[0], 8u);
      EXPECT_EQ(w.shape[1], 32u);
      ws::QuantParameter p[ws::kMaxQuantParameters];
      ASSERT_GE(ws::quant_parameters(w, p, ws::kMaxQuantParameters), 3u);
      EXPECT_STREQ(p[0].text, c.method) << c.dir;
      EXPECT_STREQ(p[1].text, c.br == 8 ? "tensor" : c.br == 4 ? "block" : c.bc == 32 ? "channel" : "group") << c.dir;
    };
    ASSERT_EQ(load(c.dir, o).code, ws::Status::Ok) << c.dir;
    EXPECT_TRUE(seen) << c.dir;
  }
}

// The kernels alone, over geometries the fixtures are too small for (the SIMD128 kernel's 4-bit
// path takes 4 words of one group at a time: groups of 128 here; rows whose zero points share a
// word with the next weight's; tensor scales; every width 1..8): reference and SIMD128 give the
// upstream values, f32 and f16, F32 / BF16 / F16 scales.
TEST(CtHub, ReferenceAndSimdKernelsGiveTheUpstreamValues) {
  struct Geo {
    uint32_t bits;
    uint64_t rows, cols, group;  // group 0: tensor (one scale)
    bool asym;
    ws::DType scale_dtype;
    bool legacy = false;  // int8 zero points, unpacked
  };
  std::vector<Geo> geos = {{4, 5, 256, 128, true, ws::DType::F32},  {4, 3, 384, 128, false, ws::DType::BF16},
                           {4, 9, 64, 32, true, ws::DType::F16},    {4, 4, 64, 0, false, ws::DType::F32},
                           {8, 6, 128, 64, true, ws::DType::BF16},  {4, 5, 256, 128, true, ws::DType::BF16, true},
                           {3, 4, 80, 40, true, ws::DType::F32, true}};
  for (uint32_t b = 1; b <= 8; ++b) {
    const uint64_t pf = 32 / b;
    geos.push_back({b, 7, pf * 8, pf * 4, b % 2 == 0, ws::DType::F32});
  }
  uint32_t state = 0x9E3779B9u;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (const Geo& g : geos) {
    const uint32_t pf = 32 / g.bits;
    const uint64_t groups = g.group ? g.cols / g.group : 1, words = g.rows * g.cols / pf;
    Bytes packed(words * 4), zp, scales;
    for (uint8_t& x : packed) x = uint8_t(next());
    const uint32_t sb = g.scale_dtype == ws::DType::F32 ? 4 : 2;
    const uint64_t nscales = g.group ? g.rows * groups : 1;
    std::vector<float> sval;
    for (uint64_t i = 0; i < nscales; ++i) {
      const float v = float(int(next() % 2001) - 1000) / 4096.0f;
      if (sb == 4) {
        uint8_t x[4];
        memcpy(x, &v, 4);
        scales.insert(scales.end(), x, x + 4);
        sval.push_back(v);
      } else if (g.scale_dtype == ws::DType::BF16) {
        uint32_t u;
        memcpy(&u, &v, 4);
        const uint16_t h = uint16_t(u >> 16);  // truncated: a bf16 value, exact below
        scales.push_back(uint8_t(h));
        scales.push_back(uint8_t(h >> 8));
        const uint32_t back = uint32_t(h) << 16;
        float f;
        memcpy(&f, &back, 4);
        sval.push_back(f);
      } else {
        const _Float16 h = static_cast<_Float16>(v);
        uint8_t x[2];
        memcpy(x, &h, 2);
        scales.insert(scales.end(), x, x + 2);
        sval.push_back(float(h));
      }
    }
    if (g.asym) {
      zp.resize(g.legacy ? g.rows * groups : ((g.rows + pf - 1) / pf) * groups * 4);
      for (uint8_t& x : zp) x = uint8_t(next());
    }
    std::vector<float> want;
    for (uint64_t r = 0; r < g.rows; ++r)
      for (uint64_t c = 0; c < g.cols; ++c) {
        const uint64_t gi = g.group ? c / g.group : 0;
        const int z = zp.empty() ? 0
                      : g.legacy ? int(int8_t(zp[r * groups + gi]))
                                 : int((word(zp, (r / pf) * groups + gi) >> ((r % pf) * g.bits)) & ((1u << g.bits) - 1)) -
                                       (1 << (g.bits - 1));
        want.push_back((float(unpacked(packed, g.cols / pf, r, c, g.bits)) - float(z)) *
                       sval[g.group ? r * groups + gi : 0]);
      }
    for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
      for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16}) {
        ws::DequantSpec spec;
        spec.format = ws::QuantFormat::CtPacked;
        spec.impl = impl;
        spec.out = out;
        spec.elements = g.rows * g.cols;
        spec.bits = g.bits;
        spec.row_elems = g.cols;
        spec.group = g.group ? g.group : g.cols;
        spec.block_rows = g.group ? 1 : g.rows;
        spec.scale_dtype = g.scale_dtype;
        spec.scales = scales.data();
        spec.biases = zp.empty() ? nullptr : zp.data();
        if (g.legacy) spec.element_dtype = ws::DType::I8;
        Bytes got(want.size() * (out == ws::OutType::F32 ? 4 : 2));
        ws::Error e;
        ASSERT_EQ(ws::dequantize(spec, packed.data(), packed.size(), got.data(), got.size(), &e), ws::Status::Ok);
        EXPECT_TRUE(got == output_of(want, out))
            << "bits " << g.bits << " cols " << g.cols << " group " << g.group << " impl " << int(impl) << " out " << int(out);
      }
  }
}

// weight_g_idx in the kernels: 4 and 8 bits, asymmetric, columns in groups (5c mod cols) //
// group; reference and SIMD128, f32 and f16, give (q - zp[g_idx[c]]) * scale[g_idx[c]]. A g_idx of
// column order (c // group) and one with a -1 give the column-order values.
TEST(CtHub, KernelsTakeEachColumnsGroupFromGIdx) {
  for (uint32_t bits : {4u, 8u}) {
    const uint32_t pf = 32 / bits;
    const uint64_t rows = 5, cols = 256, group = 64, groups = cols / group;
    uint32_t state = 0x2545F491u;
    auto next = [&]() {
      state ^= state << 13;
      state ^= state >> 17;
      state ^= state << 5;
      return state;
    };
    Bytes packed(rows * cols / pf * 4), scales, zp(((rows + pf - 1) / pf) * groups * 4);
    for (uint8_t& x : packed) x = uint8_t(next());
    for (uint8_t& x : zp) x = uint8_t(next());
    std::vector<float> sval;
    for (uint64_t i = 0; i < rows * groups; ++i) {
      const float v = float(int(next() % 2001) - 1000) / 4096.0f;
      uint8_t x[4];
      memcpy(x, &v, 4);
      scales.insert(scales.end(), x, x + 4);
      sval.push_back(v);
    }
    for (int kind = 0; kind < 3; ++kind) {  // 0 actorder, 1 column order, 2 a -1 (column order)
      Bytes g_idx;
      for (uint64_t c = 0; c < cols; ++c) {
        uint32_t g = uint32_t(kind == 0 ? (5 * c) % cols / group : c / group);
        if (kind == 2 && c == 77) g = 0xFFFFFFFFu;
        for (int k = 0; k < 4; ++k) g_idx.push_back(uint8_t(g >> (8 * k)));
      }
      std::vector<float> want;
      for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t c = 0; c < cols; ++c) {
          const uint64_t g = kind == 0 ? (5 * c) % cols / group : c / group;
          const int z = int((word(zp, (r / pf) * groups + g) >> ((r % pf) * bits)) & ((1u << bits) - 1)) - (1 << (bits - 1));
          want.push_back((float(unpacked(packed, cols / pf, r, c, bits)) - float(z)) * sval[r * groups + g]);
        }
      for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
        for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16}) {
          ws::DequantSpec spec;
          spec.format = ws::QuantFormat::CtPacked;
          spec.impl = impl;
          spec.out = out;
          spec.elements = rows * cols;
          spec.bits = bits;
          spec.row_elems = cols;
          spec.group = group;
          spec.block_rows = 1;
          spec.scale_dtype = ws::DType::F32;
          spec.scales = scales.data();
          spec.biases = zp.data();
          spec.gptq_g_idx = g_idx.data();
          Bytes got(want.size() * (out == ws::OutType::F32 ? 4 : 2));
          ws::Error e;
          ASSERT_EQ(ws::dequantize(spec, packed.data(), packed.size(), got.data(), got.size(), &e), ws::Status::Ok);
          EXPECT_TRUE(got == output_of(want, out)) << "bits " << bits << " kind " << kind << " impl " << int(impl)
                                                   << " out " << int(out);
        }
    }
  }
}

// ct_int8 (naive- / int-quantized I8 weights): the bytes as int8, reference and SIMD128, f32 and
// f16, with int8 zero points per group and without; bits other than 8 are no geometry.
TEST(CtHub, KernelsReadInt8BytesAsStored) {
  const uint64_t rows = 6, cols = 96, group = 32, groups = cols / group;
  Bytes q(rows * cols), zp(rows * groups), scales;
  for (size_t i = 0; i < q.size(); ++i) q[i] = uint8_t(i * 37 + 11);
  for (size_t i = 0; i < zp.size(); ++i) zp[i] = uint8_t(int8_t(int(i % 9) - 4));
  std::vector<float> sval;
  for (uint64_t i = 0; i < rows * groups; ++i) {
    const float v = float(int(i % 13) - 6) / 64.0f;
    uint8_t x[4];
    memcpy(x, &v, 4);
    scales.insert(scales.end(), x, x + 4);
    sval.push_back(v);
  }
  for (bool asym : {false, true}) {
    std::vector<float> want;
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c) {
        const uint64_t g = r * groups + c / group;
        want.push_back(float(int(int8_t(q[r * cols + c])) - (asym ? int(int8_t(zp[g])) : 0)) * sval[g]);
      }
    for (ws::KernelImpl impl : {ws::KernelImpl::Reference, ws::KernelImpl::Simd128})
      for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16}) {
        ws::DequantSpec spec;
        spec.format = ws::QuantFormat::CtPacked;
        spec.impl = impl;
        spec.out = out;
        spec.elements = rows * cols;
        spec.bits = 8;
        spec.ct_int8 = true;
        spec.row_elems = cols;
        spec.group = group;
        spec.block_rows = 1;
        spec.scale_dtype = ws::DType::F32;
        spec.scales = scales.data();
        if (asym) {
          spec.biases = zp.data();
          spec.element_dtype = ws::DType::I8;
        }
        Bytes got(want.size() * (out == ws::OutType::F32 ? 4 : 2));
        ws::Error e;
        ASSERT_EQ(ws::dequantize(spec, q.data(), q.size(), got.data(), got.size(), &e), ws::Status::Ok);
        EXPECT_TRUE(got == output_of(want, out)) << "asym " << asym << " impl " << int(impl) << " out " << int(out);
      }
  }
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::CtPacked;
  spec.elements = rows * cols;
  spec.bits = 4;
  spec.ct_int8 = true;
  spec.row_elems = cols;
  spec.group = group;
  spec.block_rows = 1;
  spec.scale_dtype = ws::DType::F32;
  spec.scales = scales.data();
  ws::Dequantizer d;
  EXPECT_EQ(d.init(spec), ws::Status::InvalidQuantParams);
}

// A non-finite scale is refused at its bytes when the weight decodes.
TEST(CtHub, NonFiniteScaleIsRefusedAtItsBytes) {
  Bytes packed(8 * 4, 0x11), scales;
  for (int i = 0; i < 2; ++i) {
    scales.push_back(0x80);
    scales.push_back(0x3F);  // bf16 1.0
  }
  scales[2] = 0x80;
  scales[3] = 0x7F;  // bf16 +inf
  ws::DequantSpec spec;
  spec.format = ws::QuantFormat::CtPacked;
  spec.elements = 64;
  spec.bits = 4;
  spec.row_elems = 32;
  spec.group = 32;
  spec.block_rows = 1;
  spec.scale_dtype = ws::DType::BF16;
  spec.scales = scales.data();
  spec.scales_offset = 1000;
  ws::Dequantizer d;
  ASSERT_EQ(d.init(spec), ws::Status::InvalidBlockData);
  EXPECT_EQ(d.error().offset, 1002u);
  // A group that is not whole words, or a row the groups do not divide: no geometry.
  scales[3] = 0x3F;
  spec.group = 12;
  EXPECT_EQ(d.init(spec), ws::Status::InvalidQuantParams);
}

TEST(CtHub, ConfigReaderKeepsFormatAndConfigGroupsWeights) {
  alignas(8) static uint8_t arena[8192];
  const Bytes cfg = read_file(kHub + "/ct-w4-asym-group/config.json");
  const std::string text(cfg.begin(), cfg.end());
  for (size_t piece : {text.size(), size_t(1), size_t(7)}) {
    ws::MlxQuantConfig c(arena, sizeof arena);
    for (size_t at = 0; at < text.size(); at += piece)
      ASSERT_EQ(c.feed(text.data() + at, std::min(piece, text.size() - at)), ws::Status::Ok);
    ASSERT_EQ(c.finish(), ws::Status::Ok);
    EXPECT_EQ(std::string(c.method().data, c.method().size), "compressed-tensors");
    EXPECT_EQ(std::string(c.ct_format().data, c.ct_format().size), "pack-quantized");
    EXPECT_EQ(c.ct_group_count(), 1u);
    EXPECT_FALSE(c.ct_groups_differ());
    EXPECT_FALSE(c.ct_invalid());
    EXPECT_EQ(c.ct_weights().num_bits, 4u);
    EXPECT_EQ(c.ct_weights().group_size, 16u);
    EXPECT_EQ(c.ct_weights().strategy, ws::MlxQuantConfig::CtStrategy::Group);
    EXPECT_FALSE(c.ct_weights().symmetric);
    EXPECT_FALSE(c.ct_weights().is_float);
  }
  struct Case {
    std::string groups;
    bool differ, invalid;
  };
  const std::string w4 = "{\"weights\": {\"num_bits\": 4, \"strategy\": \"group\", \"group_size\": 128}, \"targets\": [\"Linear\"]}";
  for (const Case& k : std::vector<Case>{
           {"{\"a\": " + w4 + ", \"b\": " + w4 + "}", false, false},
           {"{\"a\": " + w4 + ", \"b\": {\"weights\": {\"num_bits\": 8, \"strategy\": \"channel\"}}}", true, false},
           {"{\"a\": {\"weights\": {\"num_bits\": 16}}}", false, true},
           {"{\"a\": {\"weights\": {\"num_bits\": 4, \"group_size\": -1}}}", false, true},
           {"{\"a\": {\"weights\": {\"num_bits\": 4, \"symmetric\": \"yes\"}}}", false, true}}) {
    const std::string t = "{\"quantization_config\": {\"config_groups\": " + k.groups +
                          ", \"format\": \"pack-quantized\", \"quant_method\": \"compressed-tensors\"}}";
    ws::MlxQuantConfig c(arena, sizeof arena);
    ASSERT_EQ(c.feed(t.data(), t.size()), ws::Status::Ok) << t;
    ASSERT_EQ(c.finish(), ws::Status::Ok) << t;
    EXPECT_EQ(c.ct_groups_differ(), k.differ) << t;
    EXPECT_EQ(c.ct_invalid(), k.invalid) << t;
  }
}

// The decoded fixture's tensors under configs that state what is not decoded (or not valid): each
// refused with its status, the first tensor named (the header's first: a weight_shape) and the
// detail saying what.
TEST(CtHub, ConfigsNotDecodedAreRefusedByName) {
  const Bytes model = read_file(kHub + "/ct-w4a16-group/model.safetensors");
  const Bytes base = read_file(kHub + "/ct-w4a16-group/config.json");
  const std::string cfg(base.begin(), base.end());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string c = cfg;
    const size_t at = c.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) c.replace(at, from.size(), to);
    return c;
  };
  struct Case {
    std::string config;
    ws::Status status;
    std::string detail;
  };
  auto sub = [](std::string c, const std::string& from, const std::string& to) {
    const size_t at = c.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) c.replace(at, from.size(), to);
    return c;
  };
  const std::string groups = "\"config_groups\": {";
  const std::string f8_group = "\"group_1\": {\"format\": \"float-quantized\", \"targets\": [\"re:.*q_proj$\"], "
                               "\"weights\": {\"num_bits\": 8, \"type\": \"float\", \"strategy\": \"channel\"}}, ";
  const std::vector<Case> cases = {
      {with("\"num_bits\": 4", "\"num_bits\": 3").replace(cfg.find("\"strategy\": \"group\""), 19, "\"strategy\": \"channel\""),
       ws::Status::QuantizationUnsupported,
       "compressed-tensors num_bits not dividing 32 with channel or tensor scales (config.json)"},
      {with("\"group_size\": 16", "\"group_size\": 4"), ws::Status::QuantizationUnsupported,
       "compressed-tensors group_size not a multiple of the values in an int32 word"},
      {with("\"strategy\": \"group\"", "\"strategy\": \"block\""), ws::Status::QuantizationUnsupported,
       "compressed-tensors pack-quantized strategy other than group, channel or tensor (config.json)"},
      {with("\"type\": \"int\"", "\"type\": \"float\""), ws::Status::QuantizationUnsupported,
       "compressed-tensors pack-quantized of type float (config.json)"},
      // A group stored in another format than the section's; a mixed-precision config whose
      // groups are of two formats (one format a model is decoded).
      {with(groups, groups + f8_group), ws::Status::QuantizationUnsupported,
       "compressed-tensors config group format disagreeing with the section's format (config.json)"},
      {sub(sub(with(groups, groups + f8_group), "\"input_activations\"", "\"format\": \"pack-quantized\", \"input_activations\""),
           "\"format\": \"pack-quantized\",\n", "\"format\": \"mixed-precision\",\n"),
       ws::Status::QuantizationUnsupported,
       "compressed-tensors config_groups of formats float-quantized and pack-quantized (config.json; one format a model is "
       "decoded)"},
      // nvfp4-pack-quantized is decoded (compressed_tensors_fp4.cpp): over int weights arguments, refused by name.
      {with("\"format\": \"pack-quantized\"", "\"format\": \"nvfp4-pack-quantized\""), ws::Status::QuantizationUnsupported,
       "compressed-tensors nvfp4-pack-quantized weights other than 4-bit float (config.json)"},
      {with("\"format\": \"pack-quantized\"", "\"format\": \"mixed-precision\""), ws::Status::QuantizationUnsupported,
       "compressed-tensors format mixed-precision (config.json quantization_config.format)"},
      {with("\"num_bits\": 4", "\"num_bits\": 16"), ws::Status::ConfigInvalidQuantization,
       "config_groups weights (config.json): num_bits, group_size, strategy or symmetric of the wrong type"},
      {with("\"group_size\": 16", "\"group_size\": null"), ws::Status::ConfigInvalidQuantization,
       "config_groups weights (config.json): num_bits, or group_size for the group strategy, not stated"},
  };
  for (const Case& c : cases) {
    std::map<std::string, Bytes> files = {{"model.safetensors", model},
                                          {"config.json", Bytes(c.config.begin(), c.config.end())}};
    for (Feed feed : {Feed::Whole, Feed::OneByte}) {
      HostOptions o;
      o.feed = feed;
      const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::Auto, "model.safetensors", o);
      EXPECT_EQ(r.code, c.status) << c.detail << ": " << r.verdict();
      EXPECT_EQ(r.detail, c.detail);
      // The weight's own refusal (a group smaller than a word) is at its packed tensor.
      const bool per_weight = c.detail.find("int32 word") != std::string::npos;
      EXPECT_EQ(r.tensor, L + (per_weight ? "mlp.down_proj.weight_packed" : "mlp.down_proj.weight_shape")) << c.detail;
      EXPECT_FALSE(r.ready);
    }
  }
}

}  // namespace

namespace {

// A mixed-precision config (hub/ct-mixed-precision: two config groups of one format, their targets
// `re:` regexes): each module decoded with its own group's arguments, the scheme of the target that
// matches it (compressed-tensors quantization/lifecycle/apply.py apply_quantization_config) —
// down_proj 4-bit asymmetric in groups of 16, q_proj 8-bit symmetric per channel.
TEST(CtHub, MixedPrecisionDecodesEachModuleWithItsGroup) {
  const Bytes file = read_file(kHub + "/ct-mixed-precision/model.safetensors");
  const std::string d = L + "mlp.down_proj", q = L + "self_attn.q_proj";
  std::map<std::string, std::vector<float>> expect;
  expect[d + ".weight"] = ct_values(stored(file, d + ".weight_packed"), stored(file, d + ".weight_scale"),
                                    stored(file, d + ".weight_zero_point"), 8, 32, 4, 2);
  expect[q + ".weight"] = ct_values(stored(file, q + ".weight_packed"), stored(file, q + ".weight_scale"), Bytes(), 8, 32, 8, 1);
  for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 19;
        o.out_size = feed == Feed::Random ? 128 : 1 << 16;
        const LoadResult r = load("ct-mixed-precision", o);
        const std::string what = std::string(out == ws::OutType::F16 ? "f16" : "f32") + " feed " +
                                 std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(r.weight_names.size(), 4u) << what;
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
        }
      }
}

}  // namespace

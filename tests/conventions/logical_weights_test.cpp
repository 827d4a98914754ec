// Logical weights over the MLX and Ollama fixtures: grouping, params, every weight dequantized and
// compared with values computed here from the packed ints and scales; malformed variants; load
// plans measured against a real sequential and seekable stream; GPU layouts.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "conv_test_util_oracle.h"
#include "convention_fixtures.h"
#include "quant_oracle.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"
#include "weightstream/reader.h"

namespace {

using convtest::Parsed;
using convtest::Split;
using ws::Status;
using wsoracle::f32;

// The file streamed in pieces; a Reader error fails the test.
void parse(const std::vector<uint8_t>& file, Split split, Parsed* p) {
  convtest::parse(file, split, 7, false, p);
  if (p->status != Status::Ok) FAIL() << ws::status_name(p->status);
}

// Values of weight `w` computed from its pieces' bytes (one file: table 0), independently of lib/.
std::vector<float> expected(const ws::LogicalModel& m, const ws::LogicalWeight& w,
                            const std::vector<std::vector<uint8_t>>& bytes) {
  return convtest::oracle_values(w, convtest::Bytes{bytes}, m.tensor(w.ref(ws::PieceRole::Packed)).dtype());
}

std::vector<float> decode(const ws::LogicalWeight& w, const std::vector<std::vector<uint8_t>>& bytes) {
  ws::DequantSpec s = w.spec();
  if (w.ref(ws::PieceRole::Scales).present()) s.scales = bytes[w.ref(ws::PieceRole::Scales).index].data();
  if (w.ref(ws::PieceRole::Biases).present()) s.biases = bytes[w.ref(ws::PieceRole::Biases).index].data();
  if (w.ref(ws::PieceRole::GlobalScale).present()) {
    s.has_global_scale = true;
    s.global_scale = f32(bytes[w.ref(ws::PieceRole::GlobalScale).index].data());
  }
  const auto& in = bytes[w.ref(ws::PieceRole::Packed).index];
  std::vector<float> out(w.elements);
  ws::Error err;
  EXPECT_EQ(ws::dequantize(s, in.data(), in.size(), out.data(), out.size() * 4, &err), Status::Ok)
      << ws::status_name(err.code);
  return out;
}

alignas(8) uint8_t g_cfg_arena[8192];

TEST(Mlx, LogicalWeightsDequantizeEverySplit) {
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  std::vector<uint8_t> file = samplegen::serialize_raw(f.tensors, f.data_order, {{"format", "mlx"}}, false);
  for (Split split : convtest::kSplits) {
    ws::MlxQuantConfig cfg(g_cfg_arena, sizeof g_cfg_arena);
    ASSERT_EQ(convtest::feed_all(cfg, f.config_json, split), Status::Ok);
    Parsed p;
    parse(file, split, &p);
    ws::LogicalWeight storage[16];
    ws::LogicalModel m(storage, 16);
    m.add_table(&p.reader->tensors(), p.reader->data_start());
    ASSERT_EQ(m.build_mlx(&cfg), Status::Ok) << ws::status_name(m.error().code);
    ASSERT_EQ(m.weight_count(), 6u);  // 4 quantized + q_proj.bias + norm
    const char* q = "model.layers.0.self_attn.q_proj.weight";
    const ws::LogicalWeight& wq = m.weight(m.find(q, strlen(q)));
    EXPECT_EQ(wq.params.bits, 3u);
    EXPECT_EQ(wq.params.group, 32u);
    EXPECT_EQ(wq.scale_dtype, ws::DType::F16);
    EXPECT_EQ(wq.shape[1], 64u);
    const char* e = "model.layers.0.mlp.experts.gate_proj.weight";
    const ws::LogicalWeight& we = m.weight(m.find(e, strlen(e)));
    EXPECT_EQ(we.rank, 3u);
    EXPECT_EQ(we.shape[0], 2u);
    EXPECT_EQ(we.shape[2], 64u);
    EXPECT_EQ(we.elements, 256u);
    const char* u = "model.layers.0.mlp.up_proj.weight";
    EXPECT_EQ(m.weight(m.find(u, strlen(u))).params.mode, ws::QuantMode::Mxfp4);
    const char* b = "model.layers.0.self_attn.q_proj.bias";
    EXPECT_EQ(m.weight(m.find(b, strlen(b))).params.mode, ws::QuantMode::None);
    EXPECT_EQ(m.weight(m.find(b, strlen(b))).format, ws::QuantFormat::F32);
    for (uint32_t i = 0; i < m.weight_count(); ++i) {
      const ws::LogicalWeight& w = m.weight(i);
      if (w.params.mode == ws::QuantMode::None) continue;
      std::vector<float> want = expected(m, w, p.bytes), got = decode(w, p.bytes);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << w.name.data << " " << k;
    }
  }
}

TEST(Mlx, ParamsFromShapesWhenUnambiguous) {
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  Parsed p;
  parse(samplegen::serialize_raw(f.tensors, f.data_order, {}, false), Split::Whole, &p);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  // q_proj (6 words, 2 scales per row: 32x3) and up_proj (U8 scales: mxfp4) are derivable;
  // down_proj (8 words, 2 scales: 32x4 or 64x2) is not.
  EXPECT_EQ(m.build_mlx(nullptr), Status::ConventionUnknownParams);
  EXPECT_STREQ(std::string(m.error().tensor_name, m.error().tensor_name_size).c_str(),
               "model.layers.0.mlp.down_proj.weight");
}

// Builds the MLX fixture with `edit` applied and returns the model's verdict.
template <class Edit>
ws::Error mlx_error(Edit edit, const std::string& config, std::vector<uint8_t>* file_out) {
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  edit(&f);
  *file_out = samplegen::serialize_raw(f.tensors, f.data_order, {}, false);
  ws::MlxQuantConfig cfg(g_cfg_arena, sizeof g_cfg_arena);
  EXPECT_EQ(convtest::feed_all(cfg, config.empty() ? f.config_json : config, Split::Whole), Status::Ok);
  Parsed p;
  parse(*file_out, Split::Whole, &p);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  m.build_mlx(&cfg);
  ws::Error e = m.error();
  static std::string name;
  name.assign(e.tensor_name ? e.tensor_name : "", e.tensor_name_size);
  e.tensor_name = name.c_str();
  return e;
}

uint64_t entry_of(const std::vector<uint8_t>& file, const std::string& name) {
  std::string s(file.begin(), file.end());
  return s.find("\"" + name + "\"");
}

void drop(samplegen::MlxFixture* f, const std::string& name) {
  for (size_t i = 0; i < f->tensors.size(); ++i) {
    if (f->tensors[i].name != name) continue;
    f->tensors.erase(f->tensors.begin() + i);
    std::vector<size_t> order;
    for (size_t j : f->data_order)
      if (j != i) order.push_back(j > i ? j - 1 : j);
    f->data_order = order;
    return;
  }
}

TEST(Mlx, MalformedVariants) {
  const std::string L = "model.layers.0.";
  std::vector<uint8_t> file;
  ws::Error e = mlx_error([&](samplegen::MlxFixture* f) { drop(f, L + "mlp.down_proj.biases"); }, "", &file);
  EXPECT_EQ(e.code, Status::ConventionMissingCompanion);
  EXPECT_STREQ(e.tensor_name, (L + "mlp.down_proj.weight").c_str());
  EXPECT_EQ(e.offset, entry_of(file, L + "mlp.down_proj.weight"));

  e = mlx_error([&](samplegen::MlxFixture* f) { drop(f, L + "mlp.down_proj.scales"); }, "", &file);
  EXPECT_EQ(e.code, Status::ConventionOrphanCompanion);
  EXPECT_STREQ(e.tensor_name, (L + "mlp.down_proj.biases").c_str());
  EXPECT_EQ(e.offset, entry_of(file, L + "mlp.down_proj.biases"));

  e = mlx_error([&](samplegen::MlxFixture* f) {
        for (auto& t : f->tensors)
          if (t.name == L + "mlp.down_proj.scales") {
            t.shape = {2, 4};
          }
      }, "", &file);
  EXPECT_EQ(e.code, Status::ConventionCompanionShape);
  EXPECT_STREQ(e.tensor_name, (L + "mlp.down_proj.weight").c_str());
  EXPECT_EQ(e.offset, entry_of(file, L + "mlp.down_proj.scales"));

  const std::string group128 =
      "{\"quantization\":{\"group_size\":32,\"bits\":4,\"model.layers.0.self_attn.q_proj\":"
      "{\"group_size\":128,\"bits\":3},\"model.layers.0.mlp.up_proj\":{\"mode\":\"mxfp4\"}}}";
  e = mlx_error([](samplegen::MlxFixture*) {}, group128, &file);
  EXPECT_EQ(e.code, Status::ConventionGroupNotDividing);
  EXPECT_STREQ(e.tensor_name, (L + "self_attn.q_proj.weight").c_str());

  const std::string bits7 = "{\"quantization\":{\"group_size\":32,\"bits\":7}}";
  e = mlx_error([](samplegen::MlxFixture*) {}, bits7, &file);
  EXPECT_EQ(e.code, Status::ConventionBitsNotAllowed);
  EXPECT_STREQ(e.tensor_name, (L + "self_attn.q_proj.weight").c_str());  // first in file order
}

TEST(Ollama, MixedBlobEverySplit) {
  samplegen::OllamaFixture f = samplegen::ollama_fixture();
  std::vector<size_t> order;
  for (size_t i = 0; i < f.tensors.size(); ++i) order.push_back(i);
  std::vector<uint8_t> file = samplegen::serialize_raw(f.tensors, order, f.metadata, true);
  for (Split split : convtest::kSplits) {
    Parsed p;
    parse(file, split, &p);
    ws::LogicalWeight storage[16];
    ws::LogicalModel m(storage, 16);
    m.add_table(&p.reader->tensors(), p.reader->data_start());
    ASSERT_EQ(m.build_ollama(), Status::Ok) << ws::status_name(m.error().code);
    ASSERT_EQ(m.weight_count(), 5u);  // a, b, c, lin.bias, norm.weight
    const ws::LogicalWeight& a = m.weight(m.find("a.weight", 8));
    EXPECT_EQ(a.params.mode, ws::QuantMode::Affine);
    EXPECT_EQ(a.params.group, 32u);  // the explicit group_size, not int4's default 64
    EXPECT_EQ(m.weight(m.find("b.weight", 8)).params.mode, ws::QuantMode::Mxfp8);
    const ws::LogicalWeight& c = m.weight(m.find("c.weight", 8));
    EXPECT_EQ(c.params.mode, ws::QuantMode::Nvfp4);
    EXPECT_TRUE(c.ref(ws::PieceRole::GlobalScale).present());
    EXPECT_EQ(m.weight(m.find("lin.bias", 8)).params.mode, ws::QuantMode::None);
    for (uint32_t i = 0; i < m.weight_count(); ++i) {
      const ws::LogicalWeight& w = m.weight(i);
      if (w.params.mode == ws::QuantMode::None) continue;
      std::vector<float> want = expected(m, w, p.bytes), got = decode(w, p.bytes);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << w.name.data << " " << k;
    }
  }
}

TEST(Ollama, UnknownQuantType) {
  samplegen::OllamaFixture f = samplegen::ollama_fixture();
  f.metadata["b.weight.quant_type"] = "int3";
  std::vector<size_t> order;
  for (size_t i = 0; i < f.tensors.size(); ++i) order.push_back(i);
  std::vector<uint8_t> file = samplegen::serialize_raw(f.tensors, order, f.metadata, true);
  Parsed p;
  parse(file, Split::Whole, &p);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  EXPECT_EQ(m.build_ollama(), Status::ConventionUnknownQuantType);
  EXPECT_EQ(m.error().offset, entry_of(file, "b.weight"));
}

// The convention is what the writer's metadata says, never guessed from tensor names.
TEST(ConventionSignal, MetadataDecides) {
  const samplegen::MlxFixture mlx = samplegen::mlx_fixture();
  const samplegen::OllamaFixture ollama = samplegen::ollama_fixture();
  struct Case {
    std::map<std::string, std::string> metadata;
    ws::Convention want;
  };
  const Case cases[] = {
      {{{"format", "mlx"}}, ws::Convention::Mlx},
      {{{"format", "pt"}}, ws::Convention::Plain},
      {{}, ws::Convention::Plain},  // MLX-looking names alone are no signal
      {{{"quant_type", "Q4_0"}}, ws::Convention::Ollama},
      {{{"b.weight.quant_type", "Q8_0"}, {"format", "mlx"}}, ws::Convention::Ollama},
      {{{"my_quant_type", "x"}}, ws::Convention::Plain},  // only the key or a `.`-separated suffix
  };
  for (const Case& c : cases) {
    Parsed p;
    parse(samplegen::serialize_raw(mlx.tensors, mlx.data_order, c.metadata, false), Split::Whole, &p);
    EXPECT_EQ(ws::convention_signal(p.reader->tensors()), c.want) << c.metadata.size();
  }
  Parsed p;
  std::vector<size_t> order;
  for (size_t i = 0; i < ollama.tensors.size(); ++i) order.push_back(i);
  parse(samplegen::serialize_raw(ollama.tensors, order, ollama.metadata, true), Split::Whole, &p);
  EXPECT_EQ(ws::convention_signal(p.reader->tensors()), ws::Convention::Ollama);
}

// Streams the MLX file sequentially, holding exactly what decoding needs, and measures the peak.
TEST(LoadPlan, SequentialAndSeekableScratchAsPlanned) {
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  std::vector<uint8_t> file = samplegen::serialize_raw(f.tensors, f.data_order, {}, false);
  ws::MlxQuantConfig cfg(g_cfg_arena, sizeof g_cfg_arena);
  ASSERT_EQ(convtest::feed_all(cfg, f.config_json, Split::Whole), Status::Ok);
  Parsed p;
  parse(file, Split::Whole, &p);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  ASSERT_EQ(m.build_mlx(&cfg), Status::Ok);
  const uint64_t chunk = 16;
  ws::ModelPlan plan = ws::plan_model(m, chunk);
  // Every packed weight precedes its scales here: each must be buffered.
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    ws::LoadPlan lp = ws::plan_weight(m, i, chunk);
    if (lp.piece_count > 1) {
      EXPECT_TRUE(lp.packed_before_companion);
      EXPECT_EQ(lp.schedule[lp.schedule_count - 1].role, ws::PieceRole::Packed);
    }
  }
  // Sequential: hold a piece unless it is a packed piece whose companions are all in.
  std::map<uint32_t, uint64_t> held;  // weight -> bytes held
  std::map<uint32_t, uint32_t> arrived;  // weight -> whole pieces in
  uint64_t now = 0, peak = 0;
  for (uint32_t t = 0; t < m.table(0).count(); ++t) {
    for (uint32_t wi = 0; wi < m.weight_count(); ++wi) {
      const ws::LogicalWeight& w = m.weight(wi);
      uint32_t role = ws::kPieceRoles, pieces = 0;
      for (uint32_t r = 0; r < ws::kPieceRoles; ++r) {
        if (!w.piece[r].present()) continue;
        ++pieces;
        if (w.piece[r].index == t) role = r;
      }
      if (role == ws::kPieceRoles) continue;
      if (pieces == 1) break;  // a plain tensor streams through
      const uint64_t size = p.bytes[t].size();
      const bool last = ++arrived[wi] == pieces;
      const bool streams = role == 0 && last;  // packed, every companion already in
      for (uint64_t b = 0; b < size; b += 5) {  // bytes arrive 5 at a time
        const uint64_t n = size - b < 5 ? size - b : 5;
        if (!streams) {
          held[wi] += n;
          now += n;
        }
        if (now > peak) peak = now;
      }
      if (last) {
        now -= held[wi];
        held[wi] = 0;
      }
      break;
    }
  }
  EXPECT_EQ(peak, plan.sequential_peak);
  // All four packed weights (48 + 64 + 128 + 128) wait, then down/q/up scales (16 + 8 + 4)
  // arrive before up_proj completes and is released.
  EXPECT_EQ(plan.sequential_peak, 396u);
  // Seekable: companions by range, then the packed piece in chunks.
  EXPECT_EQ(convtest::measured_seekable_peak(m, chunk), plan.seekable_peak);
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LoadPlan lp = ws::plan_weight(m, i, chunk);
    if (lp.piece_count > 1) {
      EXPECT_LE(lp.seekable_scratch, lp.companion_bytes + chunk);
    }
  }
}

TEST(GpuLayout, SingleAndFused) {
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  ws::MlxQuantConfig cfg(g_cfg_arena, sizeof g_cfg_arena);
  ASSERT_EQ(convtest::feed_all(cfg, f.config_json, Split::Whole), Status::Ok);
  Parsed p;
  parse(samplegen::serialize_raw(f.tensors, f.data_order, {}, false), Split::Whole, &p);
  ws::LogicalWeight storage[16];
  ws::LogicalModel m(storage, 16);
  m.add_table(&p.reader->tensors(), p.reader->data_start());
  ASSERT_EQ(m.build_mlx(&cfg), Status::Ok);
  const char* q = "model.layers.0.self_attn.q_proj.weight";  // 48 packed, 8 scales, 8 biases
  const char* d = "model.layers.0.mlp.down_proj.weight";     // 128 packed, 16 scales, 16 biases
  uint32_t ws_[2] = {m.find(q, strlen(q)), m.find(d, strlen(d))};
  ws::GpuLayout g = ws::gpu_layout(m, ws_[0], 4);
  EXPECT_EQ(g.offset[0], 0u);
  EXPECT_EQ(g.offset[1], 48u);
  EXPECT_EQ(g.offset[2], 56u);
  EXPECT_EQ(g.total, 64u);
  ws::GpuLayout fused[2];
  EXPECT_EQ(ws::gpu_fused_layout(m, ws_, 2, 256, fused), 256u * 6);
  EXPECT_EQ(fused[0].offset[0], 0u);
  EXPECT_EQ(fused[1].offset[0], 256u);
  EXPECT_EQ(fused[0].offset[1], 512u);
  EXPECT_EQ(fused[1].offset[1], 768u);
  EXPECT_EQ(fused[0].offset[2], 1024u);
  EXPECT_EQ(fused[1].offset[2], 1280u);
  EXPECT_EQ(fused[1].dest(ws::PieceRole::Scales, 3), 771u);
}

}  // namespace

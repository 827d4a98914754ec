// UQFF (FORMATS.md §4) over the sample generator's directory (two shards + residual): every layer
// type grouped, resolved from its streamed scalars and dequantized, compared with values computed
// here from the raw ints and scales (not through lib's kernels); every malformed variant with its
// exact status, tensor name, offset and detail; whole / 1-byte / random chunkings giving identical
// results; the load plan's sequential peak measured on the real stream; the name hash against the
// linear fallback.
#include <gtest/gtest.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "conv_test_util.h"
#include "conv_test_util_uqff.h"
#include "quant_oracle.h"
#include "uqff_fixtures.h"
#include "weightstream/conventions.h"
#include "weightstream/dequant.h"
#include "weightstream/load_plan.h"
#include "weightstream/uqff.h"

namespace {

using convtest::Split;
using ws::PieceRole;
using ws::Status;
using uqfftest::FileStream;

const std::string L = "model.layers.0.";

std::vector<FileStream> streams_of(const samplegen::UqffFixture& f) {
  std::vector<FileStream> out(f.files.size());
  for (size_t i = 0; i < f.files.size(); ++i) out[i].bytes = samplegen::uqff_file_bytes(f.files[i]);
  return out;
}

// --- the oracle: formulas of FORMATS.md §2, §4, §6, written out here ---
using wsoracle::bf16;
using wsoracle::e4m3;
using wsoracle::f16;
using wsoracle::f32;
using wsoracle::fp4;
using wsoracle::unpack;

std::vector<float> oracle_q4_0(const std::vector<uint8_t>& b) {
  std::vector<float> y;
  for (size_t o = 0; o < b.size(); o += 18) {
    const float d = f16(&b[o]);
    float out[32];
    for (int j = 0; j < 16; ++j) {
      out[j] = float(int(b[o + 2 + j] & 15) - 8) * d;
      out[j + 16] = float(int(b[o + 2 + j] >> 4) - 8) * d;
    }
    y.insert(y.end(), out, out + 32);
  }
  return y;
}
std::vector<float> oracle_q8_0(const std::vector<uint8_t>& b) {
  std::vector<float> y;
  for (size_t o = 0; o < b.size(); o += 34)
    for (int j = 0; j < 32; ++j) y.push_back(float(int8_t(b[o + 2 + j])) * f16(&b[o]));
  return y;
}
std::vector<float> oracle_q4_k(const std::vector<uint8_t>& b) {
  std::vector<float> y;
  for (size_t o = 0; o < b.size(); o += 144) {
    const float d = f16(&b[o]), dmin = f16(&b[o + 2]);
    const uint8_t* q = &b[o + 4];
    const uint8_t* qs = &b[o + 16];
    auto scale_min = [&](int j, int* sc, int* m) {
      if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
      } else {
        *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
      }
    };
    for (int c = 0; c < 4; ++c) {
      int sc, m;
      scale_min(2 * c, &sc, &m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      scale_min(2 * c + 1, &sc, &m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) y.push_back(d1 * float(qs[32 * c + l] & 15) - m1);
      for (int l = 0; l < 32; ++l) y.push_back(d2 * float(qs[32 * c + l] >> 4) - m2);
    }
  }
  return y;
}
std::vector<float> oracle_f8q8(const std::vector<uint8_t>& b) {
  std::vector<float> y;
  for (size_t o = 0; o < b.size(); o += 33) {
    const float d = e4m3(b[o]) / 448.0f;
    for (int j = 0; j < 32; ++j) y.push_back(float(int8_t(b[o + 1 + j])) * d);
  }
  return y;
}

const std::vector<uint8_t>& piece(std::vector<FileStream>& fs, const ws::LogicalWeight& w, PieceRole r) {
  const ws::TensorRef& ref = w.ref(r);
  return fs[ref.table].tensor_bytes[ref.index];
}

std::vector<float> oracle(std::vector<FileStream>& fs, const ws::LogicalWeight& w) {
  const std::vector<uint8_t>& p = piece(fs, w, PieceRole::Packed);
  std::vector<float> y;
  if (w.convention != ws::Convention::Uqff || w.uqff_type == uint8_t(ws::UqffType::Unquant)) {
    const size_t n = w.elements, step = p.size() / (n ? n : 1);
    for (size_t i = 0; i < n; ++i)
      y.push_back(step == 4 ? f32(&p[4 * i]) : w.format == ws::QuantFormat::BF16 ? bf16(&p[2 * i]) : f16(&p[2 * i]));
    return y;
  }
  switch (ws::UqffType(w.uqff_type)) {
    case ws::UqffType::Gguf: {
      const std::vector<uint8_t>& t = piece(fs, w, PieceRole::GgmlType);
      if (t[0] == 2) return oracle_q4_0(p);
      if (t[0] == 8) return oracle_q8_0(p);
      if (t[0] == 12) return oracle_q4_k(p);
      ADD_FAILURE() << "ggml type " << int(t[0]);
      return y;
    }
    case ws::UqffType::F8Q8: return oracle_f8q8(p);
    case ws::UqffType::Afq: {
      const uint32_t bits = piece(fs, w, PieceRole::Bits)[0], group = piece(fs, w, PieceRole::GroupSize)[0];
      const std::vector<uint8_t>& sc = piece(fs, w, PieceRole::Scales);
      const std::vector<uint8_t>& bi = piece(fs, w, PieceRole::Biases);
      const bool is_bf16 = fs[w.ref(PieceRole::Scales).table].reader->tensor(w.ref(PieceRole::Scales).index).dtype() ==
                           ws::DType::BF16;
      const uint64_t k = w.shape[w.rank - 1], rows = w.elements / k;
      for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t i = 0; i < k; ++i) {
          const uint64_t g = r * (k / group) + i / group;
          const float s = is_bf16 ? bf16(&sc[2 * g]) : f16(&sc[2 * g]);
          const float b = is_bf16 ? bf16(&bi[2 * g]) : f16(&bi[2 * g]);
          y.push_back(s * float(unpack(&p[r * k * bits / 8], i, bits)) + b);
        }
      return y;
    }
    case ws::UqffType::Mxfp4: {
      const std::vector<uint8_t>& sc = piece(fs, w, PieceRole::Scales);
      for (uint64_t i = 0; i < w.elements; ++i) {
        const uint32_t nib = (p[i / 2] >> (4 * (i % 2))) & 15;
        y.push_back(fp4(nib) * ldexpf(1.0f, int(sc[i / 32]) - 127));
      }
      return y;
    }
    default: ADD_FAILURE() << "type " << int(w.uqff_type);
  }
  return y;
}

// lib's values, the stored bytes fed to the Dequantizer in pieces of `split`.
std::vector<float> decode(std::vector<FileStream>& fs, const ws::LogicalWeight& w, Split split) {
  ws::DequantSpec s = w.spec();
  if (w.ref(PieceRole::Scales).present()) s.scales = piece(fs, w, PieceRole::Scales).data();
  if (w.ref(PieceRole::Biases).present()) s.biases = piece(fs, w, PieceRole::Biases).data();
  const std::vector<uint8_t>& in = piece(fs, w, PieceRole::Packed);
  ws::Dequantizer d;
  EXPECT_EQ(d.init(s), Status::Ok) << w.name.data;
  std::vector<float> out(w.elements);
  std::vector<uint8_t> buf(d.block_output_bytes() * 2 + 1024);
  size_t at = 0, written = 0;
  for (size_t n : convtest::pieces(in.size(), split, 5)) {
    size_t used = 0;
    while (used < n) {
      size_t in_used = 0, out_bytes = 0;
      if (d.decode(in.data() + at + used, n - used, &in_used, buf.data(), buf.size(), &out_bytes) != Status::Ok) {
        ADD_FAILURE() << ws::status_name(d.error().code);
        return out;
      }
      memcpy(reinterpret_cast<uint8_t*>(out.data()) + written, buf.data(), out_bytes);
      written += out_bytes;
      used += in_used;
      if (in_used == 0 && out_bytes == 0) break;
    }
    at += n;
  }
  EXPECT_TRUE(d.done()) << w.name.data;
  return out;
}

uint32_t weight(const ws::LogicalModel& m, const std::string& name) { return m.find(name.data(), name.size()); }

TEST(Uqff, EveryLayerDequantizesInEverySplit) {
  const samplegen::UqffFixture fx = samplegen::uqff_fixture();
  std::vector<std::vector<float>> first;
  for (Split split : convtest::kSplits) {
    std::vector<FileStream> fs = streams_of(fx);
    std::vector<ws::LogicalWeight> storage(32);
    ws::LogicalModel m(storage.data(), 32);
    uqfftest::Outcome o = uqfftest::read_uqff(&fs, split, &m);
    ASSERT_EQ(o.status, Status::Ok) << ws::status_name(o.status) << " " << o.name << " " << o.detail;
    EXPECT_EQ(m.uqff_version(0), 1u);
    EXPECT_EQ(m.uqff_version(1), 2u);
    EXPECT_EQ(m.uqff_version(2), 0u);
    // 8 layers, o_proj.bias, 3 residual tensors; the version tensors are not weights.
    ASSERT_EQ(m.weight_count(), 12u);
    struct Want {
      std::string name;
      ws::UqffType type;
      ws::QuantFormat format;
      uint64_t rows, cols;
      uint32_t bits;
    };
    const Want wants[] = {
        {L + "self_attn.q_proj.weight", ws::UqffType::Gguf, ws::QuantFormat::Q4_0, 4, 64, 0},
        {L + "self_attn.k_proj.weight", ws::UqffType::Gguf, ws::QuantFormat::Q8_0, 2, 64, 0},
        {L + "self_attn.v_proj.weight", ws::UqffType::Gguf, ws::QuantFormat::Q4_K, 2, 256, 0},
        {L + "self_attn.o_proj.weight", ws::UqffType::Unquant, ws::QuantFormat::BF16, 4, 8, 0},
        {L + "mlp.gate_proj.weight", ws::UqffType::Afq, ws::QuantFormat::MlxAffine, 2, 64, 4},
        {L + "mlp.up_proj.weight", ws::UqffType::Afq, ws::QuantFormat::MlxAffine, 2, 64, 3},
        {L + "mlp.down_proj.weight", ws::UqffType::F8Q8, ws::QuantFormat::F8Q8, 2, 64, 0},
        {L + "mlp.experts.gate_up_proj.weight", ws::UqffType::Mxfp4, ws::QuantFormat::MlxMxfp4, 2, 64, 4},
    };
    for (const Want& want : wants) {
      const uint32_t i = weight(m, want.name);
      ASSERT_NE(i, ws::kNoTensor) << want.name;
      const ws::LogicalWeight& w = m.weight(i);
      EXPECT_EQ(w.convention, ws::Convention::Uqff) << want.name;
      EXPECT_EQ(w.uqff_type, uint8_t(want.type)) << want.name;
      EXPECT_EQ(w.format, want.format) << want.name;
      EXPECT_TRUE(w.decodable) << want.name;
      ASSERT_EQ(w.rank, 2u) << want.name;
      EXPECT_EQ(w.shape[0], want.rows) << want.name;
      EXPECT_EQ(w.shape[1], want.cols) << want.name;
      EXPECT_EQ(w.elements, want.rows * want.cols) << want.name;
      EXPECT_EQ(w.params.bits, want.bits) << want.name;
    }
    EXPECT_EQ(m.weight(weight(m, L + "mlp.gate_proj.weight")).params.group, 32u);
    EXPECT_EQ(m.weight(weight(m, L + "mlp.up_proj.weight")).scale_dtype, ws::DType::F16);
    EXPECT_EQ(m.weight(weight(m, L + "self_attn.o_proj.bias")).convention, ws::Convention::Plain);
    EXPECT_EQ(m.weight(weight(m, "model.norm.weight")).convention, ws::Convention::Plain);
    EXPECT_EQ(weight(m, "uqff.version.major"), ws::kNoTensor);
    std::vector<std::vector<float>> got_all;
    for (uint32_t i = 0; i < m.weight_count(); ++i) {
      const ws::LogicalWeight& w = m.weight(i);
      const std::vector<float> want = oracle(fs, w);
      ASSERT_EQ(want.size(), w.elements) << w.name.data;
      for (Split dsplit : {Split::Whole, Split::OneByte}) {
        const std::vector<float> got = decode(fs, w, dsplit);
        ASSERT_EQ(got.size(), want.size());
        for (size_t k = 0; k < got.size(); ++k)
          ASSERT_EQ(memcmp(&got[k], &want[k], 4), 0)
              << std::string(w.name.data, w.name.size) << " [" << k << "] " << got[k] << " vs " << want[k];
        got_all.push_back(got);
      }
    }
    if (first.empty()) first = got_all;
    EXPECT_EQ(got_all, first) << "values differ between chunkings";
  }
}

TEST(Uqff, MalformedVariantsExactStatusNameOffset) {
  for (const samplegen::UqffVariant& v : samplegen::uqff_malformed_variants()) {
    Status expected;
    ASSERT_TRUE(ws::status_from_name(v.status.c_str(), &expected)) << v.status;
    const std::string at = v.at.empty() ? v.tensor : v.at;
    const samplegen::UqffFile& file = v.fixture.files[v.file];
    uint64_t offset = v.data_offset ? samplegen::uqff_data_offset(file, at) : samplegen::uqff_entry_offset(file, at);
    const bool absent = offset == ~0ull;  // the tensor is absent (a missing version tensor)
    if (absent) offset = 0;
    ws::Error first;
    for (Split split : convtest::kSplits) {
      std::vector<FileStream> fs = streams_of(v.fixture);
      std::vector<ws::LogicalWeight> storage(32);
      ws::LogicalModel m(storage.data(), 32);
      uqfftest::Outcome o = uqfftest::read_uqff(&fs, split, &m);
      EXPECT_EQ(o.status, expected) << v.name << ": " << ws::status_name(o.status) << " " << o.name;
      EXPECT_EQ(o.name, v.tensor) << v.name;
      EXPECT_EQ(o.error.offset, offset) << v.name;
      EXPECT_EQ(o.detail, v.detail) << v.name;
      // The file the offset is in: the variant's own (tables are added in the fixture's order).
      EXPECT_EQ(m.error_table(), absent ? ws::kNoTensor : v.file) << v.name;
      if (v.found >= 0) {
        EXPECT_EQ(o.error.found, uint64_t(v.found)) << v.name;
      }
      if (v.expected >= 0) {
        EXPECT_EQ(o.error.expected, uint64_t(v.expected)) << v.name;
      }
      if (split == Split::Whole) {
        first = o.error;
      } else {
        EXPECT_EQ(o.error.offset, first.offset) << v.name;
        EXPECT_EQ(o.error.found, first.found) << v.name;
      }
    }
  }
}

TEST(Uqff, VersionAndTagValuesReported) {
  for (const samplegen::UqffVariant& v : samplegen::uqff_malformed_variants()) {
    std::vector<FileStream> fs = streams_of(v.fixture);
    std::vector<ws::LogicalWeight> storage(32);
    ws::LogicalModel m(storage.data(), 32);
    uqfftest::Outcome o = uqfftest::read_uqff(&fs, Split::Whole, &m);
    if (v.name == "major-2") {
      EXPECT_EQ(o.error.found, 2u);
      EXPECT_EQ(o.error.expected, 1u);
    } else if (v.name == "minor-3") {
      EXPECT_EQ(o.error.found, 3u);
      EXPECT_EQ(o.error.expected, 2u);
    } else if (v.name == "tag-mismatch") {
      EXPECT_EQ(o.error.found, 4u);
      EXPECT_EQ(o.error.expected, 6u);
    } else if (v.name == "tag-7") {
      EXPECT_EQ(o.error.found, 7u);
    } else if (v.name == "gguf-size-mismatch") {
      EXPECT_EQ(o.error.found, 144u);     // 8 Q4_0 blocks stored
      EXPECT_EQ(o.error.expected, 216u);  // 4 x 96 values need 12
    }
  }
}

TEST(Uqff, ScalarsNotFedAreAUsageError) {
  const samplegen::UqffFixture fx = samplegen::uqff_fixture();
  std::vector<FileStream> fs = streams_of(fx);
  std::vector<ws::LogicalWeight> storage(32);
  ws::LogicalModel m(storage.data(), 32);
  for (FileStream& f : fs) {
    f.reader.reset(new ws::Reader(f.arena.data(), f.arena.size()));
    f.cuts = {f.bytes.size()};
    while (f.next().type != ws::EventType::HeaderReady) {
    }
    m.add_table(&f.reader->tensors(), f.reader->data_start());
  }
  ASSERT_EQ(m.build_uqff(), Status::Ok);
  EXPECT_TRUE(m.uqff_wants(0, m.uqff_version_ref(0).index));
  EXPECT_FALSE(m.uqff_wants(2, 0));  // residual tensors are not scalars
  EXPECT_EQ(m.resolve_uqff(), Status::UqffScalarNotFed);
  EXPECT_EQ(std::string(m.error().tensor_name, m.error().tensor_name_size), "uqff.version.major");
}

// The plan's sequential peak equals what the real stream held (measured while reading), and the
// quantized layers whose packed bytes precede their tag or scales are marked so.
TEST(Uqff, LoadPlanMatchesTheStream) {
  const samplegen::UqffFixture fx = samplegen::uqff_fixture();
  for (Split split : convtest::kSplits) {
    std::vector<FileStream> fs = streams_of(fx);
    std::vector<ws::LogicalWeight> storage(32);
    ws::LogicalModel m(storage.data(), 32);
    uqfftest::Outcome o = uqfftest::read_uqff(&fs, split, &m);
    ASSERT_EQ(o.status, Status::Ok);
    const uint64_t chunk = 16;
    ws::ModelPlan plan = ws::plan_model(m, chunk);
    EXPECT_EQ(o.measured_sequential_peak, plan.sequential_peak);
    EXPECT_GT(plan.sequential_peak, 0u);
    for (uint32_t i = 0; i < m.weight_count(); ++i) {
      const ws::LogicalWeight& w = m.weight(i);
      ws::LoadPlan lp = ws::plan_weight(m, i, chunk);
      if (w.convention != ws::Convention::Uqff) {
        EXPECT_EQ(lp.piece_count, 1u);
        continue;
      }
      // The reference writer orders U32 before floats before U8 and names within a dtype, so
      // every layer's packed piece comes before its U8 format tag.
      EXPECT_TRUE(lp.packed_before_companion) << w.name.data;
      EXPECT_EQ(lp.schedule[lp.schedule_count - 1].role, PieceRole::Packed);
      uint64_t companions = 0;
      for (uint32_t r = 1; r < ws::kPieceRoles; ++r)
        if (w.piece[r].present()) companions += m.tensor(w.piece[r]).byte_size();
      EXPECT_EQ(lp.companion_bytes, companions);
      const uint64_t packed = m.tensor(w.piece[0]).byte_size();
      EXPECT_EQ(lp.sequential_scratch, companions + packed);
      EXPECT_EQ(lp.seekable_scratch, companions + (packed < chunk ? packed : chunk));
    }
    // Seekable: each weight's schedule read range by range (companions whole, the packed piece in
    // chunks, decoded as it comes) never holds more than the plan's peak.
    EXPECT_EQ(convtest::measured_seekable_peak(m, chunk), plan.seekable_peak);
    EXPECT_LT(plan.seekable_peak, plan.sequential_peak);
    if (split == Split::Whole) printf("UQFF fixture, chunk %llu: sequential peak %llu bytes, seekable peak %llu bytes\n", (unsigned long long)chunk, (unsigned long long)plan.sequential_peak, (unsigned long long)plan.seekable_peak);
  }
}

// Lookups through caller slots, the inline table and the linear fallback give the same model.
TEST(Uqff, NameIndexModesAgree) {
  // A residual file with 600 tensors: more than the inline table indexes (kInlineSlots / 4).
  samplegen::UqffFixture fx = samplegen::uqff_fixture();
  for (int i = 0; i < 600; ++i)
    fx.files[2].tensors.push_back(samplegen::RawTensor{"extra." + std::to_string(i) + ".weight", "F32", {1}, {0, 0, 128, 63}});
  std::vector<std::string> names[2];
  for (int mode = 0; mode < 2; ++mode) {
    std::vector<FileStream> fs = streams_of(fx);
    for (FileStream& f : fs) f.arena.resize(1 << 18);
    std::vector<ws::LogicalWeight> storage(700);
    ws::LogicalModel m(storage.data(), 700);
    std::vector<uint32_t> slots(ws::LogicalModel::index_slots_for(700));
    if (mode == 1) m.set_index_slots(slots.data(), uint32_t(slots.size()));
    uqfftest::Outcome o = uqfftest::read_uqff(&fs, Split::Whole, &m);
    ASSERT_EQ(o.status, Status::Ok) << ws::status_name(o.status) << " " << o.name;
    ASSERT_EQ(m.weight_count(), 612u);
    for (uint32_t i = 0; i < m.weight_count(); ++i) {
      names[mode].push_back(std::string(m.weight(i).name.data, m.weight(i).name.size));
      EXPECT_EQ(m.find(m.weight(i).name.data, m.weight(i).name.size), i);
    }
  }
  EXPECT_EQ(names[0], names[1]);
  EXPECT_GE(ws::LogicalModel::index_slots_for(700), 2u * 1400u);
}

}  // namespace

namespace {

// Not a check: with WS_UQFF_SEED_DIR set, writes the fixture directory and every malformed
// variant as fuzz_uqff inputs (`u8 chunk seed, u8 2 = three files, u32 LE length + file, u32 LE
// length + file, last file`) — how fuzz/corpus/fuzz_uqff was made.
TEST(Uqff, WriteFuzzSeedsWhenAsked) {
  const char* dir = getenv("WS_UQFF_SEED_DIR");
  if (!dir) GTEST_SKIP() << "set WS_UQFF_SEED_DIR to write the fuzz_uqff seeds";
  auto write = [&](const std::string& name, const samplegen::UqffFixture& f, uint8_t seed) {
    std::vector<uint8_t> out = {seed, 2};
    for (size_t i = 0; i < f.files.size(); ++i) {
      const std::vector<uint8_t> b = samplegen::uqff_file_bytes(f.files[i]);
      if (i + 1 < f.files.size())
        for (int k = 0; k < 4; ++k) out.push_back(uint8_t(b.size() >> (8 * k)));
      out.insert(out.end(), b.begin(), b.end());
    }
    FILE* fp = fopen((std::string(dir) + "/" + name).c_str(), "wb");
    ASSERT_NE(fp, nullptr) << name;
    fwrite(out.data(), 1, out.size(), fp);
    fclose(fp);
  };
  write("good", samplegen::uqff_fixture(), 1);
  uint8_t seed = 2;
  for (const samplegen::UqffVariant& v : samplegen::uqff_malformed_variants()) write(v.name, v.fixture, seed++);
  // Issue #14: padded F8Q8 layers and the version in both shards, and their neighbours.
  write("good-f8q8", samplegen::uqff_f8q8_fixture(), seed++);
  for (const samplegen::UqffVariant& v : samplegen::uqff_f8q8_variants()) write(v.name, v.fixture, seed++);
}

}  // namespace

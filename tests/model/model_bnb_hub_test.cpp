// bitsandbytes checkpoints (issue #28): recognised by config.json's quant_method "bitsandbytes"
// or, without one, by `.quant_state.bitsandbytes__nf4|fp4` + `.absmax` (4-bit) or `.SCB`
// (8-bit), and decoded as bitsandbytes decodes them — recomputed here from the fixtures' stored
// bytes: 4-bit value e = code[nibble e] * absmax[e / blocksize], the nibble of byte e / 2 high
// first; with double quantization absmax[j] = f32(f32(nested_quant_map[q[j]] *
// nested_absmax[j / 256]) + nested_offset); 8-bit value = f32(f32(q * SCB[row]) *
// 7.874015718698502e-3f). f32 exactly and f16 as that rounded to nearest even, in every chunking,
// from a seekable source (a 4-bit weight's shape is in its quant_state JSON, read by range before
// ModelReady) and a sequential one (the JSON follows its packed weight in file order: the packed
// bytes are held until it has passed, in the arena the dry run sizes).
// Fixtures: tests/data/conventions/hub/bnb* (tools/samplegen/bnb_fixtures.cpp, laid out as
// bitsandbytes' Linear4bit / Linear8bitLt _save_to_state_dict; the malformed neighbours' verdicts
// are in hub/expected.json, model_quantized_test.cpp).
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "hub_test_util.h"
#include "model_host.h"
#include "weightstream/conventions.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

using hubtest::read_file;

using hubtest::load;
using hubtest::output_of;

const std::string& kHub = hubtest::hub_dir();
const std::string L = "model.layers.0.";

// A stored tensor's bytes, from the file's header (the test's own reading); empty when absent.
Bytes stored(const Bytes& file, const std::string& name) {
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const size_t e = h.find("\"" + name + "\":");
  if (e == std::string::npos) return {};
  const size_t o = h.find("\"data_offsets\":[", e) + 16;
  const uint64_t a = strtoull(h.c_str() + o, nullptr, 10);
  const uint64_t b = strtoull(h.c_str() + h.find(',', o) + 1, nullptr, 10);
  return Bytes(file.begin() + long(8 + n + a), file.begin() + long(8 + n + b));
}

float f32_at(const Bytes& b, size_t i) {
  float v;
  memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

// bitsandbytes functional.py get_4bit_type("nf4"), and FP4 as its CUDA kernels decode it
// (csrc/kernels.cu dDequantizeFP4Tree: the magnitude of code & 7, negative from code 8: -0.0).
const float kNf4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                        -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                        0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
                        0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
float fp4_code(uint32_t v) {
  const float mag[8] = {0.0f, 0.0625f / 12.0f, 8.0f / 12.0f, 1.0f, 4.0f / 12.0f, 6.0f / 12.0f, 2.0f / 12.0f, 3.0f / 12.0f};
  return v < 8 ? mag[v] : -mag[v - 8];
}

struct Four {
  bool fp4;
  uint32_t blocksize;
  bool nested;
  float offset;  // nested_offset
};

std::vector<float> bnb4_values(const Bytes& file, const std::string& w, uint64_t n, const Four& f) {
  const Bytes packed = stored(file, w), absmax = stored(file, w + ".absmax");
  const Bytes nested = stored(file, w + ".nested_absmax"), code2 = stored(file, w + ".nested_quant_map");
  EXPECT_EQ(packed.size(), n / 2);
  std::vector<float> v;
  for (uint64_t e = 0; e < n; ++e) {
    const uint32_t nib = e % 2 == 0 ? packed[e / 2] >> 4 : packed[e / 2] & 15;
    const uint64_t j = e / f.blocksize;
    float a;
    if (f.nested) {
      volatile float scaled = f32_at(code2, absmax[j]) * f32_at(nested, j / 256);  // two roundings
      a = scaled + f.offset;
    } else {
      a = f32_at(absmax, j);
    }
    v.push_back((f.fp4 ? fp4_code(nib) : kNf4[nib]) * a);
  }
  return v;
}

std::vector<float> bnb8_values(const Bytes& file, const std::string& w, uint64_t rows, uint64_t cols) {
  const Bytes q = stored(file, w);
  const Bytes scb = stored(file, w.substr(0, w.size() - 7) + ".SCB");
  std::vector<float> v;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) {
      volatile float scaled = float(int8_t(q[r * cols + c])) * f32_at(scb, r);
      v.push_back(scaled * 7.874015718698502e-3f);
    }
  return v;
}

// Every quantized weight decoded in every chunking and output type, seekable and sequential
// (a forward stream holds a 4-bit weight's packed bytes until its quant_state JSON, which follows
// it, has passed: the held region, which the dry run sizes); the plain bias as stored; sequential
// validation Ok. The same bytes in every way.
void check_everywhere(const std::string& dir, const std::map<std::string, std::vector<float>>& expect,
                      size_t weights, size_t bias_bytes) {
  for (bool seekable : {true, false})
    for (ws::OutType out : {ws::OutType::F32, ws::OutType::F16})
      for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random}) {
        HostOptions o;
        o.out = out;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 17;
        o.out_size = feed == Feed::Random ? 1024 : 1 << 16;  // one 256-value unit at f32 (ModelLoadOptions: 1 KiB covers every format)
        const LoadResult r = load(dir, o);
        const std::string what = dir + (out == ws::OutType::F16 ? " f16" : " f32") + " feed " + std::to_string(int(feed)) +
                                 (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(std::string(ws::convention_name(r.convention)), "bitsandbytes") << what;
        EXPECT_EQ(r.weight_names.size(), weights) << what;
        EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
        // A forward stream reads each byte once, and ModelReady comes after the header and
        // config.json alone (no tensor byte read before it).
        if (!seekable) {
          const Bytes file = hubtest::read_file(kHub + "/" + dir + "/model.safetensors");
          uint64_t data_start = 0;
          for (int k = 0; k < 8; ++k) data_start |= uint64_t(file[k]) << (8 * k);
          data_start += 8;
          const uint64_t config = r.bytes_fed.count("config.json") ? r.bytes_fed.at("config.json") : 0;
          EXPECT_EQ(r.bytes_fed.at("model.safetensors"), file.size()) << what;
          EXPECT_EQ(r.read_at_ready + r.planned, r.read_at_end) << what;
          EXPECT_EQ(r.read_at_ready, data_start + config) << what;
        }
        for (const auto& e : expect) {
          ASSERT_EQ(r.weights.count(e.first), 1u) << what << " " << e.first;
          EXPECT_TRUE(r.weights.at(e.first).bytes == output_of(e.second, out)) << what << " " << e.first;
        }
        ASSERT_EQ(r.weights.count(L + "self_attn.q_proj.bias"), 1u) << what;
        EXPECT_EQ(r.weights.at(L + "self_attn.q_proj.bias").bytes.size(), bias_bytes * (out == ws::OutType::F16 ? 1 : 2))
            << what;
      }
  for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random}) {
    HostOptions o;
    o.feed = feed;
    o.seekable = false;
    o.seed = 17;
    o.mode = ws::ModelLoadMode::Validate;
    const LoadResult v = load(dir, o);
    EXPECT_EQ(v.code, ws::Status::Ok) << dir << " sequential validate: " << v.verdict();
    EXPECT_EQ(std::string(ws::convention_name(v.convention)), "bitsandbytes") << dir;
  }
}

std::map<std::string, std::vector<float>> four_bit(const std::string& dir, const Four& f) {
  const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
  return {{L + "mlp.down_proj.weight", bnb4_values(file, L + "mlp.down_proj.weight", 64 * 320, f)},
          {L + "self_attn.q_proj.weight", bnb4_values(file, L + "self_attn.q_proj.weight", 32 * 32, f)}};
}

TEST(BnbHub, FourBitDecodesAsBitsandbytesFromThePackedBytes) {
  check_everywhere("bnb-nf4", four_bit("bnb-nf4", {false, 64, false, 0.0f}), 4, 64);
  check_everywhere("bnb-nf4-nested", four_bit("bnb-nf4-nested", {false, 64, true, 0.03125f}), 4, 64);
  check_everywhere("bnb-fp4-no-config", four_bit("bnb-fp4-no-config", {true, 128, false, 0.0f}), 4, 64);
}

TEST(BnbHub, EightBitDecodesAsBitsandbytesFromTheStoredRows) {
  const Bytes file = read_file(kHub + "/bnb-int8/model.safetensors");
  check_everywhere("bnb-int8",
                   {{L + "mlp.down_proj.weight", bnb8_values(file, L + "mlp.down_proj.weight", 24, 40)},
                    {L + "self_attn.q_proj.weight", bnb8_values(file, L + "self_attn.q_proj.weight", 16, 16)}},
                   4, 32);
}

// The fixtures hold what they name: two nested absmax blocks (320 blocks of 64), FP4 codes of 8
// (-0.0 once decoded), negative int8 rows.
TEST(BnbHub, FixturesHoldTheCasesTheyName) {
  const Bytes nested = read_file(kHub + "/bnb-nf4-nested/model.safetensors");
  EXPECT_EQ(stored(nested, L + "mlp.down_proj.weight.nested_absmax").size(), 8u);
  EXPECT_EQ(stored(nested, L + "mlp.down_proj.weight.absmax").size(), 320u);
  const Bytes fp4 = read_file(kHub + "/bnb-fp4-no-config/model.safetensors");
  const Bytes p = stored(fp4, L + "mlp.down_proj.weight");
  size_t eights = 0;
  for (uint8_t b : p) eights += (b >> 4) == 8 || (b & 15) == 8;
  EXPECT_GT(eights, 0u);
  const std::string json = [&] {
    const Bytes j = stored(nested, L + "mlp.down_proj.weight.quant_state.bitsandbytes__nf4");
    return std::string(j.begin(), j.end());
  }();
  EXPECT_EQ(json,
            "{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [64, 320], "
            "\"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": 0.03125}");
}

// The logical weight: `<m>.weight`, the JSON's shape, the parameters its row presents; every
// companion owned by it (the JSON and quant_map as the data phase's pieces).
TEST(BnbHub, WeightIsNamedShapedAndParameterised) {
  HostOptions o;
  o.mode = ws::ModelLoadMode::Headers;
  bool seen = false;
  o.on_ready = [&](const ws::ModelLoader& ld) {
    const ws::LogicalModel& m = *ld.model();
    for (uint32_t i = 0; i < ld.weight_count(); ++i) {
      const ws::LogicalWeight& w = ld.weight(i);
      if (std::string(w.name.data, w.name.size) != L + "mlp.down_proj.weight") continue;
      seen = true;
      EXPECT_EQ(w.rank, 2u);
      EXPECT_EQ(w.shape[0], 64u);
      EXPECT_EQ(w.shape[1], 320u);
      EXPECT_EQ(w.elements, 20480u);
      EXPECT_EQ(w.format, ws::QuantFormat::Bnb4);
      ws::QuantParameter q[ws::kMaxQuantParameters];
      ASSERT_EQ(ws::quant_parameters(w, q, ws::kMaxQuantParameters), 5u);
      EXPECT_STREQ(q[0].text, "bitsandbytes");
      EXPECT_STREQ(q[1].text, "nf4");
      EXPECT_EQ(q[2].number, 64u);
      EXPECT_STREQ(q[3].text, "true");
      EXPECT_STREQ(q[4].text, "BF16");
      for (ws::PieceRole role : {ws::PieceRole::Packed, ws::PieceRole::Scales, ws::PieceRole::Biases,
                                 ws::PieceRole::GlobalScale, ws::PieceRole::Format, ws::PieceRole::Shape}) {
        ws::PieceRole got;
        ASSERT_TRUE(w.ref(role).present()) << int(role);
        EXPECT_EQ(m.owner(w.ref(role), &got), i) << int(role);
        EXPECT_EQ(got, role);
      }
    }
  };
  const LoadResult r = load("bnb-nf4-nested", o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  EXPECT_TRUE(seen);
}

// bnb_4bit_quant_storage other than uint8 (Params4bit keeps the same packed bytes as a view of
// another dtype: [bytes / itemsize, 1]): q_proj's 512 bytes stored as F16 [256, 1] decode to the
// same values.
TEST(BnbHub, OtherQuantStorageDtypesAreViewsOfTheSameBytes) {
  const Bytes file = read_file(kHub + "/bnb-nf4/model.safetensors");
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
  std::string h(file.begin() + 8, file.begin() + 8 + long(n));
  const std::string from = "\"" + L + "self_attn.q_proj.weight\":{\"dtype\":\"U8\",\"shape\":[512,1]";
  const size_t at = h.find(from);
  ASSERT_NE(at, std::string::npos);
  h.replace(at, from.size(), "\"" + L + "self_attn.q_proj.weight\":{\"dtype\":\"F16\",\"shape\":[256,1]");
  while (!h.empty() && h.back() == ' ') h.pop_back();
  while (h.size() % 8) h += ' ';
  Bytes f;
  for (int k = 0; k < 8; ++k) f.push_back(uint8_t(uint64_t(h.size()) >> (8 * k)));
  f.insert(f.end(), h.begin(), h.end());
  f.insert(f.end(), file.begin() + 8 + long(n), file.end());
  const std::vector<float> want = bnb4_values(file, L + "self_attn.q_proj.weight", 32 * 32, {false, 64, false, 0.0f});
  HostOptions o;
  o.seekable = true;
  const LoadResult r = hubtest::load_memory({{"model.safetensors", f}}, o);
  ASSERT_EQ(r.code, ws::Status::Ok) << r.verdict();
  ASSERT_EQ(r.weights.count(L + "self_attn.q_proj.weight"), 1u);
  EXPECT_TRUE(r.weights.at(L + "self_attn.q_proj.weight").bytes == output_of(want, ws::OutType::F32));
}

// In memory, the JSON edited in place (same length: the header is unchanged): "float16" and a
// space after it is still bitsandbytes' JSON (Ok); a '[' for its first byte is
// BnbQuantStateInvalid at that byte.
TEST(BnbHub, EditedNeighboursAreRefusedAtTheirBytes) {
  const std::string dir = kHub + "/bnb-nf4";
  const Bytes file = read_file(dir + "/model.safetensors");
  HostOptions o;
  o.seekable = true;
  {
    Bytes f = file;
    const std::string from = "\"dtype\": \"bfloat16\"", to = "\"dtype\": \"float16\" ";
    std::string s(f.begin(), f.end());
    const size_t at = s.find(from);
    ASSERT_NE(at, std::string::npos);
    memcpy(f.data() + at, to.data(), to.size());
    const LoadResult r = hubtest::load_memory({{"model.safetensors", f}}, o);
    EXPECT_EQ(r.code, ws::Status::Ok) << r.verdict();
  }
  {
    Bytes f = file;
    std::string s(f.begin(), f.end());
    const size_t at = s.find("{\"quant_type\"");
    ASSERT_NE(at, std::string::npos);
    f[at] = '[';
    const LoadResult r = hubtest::load_memory({{"model.safetensors", f}}, o);
    EXPECT_EQ(r.code, ws::Status::BnbQuantStateInvalid) << r.verdict();
    EXPECT_EQ(r.offset, at);
  }
}

// Loading as stored (ModelLoaderOptions::as_stored, the JS package's dtype 'raw'): every tensor
// of the file is one weight handed on as its bytes, the quant_state JSON tensors too, under their
// names that carry the method (`.quant_state.bitsandbytes__nf4`); no convention, no config read —
// from a sequential source too (nothing waits for a companion), in every chunking.
TEST(BnbHub, AsStoredHandsOnEveryTensorTheQuantStateJsonToo) {
  for (const char* dir : {"bnb-nf4-nested", "bnb-int8"}) {
    const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
    uint64_t n = 0;
    for (int k = 0; k < 8; ++k) n |= uint64_t(file[k]) << (8 * k);
    const std::string h(file.begin() + 8, file.begin() + 8 + long(n));
    std::vector<std::string> names;  // the header's names, in its order (the writer sorts them)
    for (size_t p = h.find("\"model."); p != std::string::npos; p = h.find("\"model.", p + 1)) {
      const std::string name = h.substr(p + 1, h.find('"', p + 1) - p - 1);
      if (h.compare(p + 1 + name.size(), 3, "\":{") == 0) names.push_back(name);
    }
    const std::string state = L + "mlp.down_proj.weight.quant_state.bitsandbytes__nf4";
    const bool four = std::string(dir) == "bnb-nf4-nested";
    EXPECT_EQ(std::count(names.begin(), names.end(), state), four ? 1 : 0) << dir;
    EXPECT_EQ(names.size(), four ? 14u : 8u) << dir;
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
      for (bool seekable : {true, false}) {
        HostOptions o;
        o.mode = ws::ModelLoadMode::Raw;
        o.as_stored = true;
        o.feed = feed;
        o.seekable = seekable;
        o.seed = 5;
        const LoadResult r = load(dir, o);
        const std::string what = std::string(dir) + " feed " + std::to_string(int(feed)) + (seekable ? " seekable" : " sequential");
        ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
        EXPECT_EQ(r.convention, ws::Convention::Plain) << what;
        EXPECT_FALSE(r.config_used) << what;
        ASSERT_EQ(r.weights.size(), names.size()) << what;
        for (const std::string& name : names) {
          ASSERT_EQ(r.weights.count(name), 1u) << what << " " << name;
          EXPECT_EQ(r.weights.at(name).bytes, stored(file, name)) << what << " " << name;
        }
        if (four) {
          const Bytes j = r.weights.at(state).bytes;
          EXPECT_EQ(std::string(j.begin(), j.begin() + 22), "{\"quant_type\": \"nf4\", ") << what;
        }
      }
  }
}

}  // namespace

namespace {

// One attempt of a sequential decode of a fixture in a fixed arena (no retry), the file fed whole
// forward: its status, arena_needed(), whether ModelReady came and any weight began, the plan's
// sequential peak at ModelReady. `select`: the weights to decode (by name; empty: all).
struct Attempt {
  ws::Status code = ws::Status::Ok;
  size_t needed = 0;
  bool ready = false, began = false;
  uint64_t plan_sequential = 0;
  std::map<std::string, std::vector<uint64_t>> at_ready, at_begin;  // weights' shapes then
};
std::vector<uint64_t> shape_of(const ws::LogicalWeight& w) { return std::vector<uint64_t>(w.shape, w.shape + w.rank); }
Attempt sequential_attempt(const std::string& dir, size_t arena_size, const std::vector<std::string>& select) {
  const Bytes file = read_file(kHub + "/" + dir + "/model.safetensors");
  const Bytes config = read_file(kHub + "/" + dir + "/config.json");
  std::vector<uint64_t> arena((arena_size + 7) / 8);
  ws::ModelLoaderOptions opt;
  opt.mode = ws::ModelLoadMode::Decode;
  opt.seekable = false;
  ws::ModelLoader ld(arena.data(), arena_size, opt);
  ld.open(ws::ModelEntry::Auto, "model.safetensors");
  Attempt a;
  std::map<uint32_t, uint64_t> pos;
  for (int steps = 0; steps < 1000000; ++steps) {
    const ws::ModelEvent e = ld.next();
    if (e.type == ws::ModelEventType::NeedRead) {
      const std::string name(ld.file_name(e.file).data, ld.file_name(e.file).size);
      const Bytes& b = name == "config.json" ? config : file;
      EXPECT_EQ(e.offset, pos[e.file]) << name;  // forward only
      if (e.offset >= b.size()) {
        ld.end_of_file();
        continue;
      }
      const size_t n = size_t(std::min<uint64_t>(e.length, b.size() - e.offset));
      pos[e.file] = e.offset + n;
      ld.feed(b.data() + e.offset, n);
    } else if (e.type == ws::ModelEventType::ModelReady) {
      a.ready = true;
      a.plan_sequential = ld.plan(1 << 20).sequential_peak;
      for (uint32_t i = 0; i < ld.weight_count(); ++i) {
        const std::string name(ld.weight(i).name.data, ld.weight(i).name.size);
        if (select.empty() || std::find(select.begin(), select.end(), name) != select.end()) ld.select(i);
        a.at_ready[name] = shape_of(ld.weight(i));
      }
    } else if (e.type == ws::ModelEventType::WeightBegin) {
      a.began = true;
      const ws::LogicalWeight& w = ld.weight(e.weight);
      a.at_begin[std::string(w.name.data, w.name.size)] = shape_of(w);
    } else if (e.type == ws::ModelEventType::Done || e.type == ws::ModelEventType::Error) {
      a.code = e.type == ws::ModelEventType::Done ? ws::Status::Ok : ld.error().code;
      a.needed = ld.arena_needed();
      return a;
    }
  }
  ADD_FAILURE() << "the load does not end";
  return a;
}

// The memory a sequential decode needs is the one arena's, stated before any data: too small is
// ArenaExhausted right after ModelReady (before any weight begins or is held; nothing is
// allocated), and arena_needed() decodes. What a held 4-bit weight adds is its held blocks:
// down_proj's 1,280 absmax bytes (held from the file's start: safetensors places the F32 absmax
// before every U8 weight) and its 10,240 packed bytes (held from their arrival: a block of their
// own), with their list entries — in arena_needed() and in the least arena that decodes (found by
// bisection).
TEST(BnbHub, SequentialDecodeNeedsTheArenaItsDryRunStates) {
  const std::string down = L + "mlp.down_proj.weight", bias = L + "self_attn.q_proj.bias";
  size_t need[2] = {}, least[2] = {};
  for (int k = 0; k < 2; ++k) {
    const std::vector<std::string> select = {k == 0 ? bias : down};
    const Attempt small = sequential_attempt("bnb-nf4", 16 << 10, select);
    ASSERT_EQ(small.code, ws::Status::ArenaExhausted) << k;
    EXPECT_TRUE(small.ready) << k;
    EXPECT_FALSE(small.began) << k;
    need[k] = small.needed;
    EXPECT_EQ(sequential_attempt("bnb-nf4", need[k], select).code, ws::Status::Ok) << k;
    size_t lo = 16 << 10, hi = need[k];  // fails at lo, decodes at hi
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      const Attempt a = sequential_attempt("bnb-nf4", mid, select);
      ASSERT_TRUE(a.code == ws::Status::Ok || a.code == ws::Status::ArenaExhausted) << mid;
      (a.code == ws::Status::Ok ? hi : lo) = mid;
    }
    least[k] = hi;
    const Attempt less = sequential_attempt("bnb-nf4", hi - 1, select);
    EXPECT_EQ(less.code, ws::Status::ArenaExhausted) << k;
    EXPECT_TRUE(less.ready && !less.began) << k;
  }
  // The held blocks: the absmax (1,280, from the file's start) and the packed bytes (10,240, from
  // their arrival to the JSON's end), each with its list entry (24 bytes), the same in
  // arena_needed() and in the least arena.
  EXPECT_EQ(need[1] - need[0], 1280u + 10240u + 2 * 24u);
  EXPECT_EQ(least[1] - least[0], 1280u + 10240u + 2 * 24u);
  // The plan counts what waits for the JSON as held too, the quant_map and JSON bytes (fed to the
  // data phase as they pass, not kept) with it: down_proj's 10,240 + 1,280 + 64 + 79 and q_proj's
  // absmax and quant_map (64 + 64), which pass before down_proj's JSON.
  const Attempt all = sequential_attempt("bnb-nf4", 1 << 20, {});
  ASSERT_EQ(all.code, ws::Status::Ok);
  EXPECT_EQ(all.plan_sequential, 10240u + 1280u + 64u + 79u + 64u + 64u);
}

// From a forward stream a 4-bit weight's shape is its quant_state JSON's from its WeightBegin on
// (its decode waits for the JSON); at ModelReady it is the header's provisional [2 x packed bytes],
// whose element count the JSON must match (output_bytes() is exact then). An 8-bit weight's is
// its stored [out, in] throughout.
TEST(BnbHub, SequentialWeightHasTheJsonShapeFromItsBegin) {
  const std::string down = L + "mlp.down_proj.weight", q = L + "self_attn.q_proj.weight";
  const Attempt four = sequential_attempt("bnb-nf4-nested", 1 << 20, {});
  ASSERT_EQ(four.code, ws::Status::Ok);
  EXPECT_EQ(four.at_ready.at(down), std::vector<uint64_t>({20480}));
  EXPECT_EQ(four.at_begin.at(down), std::vector<uint64_t>({64, 320}));
  EXPECT_EQ(four.at_ready.at(q), std::vector<uint64_t>({1024}));
  EXPECT_EQ(four.at_begin.at(q), std::vector<uint64_t>({32, 32}));
  const Attempt eight = sequential_attempt("bnb-int8", 1 << 20, {});
  ASSERT_EQ(eight.code, ws::Status::Ok);
  EXPECT_EQ(eight.at_ready.at(down), std::vector<uint64_t>({24, 40}));
  EXPECT_EQ(eight.at_begin.at(down), std::vector<uint64_t>({24, 40}));
}

// Raw from a forward stream (no quant_state needed: the stored pieces go out as they pass): the
// pieces a seekable raw load hands out, in every chunking.
TEST(BnbHub, SequentialRawHandsOutTheSeekablePieces) {
  for (const char* dir : {"bnb-nf4-nested", "bnb-int8"}) {
    HostOptions o;
    o.mode = ws::ModelLoadMode::Raw;
    const LoadResult want = load(dir, o);
    ASSERT_EQ(want.code, ws::Status::Ok) << dir << ": " << want.verdict();
    for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random}) {
      o.seekable = false;
      o.feed = feed;
      o.seed = 3;
      const LoadResult r = load(dir, o);
      const std::string what = std::string(dir) + " feed " + std::to_string(int(feed));
      ASSERT_EQ(r.code, ws::Status::Ok) << what << ": " << r.verdict();
      EXPECT_TRUE(r.violation.empty()) << what << ": " << r.violation;
      ASSERT_EQ(r.weights.size(), want.weights.size()) << what;
      for (const auto& w : want.weights) {
        ASSERT_EQ(r.weights.count(w.first), 1u) << what << " " << w.first;
        EXPECT_EQ(r.weights.at(w.first).pieces, w.second.pieces) << what << " " << w.first;
      }
    }
  }
}

}  // namespace

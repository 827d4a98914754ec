// ws::ModelLoader's two ways of handing on stored bytes: Decode with pass_stored (weights without a
// decoding go out as stored) and as_stored (every tensor of every file its own weight, no
// convention) — exact bytes against the files, exact event order, every chunking, seekable and
// sequential, with and without digests, never an allocation.
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "convention_fixtures.h"
#include "mini_json.h"
#include "model_cases.h"
#include "model_host.h"
#include "sha256.h"

using modeltest::Bytes;
using modeltest::Case;
using modeltest::HostOptions;
using modeltest::LoadResult;
using modeltest::Opened;
using Feed = modeltest::HostOptions::Feed;

namespace {

const std::string kRoot = WS_SOURCE_DIR;

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }
Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes file_bytes(const std::string& path) {
  Bytes b;
  EXPECT_TRUE(modeltest::disk_files("")(path, &b)) << path;
  return b;
}

// The ways of reading every test below repeats: seekable and sequential, whole reads, random
// pieces and single bytes.
struct Way {
  bool seekable;
  Feed feed;
  uint32_t read_size;
};
const Way kWays[] = {{true, Feed::Whole, 1 << 16}, {true, Feed::Random, 4096}, {true, Feed::OneByte, 64},
                     {false, Feed::Whole, 1 << 16}, {false, Feed::Random, 100}, {false, Feed::OneByte, 7}};
std::string way_name(const Way& w) {
  return std::string(w.seekable ? "seekable" : "sequential") + " feed " + std::to_string(int(w.feed)) + " read " +
         std::to_string(w.read_size);
}

// Every file's true SHA-256, given on its first request (the verified forward stream).
void with_true_digests(const modeltest::Files& files, HostOptions* h) {
  h->on_first_read = [files](ws::ModelLoader& L, uint32_t f) {
    Bytes b;
    if (!files(str(L.file_name(f)), &b)) return;
    uint8_t d[ws::kSha256Bytes];
    ws::sha256(b.data(), b.size(), d);
    L.set_file_sha256(d);
  };
}

// --- pass_stored -------------------------------------------------------------------------------

// all_quant_types.gguf (gguf-py's writer): 34 tensors, of which F64, I8, I16, I32 and I64 have no
// decoding. Their stored bytes are what gguf-py recorded (expect.json: offset, size, SHA-256).
TEST(ModelStored, PassStoredGgufHandsOnTheStoredBytes) {
  const std::string dir = kRoot + "/tests/data/synthetic/gguf";
  const clitest::Json expect = clitest::parse_json(std::string(
      [&] { Bytes b = file_bytes(dir + "/all_quant_types.gguf.expect.json"); return std::string(b.begin(), b.end()); }()));
  std::map<std::string, std::string> stored_sha;  // the five without a decoding
  std::vector<std::string> model_order;
  for (const clitest::Json& t : expect["tensors"].items) {
    model_order.push_back(t["name"].str());
    const std::string type = t["type_name"].str();
    if (type == "F64" || type == "I8" || type == "I16" || type == "I32" || type == "I64")
      stored_sha[t["name"].str()] = t["data_sha256"].str();
  }
  ASSERT_EQ(model_order.size(), 34u);
  ASSERT_EQ(stored_sha.size(), 5u);
  HostOptions base;
  base.mode = ws::ModelLoadMode::Decode;
  // Without the option: the five are not selected (select_all skips them), select() refuses them.
  std::vector<ws::Status> refused;
  base.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t i = 0; i < L.weight_count(); ++i)
      if (stored_sha.count(str(L.weight(i).name))) refused.push_back(const_cast<ws::ModelLoader&>(L).select(i));
  };
  base.select_all = false;  // (the selection is the callback's)
  LoadResult r = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::File, "all_quant_types.gguf", base);
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(refused, std::vector<ws::Status>(5, ws::Status::UnsupportedFormat));
  EXPECT_TRUE(r.passed_stored.empty());
  base.on_ready = nullptr;
  base.select_all = true;
  const LoadResult decoded = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::File, "all_quant_types.gguf", base);
  ASSERT_EQ(decoded.verdict(), "Ok");
  EXPECT_EQ(decoded.weights.size(), 29u);

  base.pass_stored = true;
  for (const Way& way : kWays) {
    for (bool digests : {false, true}) {
      HostOptions h = base;
      h.seekable = way.seekable;
      h.feed = way.feed;
      h.read_size = way.read_size;
      if (digests) with_true_digests(modeltest::disk_files(dir), &h);
      const std::string what = way_name(way) + (digests ? " digests" : "");
      r = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::File, "all_quant_types.gguf", h);
      ASSERT_EQ(r.verdict(), "Ok") << what;
      EXPECT_EQ(r.violation, "") << what;
      // Every tensor, in model order (its file order too), each begun and ended in turn.
      EXPECT_EQ(r.order, model_order) << what;
      EXPECT_EQ(r.ends, model_order) << what;
      EXPECT_EQ(std::set<std::string>(r.passed_stored.begin(), r.passed_stored.end()).size(), 5u) << what;
      for (const std::string& n : r.passed_stored) EXPECT_TRUE(stored_sha.count(n)) << what << " " << n;
      for (const auto& w : r.weights) {
        if (stored_sha.count(w.first)) {
          EXPECT_EQ(wstest::sha256_hex(w.second.bytes.data(), w.second.bytes.size()), stored_sha[w.first]) << what << " " << w.first;
          EXPECT_EQ(w.second.pieces.size(), 0u);  // (Decode: bytes only)
        } else {
          EXPECT_EQ(w.second.bytes, decoded.weights.at(w.first).bytes) << what << " " << w.first;  // decoded as before
        }
      }
    }
  }
  // The i32 tensor's four values as stored: -1, 2, 3, -4 (little-endian).
  const Bytes i32 = r.weights.at("i32").bytes;
  const Bytes want = {0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 3, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff};
  EXPECT_EQ(i32, want);
}

// An MLX model with plain tensors of integer and bool dtypes among its quantized linears: those go
// out as stored (their bytes straight from the file), the rest decode as without the option —
// seekable in model order, sequential in file order.
std::map<std::string, Bytes> mlx_with_ints() {
  std::vector<samplegen::RawTensor> t;
  auto linear = [&](const std::string& p, uint8_t seed) {
    Bytes w(2 * 16), s(2 * 2), b(2 * 2);  // [2, 4] U32 4-bit g32: one group per row
    for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t(i * 37 + seed);
    for (size_t i = 0; i < s.size(); i += 2) s[i + 1] = 0x3c;
    for (size_t i = 0; i < b.size(); i += 2) b[i + 1] = 0xbf;
    t.push_back({p + ".biases", "BF16", {2, 1}, b});
    t.push_back({p + ".scales", "BF16", {2, 1}, s});
    t.push_back({p + ".weight", "U32", {2, 4}, w});
  };
  linear("a", 1);                                                  // 0 1 2
  linear("b", 9);                                                  // 3 4 5
  t.push_back({"ids", "I32", {3}, {1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0}});  // 6
  t.push_back({"mask", "BOOL", {2}, {1, 0}});                      // 7
  t.push_back({"norm", "F32", {1}, {0, 0, 0x80, 0x3f}});           // 8
  t.push_back({"steps", "I64", {1}, {5, 0, 0, 0, 0, 0, 0, 0}});    // 9
  // Header keys sorted (as MLX writes them); data: steps, b.weight before its companions (kept
  // whole when sequential), ids, a's three pieces, mask, b's companions, norm. Tables are in
  // data order, so is the model.
  const std::vector<size_t> order = {9, 5, 6, 0, 1, 2, 7, 3, 4, 8};
  return {{"model.safetensors", samplegen::serialize_raw(t, order, {{"format", "mlx"}}, false)},
          {"config.json", bytes_of("{\"quantization\": {\"group_size\": 32, \"bits\": 4}}")}};
}

// stored_formats: the plain weights of the formats named go out as stored (a host decodes them,
// the JS WebGPU pass), every other weight decodes as without it; their output_bytes() are their
// stored bytes. Formats named but with companions (MLX) stay the library's.
TEST(ModelStored, StoredFormatsHandsOnThoseFormatsAsStored) {
  const std::string dir = kRoot + "/tests/data/synthetic/gguf";
  const clitest::Json expect = clitest::parse_json(std::string(
      [&] { Bytes b = file_bytes(dir + "/all_quant_types.gguf.expect.json"); return std::string(b.begin(), b.end()); }()));
  std::map<std::string, std::string> stored_sha;
  for (const clitest::Json& t : expect["tensors"].items) {
    const std::string type = t["type_name"].str();
    if (type == "Q4_0" || type == "Q8_0" || type == "BF16") stored_sha[t["name"].str()] = t["data_sha256"].str();
  }
  ASSERT_EQ(stored_sha.size(), 3u);
  HostOptions base;
  base.mode = ws::ModelLoadMode::Decode;
  const LoadResult decoded = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::File, "all_quant_types.gguf", base);
  ASSERT_EQ(decoded.verdict(), "Ok");
  base.stored_formats = (uint64_t(1) << uint32_t(ws::QuantFormat::Q4_0)) | (uint64_t(1) << uint32_t(ws::QuantFormat::Q8_0)) |
                        (uint64_t(1) << uint32_t(ws::QuantFormat::BF16)) | (uint64_t(1) << uint32_t(ws::QuantFormat::MlxAffine));
  uint32_t checked = 0;
  base.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t i = 0; i < L.weight_count(); ++i) {
      const std::string n = str(L.weight(i).name);
      const ws::TensorRef r = L.weight(i).ref(ws::PieceRole::Packed);
      const ws::TensorInfo& t = L.file_reader(L.table_file(r.table))->tensor(r.index);
      EXPECT_EQ(L.passes_stored(i), stored_sha.count(n) == 1) << n;
      if (stored_sha.count(n)) EXPECT_EQ(L.output_bytes(i), t.byte_size()) << n;
      else EXPECT_EQ(L.output_bytes(i), L.weight(i).decodable ? L.weight(i).elements * 4 : 0) << n;
      ++checked;
    }
  };
  for (const Way& way : kWays) {
    HostOptions h = base;
    h.seekable = way.seekable;
    h.feed = way.feed;
    h.read_size = way.read_size;
    const LoadResult r = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::File, "all_quant_types.gguf", h);
    const std::string what = way_name(way);
    ASSERT_EQ(r.verdict(), "Ok") << what;
    EXPECT_EQ(r.violation, "") << what;
    EXPECT_EQ(r.passed_stored.size(), 3u) << what;
    EXPECT_EQ(r.weights.size(), decoded.weights.size()) << what;
    for (const auto& w : r.weights) {
      if (stored_sha.count(w.first))
        EXPECT_EQ(wstest::sha256_hex(w.second.bytes.data(), w.second.bytes.size()), stored_sha[w.first]) << what << " " << w.first;
      else
        EXPECT_EQ(w.second.bytes, decoded.weights.at(w.first).bytes) << what << " " << w.first;
    }
  }
  EXPECT_EQ(checked, 6u * 34u);

  // MLX: a quantized linear (MlxAffine) goes out as its three pieces, each its stored bytes with
  // its role, whatever the order they pass in (seekable: companions first; sequential: file
  // order); the other weights as before.
  const auto files = mlx_with_ints();
  const auto raw_of = [&](const std::string& name) {
    const Bytes& f = files.at("model.safetensors");
    const uint64_t n = f[0] | (uint64_t(f[1]) << 8) | (uint64_t(f[2]) << 16);
    const clitest::Json h = clitest::parse_json(std::string(f.begin() + 8, f.begin() + 8 + long(n)));
    const auto& off = h[name]["data_offsets"].items;
    return Bytes(f.begin() + 8 + long(n) + long(off[0].u64()), f.begin() + 8 + long(n) + long(off[1].u64()));
  };
  for (const Way& way : kWays) {
    HostOptions m;
    m.mode = ws::ModelLoadMode::Decode;
    m.seekable = way.seekable;
    m.feed = way.feed;
    m.read_size = way.read_size;
    const LoadResult plain = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", m);
    m.stored_formats = uint64_t(1) << uint32_t(ws::QuantFormat::MlxAffine);
    const LoadResult mr = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", m);
    const std::string what = way_name(way);
    ASSERT_EQ(mr.verdict(), "Ok") << what;
    EXPECT_EQ(mr.violation, "") << what;
    EXPECT_EQ(std::set<std::string>(mr.passed_stored.begin(), mr.passed_stored.end()), (std::set<std::string>{"a.weight", "b.weight"})) << what;
    for (const std::string p : {"a", "b"}) {
      const auto& w = mr.weights.at(p + ".weight");
      EXPECT_EQ(w.pieces.at(int(ws::PieceRole::Packed)), raw_of(p + ".weight")) << what;
      EXPECT_EQ(w.pieces.at(int(ws::PieceRole::Scales)), raw_of(p + ".scales")) << what;
      EXPECT_EQ(w.pieces.at(int(ws::PieceRole::Biases)), raw_of(p + ".biases")) << what;
    }
    EXPECT_EQ(mr.weights.at("norm").bytes, plain.weights.at("norm").bytes) << what;
  }
}

TEST(ModelStored, PassStoredMlxIntegersGoOutAsStored) {
  const std::map<std::string, Bytes> files = mlx_with_ints();
  const Bytes& file = files.at("model.safetensors");
  HostOptions base;
  base.mode = ws::ModelLoadMode::Decode;
  const LoadResult decoded = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", base);
  ASSERT_EQ(decoded.verdict(), "Ok");
  EXPECT_EQ(decoded.convention, ws::Convention::Mlx);
  EXPECT_EQ(decoded.weight_names, (std::vector<std::string>{"steps", "b.weight", "ids", "a.weight", "mask", "norm"}));
  EXPECT_EQ(decoded.order, (std::vector<std::string>{"b.weight", "a.weight", "norm"}));  // no decoding: skipped
  base.pass_stored = true;
  std::map<std::string, std::pair<uint64_t, uint64_t>> range;
  base.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t i = 0; i < L.weight_count(); ++i) {
      const ws::TensorRef p = L.weight(i).ref(ws::PieceRole::Packed);
      range[str(L.weight(i).name)] = {L.piece_begin(p), L.piece_end(p)};
    }
  };
  for (const Way& way : kWays) {
    for (bool digests : {false, true}) {
      HostOptions h = base;
      h.seekable = way.seekable;
      h.feed = way.feed;
      h.read_size = way.read_size;
      if (digests) with_true_digests(modeltest::memory_files(files), &h);
      const std::string what = way_name(way) + (digests ? " digests" : "");
      const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
      ASSERT_EQ(r.verdict(), "Ok") << what;
      EXPECT_EQ(r.violation, "") << what;
      EXPECT_EQ(r.passed_stored, (std::vector<std::string>{"steps", "ids", "mask"})) << what;
      // By range (seekable, no digest): model order. Forward: as each completes in the file —
      // steps, ids, a (its pieces in), mask, b (its kept packed bytes once its scales came), norm.
      const bool by_range = way.seekable && !digests;
      const std::vector<std::string> want_order =
          by_range ? std::vector<std::string>{"steps", "b.weight", "ids", "a.weight", "mask", "norm"}
                   : std::vector<std::string>{"steps", "ids", "a.weight", "mask", "b.weight", "norm"};
      EXPECT_EQ(r.order, want_order) << what;
      EXPECT_EQ(r.ends, want_order) << what;
      for (const std::string n : {"ids", "mask", "steps"}) {
        const auto rg = range.at(n);
        EXPECT_EQ(r.weights.at(n).bytes, Bytes(file.begin() + long(rg.first), file.begin() + long(rg.second))) << what << " " << n;
      }
      for (const std::string n : {"a.weight", "b.weight", "norm"})
        EXPECT_EQ(r.weights.at(n).bytes, decoded.weights.at(n).bytes) << what << " " << n;
    }
  }
  // The stored bytes, as written: ids = 1, -2, 7; mask = 1, 0; steps = 5.
  HostOptions h = base;
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
  EXPECT_EQ(r.weights.at("ids").bytes, (Bytes{1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0}));
  EXPECT_EQ(r.weights.at("mask").bytes, (Bytes{1, 0}));
  EXPECT_EQ(r.weights.at("steps").bytes, (Bytes{5, 0, 0, 0, 0, 0, 0, 0}));
  // One weight selected alone, by select(): accepted with the option.
  h.select_all = false;
  h.select = {"mask"};
  const LoadResult one = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
  EXPECT_EQ(one.order, std::vector<std::string>{"mask"});
  EXPECT_EQ(one.weights.at("mask").bytes, (Bytes{1, 0}));
}

// Raw mode hands out stored pieces anyway: passes_stored() is Decode's.
TEST(ModelStored, PassesStoredIsFalseOutsideDecode) {
  const std::map<std::string, Bytes> files = mlx_with_ints();
  for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Raw, ws::ModelLoadMode::Validate, ws::ModelLoadMode::Headers}) {
    HostOptions h;
    h.mode = mode;
    h.pass_stored = true;
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
    EXPECT_EQ(r.verdict(), "Ok");
    EXPECT_TRUE(r.passed_stored.empty()) << int(mode);
  }
}

// --- as_stored ---------------------------------------------------------------------------------

// The models of every convention (their entry as the goldens open them) and split GGUF.
struct Model {
  std::string name;
  Opened o;
};
std::vector<Model> convention_models() {
  std::vector<Model> out;
  for (const Case& c : modeltest::cases())
    if (modeltest::valid_model_case(c)) out.push_back({c.name, modeltest::open_case(c)});
  Model split;
  split.name = "split-gguf/tiny";
  split.o.files = modeltest::disk_files(kRoot + "/tests/data/split-gguf");
  split.o.entry = ws::ModelEntry::File;
  split.o.name = "tiny-00002-of-00003.gguf";  // any split finds the others
  out.push_back(split);
  return out;
}

// Every tensor of every file is one weight (table order, then each table's order), handed on as
// the file stores it; no config.json asked for; the convention is Plain. UQFF included (its
// scalars are tensors like any), sequential too.
TEST(ModelStored, AsStoredEveryTensorIsOneWeightAsStored) {
  size_t tensors = 0;
  for (const Model& m : convention_models()) {
    std::vector<std::string> names;  // every tensor, table after table (as the host names them)
    std::map<std::string, Bytes> want;  // by the host's name: the tensor's bytes in its file
    HostOptions h;
    h.mode = ws::ModelLoadMode::Raw;
    h.as_stored = true;
    h.on_ready = [&](const ws::ModelLoader& L) {
      names.clear();
      std::map<std::string, int> count;
      for (uint32_t t = 0; t < L.table_count(); ++t)
        for (uint32_t i = 0; i < L.table(t).count(); ++i) ++count[str(L.table(t).get(i).name)];
      for (uint32_t t = 0; t < L.table_count(); ++t) {
        const std::string file = str(L.file_name(L.table_file(t)));
        Bytes b;
        ASSERT_TRUE(m.o.files(file, &b));
        for (uint32_t i = 0; i < L.table(t).count(); ++i) {
          const ws::TensorInfo ti = L.table(t).get(i);
          const std::string name = str(ti.name);
          names.push_back(count[name] > 1 ? name + "@" + file : name);
          // The tensor's bytes: its reader's data section plus its offsets in the header.
          const uint64_t base = L.file_reader(L.table_file(t))->data_start();
          want[names.back()] = Bytes(b.begin() + long(base + ti.begin), b.begin() + long(base + ti.end));
        }
      }
    };
    for (const Way& way : kWays) {
      const std::string what = m.name + " " + way_name(way);
      h.seekable = way.seekable;
      h.feed = way.feed;
      h.read_size = way.read_size;
      const LoadResult r = modeltest::load_model(m.o.files, m.o.entry, m.o.name, h, m.o.listing);
      ASSERT_EQ(r.verdict(), "Ok") << what;
      EXPECT_EQ(r.violation, "") << what;
      EXPECT_EQ(r.convention, ws::Convention::Plain) << what;
      EXPECT_FALSE(r.config_used) << what;
      EXPECT_EQ(r.bytes_fed.count("config.json"), 0u) << what;  // never asked for
      EXPECT_EQ(r.weight_names, names) << what;
      // Every tensor loaded, begun and ended in turn, its one piece (Packed) its bytes in the file.
      ASSERT_EQ(r.weights.size(), names.size()) << what;
      EXPECT_EQ(r.ends, r.order) << what;
      for (const auto& w : r.weights) {
        EXPECT_TRUE(w.second.ended) << what << " " << w.first;
        EXPECT_EQ(w.second.bytes, want.at(w.first)) << what << " " << w.first;
        if (!w.second.bytes.empty()) {
          EXPECT_EQ(w.second.pieces.size(), 1u) << what << " " << w.first;
          EXPECT_EQ(w.second.pieces.count(int(ws::PieceRole::Packed)), 1u) << what << " " << w.first;
        }
      }
      if (way.feed == Feed::Whole && way.seekable) tensors += names.size();
    }
  }
  EXPECT_GT(tensors, 60u);
}

// output_bytes(): known at ModelReady, before any data, and exactly what each weight then hands
// out — Decode F32 / F16 with pass_stored (integers as stored), Raw with and without as_stored
// (every piece) — for every convention model and split GGUF; 0 in Headers mode and for a weight
// Decode refuses (no pass_stored: integers).
TEST(ModelStored, OutputBytesIsWhatEachWeightHandsOut) {
  struct Mode {
    ws::ModelLoadMode mode;
    ws::OutType out;
    bool pass_stored, as_stored;
  };
  const Mode modes[] = {{ws::ModelLoadMode::Decode, ws::OutType::F32, true, false},
                        {ws::ModelLoadMode::Decode, ws::OutType::F16, true, false},
                        {ws::ModelLoadMode::Raw, ws::OutType::F32, false, true},
                        {ws::ModelLoadMode::Raw, ws::OutType::F32, false, false}};
  size_t checked = 0;
  for (const Model& m : convention_models()) {
    for (const Mode& mode : modes) {
      const std::string what = m.name + " mode " + std::to_string(int(mode.mode)) + " out " + std::to_string(int(mode.out)) +
                               (mode.as_stored ? " as_stored" : "");
      std::vector<uint64_t> sizes;
      HostOptions h;
      h.mode = mode.mode;
      h.out = mode.out;
      h.pass_stored = mode.pass_stored;
      h.as_stored = mode.as_stored;
      h.on_ready = [&](const ws::ModelLoader& L) {
        sizes.clear();
        for (uint32_t i = 0; i < L.weight_count(); ++i) sizes.push_back(L.output_bytes(i));
        EXPECT_EQ(L.output_bytes(L.weight_count()), 0u) << what;
      };
      const LoadResult r = modeltest::load_model(m.o.files, m.o.entry, m.o.name, h, m.o.listing);
      ASSERT_EQ(r.verdict(), "Ok") << what;
      ASSERT_EQ(sizes.size(), r.weight_names.size()) << what;
      for (size_t i = 0; i < sizes.size(); ++i) {
        const auto it = r.weights.find(r.weight_names[i]);
        ASSERT_TRUE(it != r.weights.end()) << what << " " << r.weight_names[i];
        EXPECT_EQ(sizes[i], it->second.bytes.size()) << what << " " << r.weight_names[i];
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 200u);
  // Headers: nothing is handed out. Decode without pass_stored: the integer tensors are refused.
  const std::map<std::string, Bytes> files = mlx_with_ints();
  for (bool pass : {false, true}) {
    std::map<std::string, uint64_t> got;
    HostOptions h;
    h.pass_stored = pass;
    h.on_ready = [&](const ws::ModelLoader& L) {
      for (uint32_t i = 0; i < L.weight_count(); ++i) got[str(L.weight(i).name)] = L.output_bytes(i);
    };
    ASSERT_EQ(modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h).verdict(), "Ok");
    EXPECT_EQ(got.at("ids"), pass ? 12u : 0u);
    EXPECT_EQ(got.at("steps"), pass ? 8u : 0u);
    EXPECT_EQ(got.at("norm"), 4u);
    EXPECT_EQ(got.at("a.weight"), 64u * 4u);  // U32 [2, 4] of 4-bit values: [2, 32] decoded to f32
    h.mode = ws::ModelLoadMode::Headers;
    got.clear();
    ASSERT_EQ(modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h).verdict(), "Ok");
    for (const auto& g : got) EXPECT_EQ(g.second, 0u) << g.first;
    EXPECT_EQ(got.size(), 6u);  // a, b (scales and biases are companions), ids, mask, norm, steps
  }
}

// Names that repeat across files (UQFF's version tensors, one copy per file) are weights of their
// own: the host sees each begin; with a host keyed by name it sees the name "begin twice".
TEST(ModelStored, AsStoredUqffVersionTensorsOfEveryFile) {
  const std::string dir = kRoot + "/tests/data/conventions/uqff";
  for (bool seekable : {true, false}) {
    HostOptions h;
    h.mode = ws::ModelLoadMode::Headers;
    h.as_stored = true;
    h.seekable = seekable;
    std::vector<std::string> per_table;
    uint64_t tensors = 0;
    h.on_ready = [&](const ws::ModelLoader& L) {
      for (uint32_t t = 0; t < L.table_count(); ++t) {
        tensors += L.table(t).count();
        per_table.push_back(str(L.file_name(L.table_file(t))));
      }
    };
    const std::vector<std::string> listing = {"config.json", "residual.safetensors", "model-1.uqff", "model-0.uqff"};
    const LoadResult r = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::UqffFiles, "", h, listing);
    ASSERT_EQ(r.verdict(), "Ok");
    EXPECT_EQ(r.convention, ws::Convention::Plain);
    EXPECT_EQ(per_table, (std::vector<std::string>{"model-0.uqff", "model-1.uqff", "residual.safetensors"}));
    EXPECT_EQ(r.weight_names.size(), tensors);
    // Headers only: each file's 8-byte prefix and header, no scalar read from the data.
    for (const std::string& f : per_table) {
      Bytes b;
      ASSERT_TRUE(modeltest::disk_files(dir)(f, &b));
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | b[size_t(i)];
      EXPECT_EQ(r.bytes_fed.at(f), 8 + n) << f;
    }
  }
}

// A name in two files (UQFF's version tensors are in every part) is two weights, each its own
// file's bytes: as stored, a tensor's weight is its place in the tables, not its name.
TEST(ModelStored, AsStoredANameInTwoFilesIsTwoWeights) {
  auto file = [](const std::string& other, uint8_t fill) {
    std::vector<samplegen::RawTensor> t = {{other, "F32", {1}, {fill, fill, fill, fill}}, {"x", "U8", {3}, {fill, 1, 2}}};
    return samplegen::serialize_raw(t, {1, 0}, {}, false);
  };
  const std::map<std::string, Bytes> files = {{"m-0.uqff", file("y0", 7)}, {"m-1.uqff", file("y1", 9)}};
  for (const Way& way : kWays) {
    HostOptions h;
    h.mode = ws::ModelLoadMode::Raw;
    h.as_stored = true;
    h.seekable = way.seekable;
    h.feed = way.feed;
    h.read_size = way.read_size;
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::UqffFiles, "", h,
                                               {"m-1.uqff", "m-0.uqff"});
    ASSERT_EQ(r.verdict(), "Ok") << way_name(way);
    EXPECT_EQ(r.violation, "") << way_name(way);
    const std::vector<std::string> names = {"x@m-0.uqff", "y0", "x@m-1.uqff", "y1"};
    EXPECT_EQ(r.weight_names, names) << way_name(way);
    EXPECT_EQ(r.order, names) << way_name(way);
    EXPECT_EQ(r.weights.at("x@m-0.uqff").bytes, (Bytes{7, 1, 2})) << way_name(way);
    EXPECT_EQ(r.weights.at("x@m-1.uqff").bytes, (Bytes{9, 1, 2})) << way_name(way);
    EXPECT_EQ(r.weights.at("y1").bytes, (Bytes{9, 9, 9, 9})) << way_name(way);
  }
}

// The entry's checks stay (index <-> shards, manifest <-> blobs); the conventions' do not: every
// malformed model directory of the goldens gives, as stored, the verdict it gives without its
// convention — its entry error as before, Ok for a convention error.
TEST(ModelStored, AsStoredKeepsTheEntryChecksOnly) {
  size_t entry_errors = 0, convention_errors = 0;
  for (const Case& c : modeltest::cases()) {
    if (!c.variant) continue;
    const Opened o = modeltest::open_case(c);
    HostOptions h;
    h.mode = ws::ModelLoadMode::Validate;
    const LoadResult before = modeltest::load_model(o.files, o.entry, o.name, h, o.listing);
    h.as_stored = true;
    for (bool seekable : {true, false}) {
      h.seekable = seekable;
      const LoadResult r = modeltest::load_model(o.files, o.entry, o.name, h, o.listing);
      EXPECT_EQ(r.violation, "") << c.name;
      if (before.convention_error) {
        EXPECT_EQ(r.verdict(), "Ok") << c.name << " (was " << before.verdict() << ")";
        if (seekable) ++convention_errors;
      } else {
        EXPECT_EQ(r.verdict(), before.verdict()) << c.name;
        if (seekable && before.code != ws::Status::Ok) ++entry_errors;
      }
      EXPECT_EQ(r.convention, ws::Convention::Plain) << c.name;
    }
  }
  EXPECT_GE(entry_errors, 5u);        // shard missing, index syntax, blob missing / short, ...
  EXPECT_GE(convention_errors, 30u);  // every MLX / Ollama / UQFF rule
}

// as_stored with Decode and pass_stored: an MLX model's packed U32 words go out as stored, its
// BF16 scales and biases decode like any BF16 tensor.
TEST(ModelStored, AsStoredDecodeWithPassStored) {
  const std::map<std::string, Bytes> files = mlx_with_ints();
  HostOptions h;
  h.mode = ws::ModelLoadMode::Decode;
  h.as_stored = true;
  h.pass_stored = true;
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
  ASSERT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.weight_names, (std::vector<std::string>{"steps", "b.weight", "ids", "a.biases", "a.scales", "a.weight", "mask",
                                                      "b.biases", "b.scales", "norm"}));
  EXPECT_EQ(r.convention, ws::Convention::Plain);
  EXPECT_EQ(r.passed_stored, (std::vector<std::string>{"steps", "b.weight", "ids", "a.weight", "mask"}));
  // BF16 0x3c00 is 2^-7: f32 0x3c000000, two of them; 0xbf00 is -0.5.
  EXPECT_EQ(r.weights.at("a.scales").bytes, (Bytes{0, 0, 0, 0x3c, 0, 0, 0, 0x3c}));
  EXPECT_EQ(r.weights.at("b.biases").bytes, (Bytes{0, 0, 0, 0xbf, 0, 0, 0, 0xbf}));
  const Bytes& file = files.at("model.safetensors");
  const Bytes& aw = r.weights.at("a.weight").bytes;
  ASSERT_EQ(aw.size(), 32u);
  EXPECT_NE(std::search(file.begin(), file.end(), aw.begin(), aw.end()), file.end());  // its stored words
}

TEST(ModelStored, NeverAllocates) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "the sanitizers bring their own allocator";
#else
  size_t runs = 0;
  for (const Model& m : convention_models()) {
    for (bool seekable : {true, false}) {
      for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Decode, ws::ModelLoadMode::Raw, ws::ModelLoadMode::Validate}) {
        HostOptions h;
        h.mode = mode;
        h.seekable = seekable;
        h.as_stored = true;
        h.pass_stored = true;
        h.feed = Feed::Random;
        h.read_size = 500;
        h.count_allocations = true;
        const LoadResult r = modeltest::load_model(m.o.files, m.o.entry, m.o.name, h, m.o.listing);
        EXPECT_EQ(r.verdict(), "Ok") << m.name;
        EXPECT_EQ(r.allocations, 0) << m.name << " seekable " << seekable << " mode " << int(mode);
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 48u);
#endif
}

}  // namespace

// ws::ModelLoader: the same model whatever way its bytes come (seekable or sequential, whole
// reads, random pieces or a byte at a time, sizes known or not), never an allocation, raw pieces
// that are the stored bytes, arena retries that converge, the loader's own file rules (missing
// files, unsafe shard names, a GGUF blob, Auto entries), and work linear in the weights.
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "convention_fixtures.h"
#include "model_cases.h"
#include "model_host.h"
#include "sha256.h"
#include "weightstream/conventions.h"
#include "weightstream/reader.h"

using modeltest::Bytes;
using modeltest::Case;
using modeltest::HostOptions;
using modeltest::LoadResult;
using modeltest::Opened;
using Feed = modeltest::HostOptions::Feed;

namespace {

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

LoadResult run(const Case& c, const HostOptions& h) {
  const Opened o = modeltest::open_case(c);
  return modeltest::load_model(o.files, o.entry, o.name, h, o.listing);
}

bool is_uqff(const Case& c) { return modeltest::open_case(c).entry == ws::ModelEntry::UqffFiles; }

// A model whose convention reads tensor data before ModelReady (UQFF's scalars): from a
// sequential source it is validated, not decoded. (bitsandbytes' quant_state JSON is read as the
// stream passes, each weight resolved when its JSON has: decoded as every other model.)
bool reads_data_first(const Case& c) { return is_uqff(c); }

// Verdict and every weight's bytes, as one comparable text.
std::string summary(const LoadResult& r) {
  std::string s = r.verdict() + "\n";
  for (const auto& w : r.weights)
    s += w.first + " " + (w.second.ended ? "end " : "open ") + wstest::sha256_hex(w.second.bytes.data(), w.second.bytes.size()) + "\n";
  return s;
}

// Seekable and sequential, each with whole reads, random pieces and single bytes: one model.
TEST(ModelLoader, EveryWayOfReadingGivesTheSameModel) {
  size_t compared = 0;
  for (const Case& c : modeltest::cases()) {
    HostOptions base;
    base.mode = ws::ModelLoadMode::Decode;
    const LoadResult want = run(c, base);
    struct Way {
      bool seekable;
      Feed feed;
      uint32_t read_size;
    };
    const Way ways[] = {{true, Feed::Random, 4096}, {true, Feed::Whole, 1}, {false, Feed::Whole, 1 << 16},
                        {false, Feed::Random, 100}, {false, Feed::OneByte, 7}};
    for (const Way& way : ways) {
      HostOptions h = base;
      h.seekable = way.seekable;
      h.feed = way.feed;
      h.read_size = way.read_size;
      h.seed = uint32_t(compared + 1);
      const std::string what = c.name + (way.seekable ? " seekable" : " sequential") + " feed " +
                               std::to_string(int(way.feed)) + " read " + std::to_string(way.read_size);
      if (!way.seekable && reads_data_first(c)) {
        // A sequential UQFF model resolves after its last byte: its verdict, not its weights.
        h.mode = ws::ModelLoadMode::Validate;
        HostOptions v = base;
        v.mode = ws::ModelLoadMode::Validate;
        const LoadResult r = run(c, h);
        EXPECT_EQ(r.violation, "") << what;
        EXPECT_EQ(r.verdict(), run(c, v).verdict()) << what;
        continue;
      }
      const LoadResult r = run(c, h);
      EXPECT_EQ(r.violation, "") << what;
      if (!way.seekable && want.code == ws::Status::Ok && r.code != ws::Status::Ok) {
        // Sequential decode reads every byte: it also finds what a seekable decode skips.
        HostOptions v = base;
        v.mode = ws::ModelLoadMode::Validate;
        EXPECT_EQ(r.verdict(), run(c, v).verdict()) << what;
        continue;
      }
      if (!way.seekable && !want.ready && r.ready) {
        // A verdict from tensor data that a seekable source reads by range before ModelReady
        // (bitsandbytes' quant_state JSON) and a forward stream where it passes, after ModelReady:
        // the same error, the weights before it in file order handed out.
        EXPECT_EQ(r.verdict(), want.verdict()) << what;
        continue;
      }
      if (!way.seekable && want.code == ws::Status::QuantGroupIndexOutOfRange) {
        // A g_idx found out of range only as its weight decodes stops the load where the reading
        // order reaches that weight: file order read forward, weight order by ranges. The same
        // error either way, and the weights both completed before it equal.
        EXPECT_EQ(r.verdict(), want.verdict()) << what;
        for (const auto& w : r.weights) {
          if (want.weights.count(w.first) == 0) continue;
          EXPECT_TRUE(w.second.bytes == want.weights.at(w.first).bytes) << what << " " << w.first;
        }
        continue;
      }
      EXPECT_EQ(summary(r), summary(want)) << what;
    }
    ++compared;
  }
  EXPECT_GT(compared, 380u);
}

// Without the files' sizes the readers find truncation and trailing bytes at the end instead of at
// the header: every way of reading still agrees.
TEST(ModelLoader, SizesNotGivenEveryWayAgrees) {
  for (const Case& c : modeltest::cases()) {
    HostOptions base;
    base.mode = ws::ModelLoadMode::Validate;
    base.declare_sizes = false;
    const LoadResult want = run(c, base);
    EXPECT_EQ(want.violation, "") << c.name;
    for (bool seekable : {true, false}) {
      HostOptions h = base;
      h.seekable = seekable;
      h.feed = Feed::Random;
      h.read_size = 33;
      const LoadResult r = run(c, h);
      EXPECT_EQ(r.violation, "") << c.name;
      EXPECT_EQ(r.verdict(), want.verdict()) << c.name << (seekable ? " seekable" : " sequential");
    }
  }
}

TEST(ModelLoader, NeverAllocates) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "the sanitizers bring their own allocator";
#else
  size_t runs = 0;
  for (const Case& c : modeltest::cases()) {
    if (!c.variant && c.name.rfind("conv/", 0) != 0 && c.name.rfind("samples/", 0) != 0 &&
        c.name.find("synthetic") == std::string::npos)
      continue;
    for (bool seekable : {true, false}) {
      for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Decode, ws::ModelLoadMode::Raw, ws::ModelLoadMode::Validate}) {
        if (!seekable && mode != ws::ModelLoadMode::Validate && reads_data_first(c)) continue;
        HostOptions h;
        h.mode = mode;
        h.seekable = seekable;
        h.feed = Feed::Random;
        h.read_size = 500;
        h.count_allocations = true;
        const LoadResult r = run(c, h);
        EXPECT_EQ(r.allocations, 0) << c.name << " seekable " << seekable << " mode " << int(mode);
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 250u);
#endif
}

// Raw mode hands out the stored pieces: every piece's bytes are the file's bytes at its range, the
// same from a seekable and a sequential source.
TEST(ModelLoader, RawPiecesAreTheStoredBytes) {
  size_t pieces = 0;
  for (const Case& c : modeltest::cases()) {
    if (!modeltest::valid_model_case(c)) continue;
    const Opened o = modeltest::open_case(c);
    std::map<std::string, std::map<int, Bytes>> want;
    HostOptions h;
    h.mode = ws::ModelLoadMode::Raw;
    h.on_ready = [&](const ws::ModelLoader& L) {
      for (uint32_t i = 0; i < L.weight_count(); ++i) {
        const ws::LogicalWeight& w = L.weight(i);
        for (uint32_t k = 0; k < 4; ++k) {
          if (!w.piece[k].present()) continue;
          Bytes file;
          ASSERT_TRUE(o.files(str(L.file_name(L.table_file(w.piece[k].table))), &file));
          want[str(w.name)][int(k)] = Bytes(file.begin() + long(L.piece_begin(w.piece[k])), file.begin() + long(L.piece_end(w.piece[k])));
        }
      }
    };
    for (bool seekable : {true, false}) {
      if (!seekable && reads_data_first(c)) continue;
      h.seekable = seekable;
      h.feed = seekable ? Feed::Whole : Feed::Random;
      const LoadResult r = modeltest::load_model(o.files, o.entry, o.name, h, o.listing);
      ASSERT_EQ(r.code, ws::Status::Ok) << c.name << ": " << r.verdict();
      EXPECT_EQ(r.violation, "") << c.name;
      ASSERT_EQ(r.weights.size(), want.size()) << c.name;
      for (const auto& w : want) {
        const auto it = r.weights.find(w.first);
        ASSERT_NE(it, r.weights.end()) << c.name << " " << w.first;
        EXPECT_TRUE(it->second.ended) << c.name << " " << w.first;
        EXPECT_EQ(it->second.pieces, w.second) << c.name << " " << w.first << (seekable ? " seekable" : " sequential");
        pieces += w.second.size();
      }
    }
  }
  EXPECT_GT(pieces, 60u);
}

// From a tiny arena the loader asks for more, part by part (each header, the model, config.json,
// the scratch: one retry each at most), and ends with the same model. With estimate_arena a
// safetensors header too large for the arena fails at its length with an estimate (one retry more
// at most, when the estimate falls short); nothing else changes.
void check_arena_retries(bool estimate) {
  for (const Case& c : modeltest::cases()) {
    if (!modeltest::valid_model_case(c)) continue;
    for (bool seekable : {true, false}) {
      if (!seekable && reads_data_first(c)) continue;
      HostOptions big;
      big.seekable = seekable;
      const LoadResult want = run(c, big);
      HostOptions small = big;
      small.arena = 4096;
      small.estimate_arena = estimate;
      const LoadResult r = run(c, small);
      EXPECT_EQ(summary(r), summary(want)) << c.name;
      if (!estimate) {
        EXPECT_GE(r.attempts, 2) << c.name;
      }
      EXPECT_LE(r.attempts, int(modeltest::open_case(c).listing.size()) + (estimate ? 7 : 6)) << c.name;
      EXPECT_LT(r.arena_size, size_t(1) << 20) << c.name;
    }
  }
}

TEST(ModelLoader, ArenaRetriesConverge) { check_arena_retries(false); }
TEST(ModelLoader, ArenaRetriesConvergeWithEstimates) { check_arena_retries(true); }

// --- The loader's own file rules ----------------------------------------------------------------

std::map<std::string, Bytes> dir_of(const std::string& sub) {
  std::map<std::string, Bytes> out;
  for (const auto& f : {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                        "model-00003-of-00003.safetensors", "model.safetensors.index.json", "config.json"}) {
    Bytes b;
    EXPECT_TRUE(modeltest::disk_files(std::string(WS_SOURCE_DIR) + "/tests/data/conventions/" + sub)(f, &b)) << f;
    out[f] = b;
  }
  return out;
}

std::string text_of(const Bytes& b) { return std::string(b.begin(), b.end()); }
Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

TEST(ModelLoader, IndexNamingAShardOutsideItsDirectoryIsRefusedBeforeAnyShardIsRead) {
  std::map<std::string, Bytes> d = dir_of("sharded-mlx");
  std::string idx = text_of(d["model.safetensors.index.json"]);
  const std::string from = "\"model-00003-of-00003.safetensors\"";
  for (size_t at = idx.find(from); at != std::string::npos; at = idx.find(from)) idx.replace(at, from.size(), "\"../secret\"");
  d["model.safetensors.index.json"] = bytes_of(idx);
  std::vector<std::string> asked;
  const modeltest::Files files = [&](const std::string& name, Bytes* out) {
    asked.push_back(name);
    return modeltest::memory_files(d)(name, out);
  };
  HostOptions h;
  const LoadResult r = modeltest::load_model(files, ws::ModelEntry::ShardIndex, "model.safetensors.index.json", h);
  EXPECT_EQ(r.code, ws::Status::UnsafeShardPath);
  EXPECT_EQ(r.offset, 0u);
  EXPECT_EQ(r.tensor, "../secret");  // the name, for the message
  EXPECT_EQ(r.file, "model.safetensors.index.json");
  EXPECT_EQ(asked, std::vector<std::string>{"model.safetensors.index.json"});
}

TEST(ModelLoader, MissingFilesHaveTheirOwnCodes) {
  std::map<std::string, Bytes> d = dir_of("sharded-mlx");
  d.erase("config.json");  // a missing config.json is fine (the shards say MLX)
  HostOptions h;
  LoadResult r = modeltest::load_model(modeltest::memory_files(d), ws::ModelEntry::ShardIndex, "model.safetensors.index.json", h);
  EXPECT_EQ(r.code, ws::Status::ConventionUnknownParams) << r.verdict();  // 4-bit g32 is not derivable from shapes alone
  d.erase("model-00003-of-00003.safetensors");
  r = modeltest::load_model(modeltest::memory_files(d), ws::ModelEntry::ShardIndex, "model.safetensors.index.json", h);
  EXPECT_EQ(r.verdict(), "ShardNotGiven@0 tensor= file=model-00003-of-00003.safetensors");
  r = modeltest::load_model(modeltest::memory_files(d), ws::ModelEntry::ShardIndex, "nope.index.json", h);
  EXPECT_EQ(r.verdict(), "FileMissing@0 tensor= file=nope.index.json");
}

TEST(ModelLoader, AGgufBlobInAManifestIsRefused) {
  const std::string dir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/ollama";
  const std::string blob = "blobs/sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42";
  Bytes gguf;
  ASSERT_TRUE(modeltest::disk_files(std::string(WS_SOURCE_DIR) + "/tests/data/synthetic/gguf")("align64.gguf", &gguf));
  const modeltest::Files files = [&](const std::string& name, Bytes* out) {
    if (name == blob) {
      *out = gguf;
      return true;
    }
    return modeltest::disk_files(dir)(name, out);
  };
  HostOptions h;
  h.declare_sizes = false;  // (its size is not the manifest's: that would be said first)
  const LoadResult r = modeltest::load_model(files, ws::ModelEntry::OllamaManifest, "manifest.json", h);
  EXPECT_EQ(r.verdict(), "ManifestBlobNotSafetensors@0 tensor=a.weight file=" + blob);
}

TEST(ModelLoader, AutoEntryFindsTheKindOfModel) {
  const std::string conv = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/";
  HostOptions h;
  h.mode = ws::ModelLoadMode::Headers;
  LoadResult r = modeltest::load_model(modeltest::disk_files(conv + "ollama"), ws::ModelEntry::Auto, "manifest.json", h);
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.convention, ws::Convention::Ollama);
  EXPECT_EQ(r.weight_names.size(), 7u);  // a, b, c, lin.bias, norm.weight; down_proj, up_proj (README)
  r = modeltest::load_model(modeltest::disk_files(conv + "sharded-mlx"), ws::ModelEntry::Auto, "model.safetensors.index.json", h);
  EXPECT_EQ(r.convention, ws::Convention::Mlx);
  EXPECT_TRUE(r.config_used);
  r = modeltest::load_model(modeltest::disk_files(conv + "mlx"), ws::ModelEntry::Auto, "model.safetensors", h);
  EXPECT_EQ(r.convention, ws::Convention::Mlx);
  r = modeltest::load_model(modeltest::disk_files(conv + "uqff"), ws::ModelEntry::Auto, "model-0.uqff", h,
                            {"config.json", "residual.safetensors", "model-1.uqff", "model-0.uqff"});
  EXPECT_EQ(r.convention, ws::Convention::Uqff);
}

// A file that disappears after its header was read — here while the UQFF scalars (format tags,
// versions) are fetched from the data — ends the load with FileMissing naming the scalar's file.
// (The scalar loop used to leave a "missing" answer unconsumed and ask for the same bytes again,
// forever.)
TEST(ModelLoader, AFileGoneWhileUqffScalarsAreReadIsFileMissing) {
  const std::string dir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/uqff";
  const modeltest::Files files = modeltest::disk_files(dir);
  ws::ModelLoaderOptions opt;
  opt.mode = ws::ModelLoadMode::Headers;  // scalars are read even for headers only
  std::vector<uint64_t> arena(1 << 17);
  ws::ModelLoader L(arena.data(), arena.size() * 8, opt);
  for (const char* name : {"model-0.uqff", "model-1.uqff", "residual.safetensors"})
    ASSERT_EQ(L.add_file(name, strlen(name)), ws::Status::Ok);
  ASSERT_EQ(L.open(ws::ModelEntry::UqffFiles, "", 0), ws::Status::Ok);
  std::map<uint32_t, Bytes> content;
  ws::ModelEvent e;
  int steps = 0, missing_answers = 0;
  for (; steps < 100000; ++steps) {
    e = L.next();
    if (e.type != ws::ModelEventType::NeedRead) {
      if (e.type == ws::ModelEventType::Error || e.type == ws::ModelEventType::Done) break;
      continue;
    }
    const ws::Reader* r = L.file_reader(e.file);
    // Past a validated header: the scalar reads. Every one of them finds the file gone.
    if (r && r->data_start() != 0 && e.offset >= r->data_start()) {
      ++missing_answers;
      L.file_missing();
      continue;
    }
    Bytes& b = content[e.file];
    if (b.empty()) {
      ASSERT_TRUE(files(str(L.file_name(e.file)), &b));
    }
    if (e.offset >= b.size()) {
      L.end_of_file();
      continue;
    }
    const size_t n = size_t(std::min<uint64_t>(e.length, b.size() - e.offset));
    L.feed(b.data() + e.offset, n);
  }
  ASSERT_EQ(e.type, ws::ModelEventType::Error) << "no verdict after " << steps << " steps";
  EXPECT_EQ(missing_answers, 1);
  EXPECT_EQ(L.error().code, ws::Status::FileMissing);
  EXPECT_EQ(L.error().offset, 0u);
  // The first scalar of the first file, in its table's order.
  EXPECT_EQ(str(L.file_name(L.error_file())), "model-0.uqff");
  ASSERT_NE(L.error().tensor_name, nullptr);
  EXPECT_EQ(std::string(L.error().tensor_name, L.error().tensor_name_size), "model.layers.0.self_attn.k_proj.weight.dtype");
}

// UQFF files in mistral.rs's order whatever order the listing gives: by number, then residual.
TEST(ModelLoader, UqffFilesAreOrderedByNumber) {
  HostOptions h;
  h.mode = ws::ModelLoadMode::Headers;
  const std::string dir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/uqff";
  std::vector<std::string> order;
  h.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t t = 0; t < L.table_count(); ++t) order.push_back(str(L.file_name(L.table_file(t))));
  };
  const LoadResult r = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::UqffFiles, "", h,
                                             {"residual.safetensors", "README.md", "model-1.uqff", "model-0.uqff"});
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(order, (std::vector<std::string>{"model-0.uqff", "model-1.uqff", "residual.safetensors"}));
}

// A stream where the held blocks are freed out of order: A's companions complete it while B is
// still held below the top, then C (larger than A) needs room that is only there once B is moved
// down over A's freed block. The bytes are the seekable decode's, and the arena is the dry run's.
TEST(ModelLoader, SequentialHeldBlocksAreCompacted) {
  auto linear = [](const std::string& p, uint64_t rows, std::vector<samplegen::RawTensor>* t) {
    Bytes w(rows * 16), s(rows * 2), b(rows * 2);  // [rows, 4] U32 4-bit g32: one group per row
    for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t(i * 37 + rows);
    for (size_t i = 0; i < s.size(); i += 2) s[i + 1] = 0x3c;  // bf16 ~1.0
    for (size_t i = 0; i < b.size(); i += 2) b[i + 1] = 0xbf;  // bf16 ~-0.5
    t->push_back({p + ".weight", "U32", {rows, 4}, w});
    t->push_back({p + ".scales", "BF16", {rows, 1}, s});
    t->push_back({p + ".biases", "BF16", {rows, 1}, b});
  };
  std::vector<samplegen::RawTensor> t;
  linear("a", 2, &t);  // 0 1 2
  linear("b", 4, &t);  // 3 4 5
  linear("c", 8, &t);  // 6 7 8
  // Data: A.w B.w A.s A.b (A done, below B) C.w (needs room) B.s B.b C.s C.b.
  const std::vector<size_t> order = {0, 3, 1, 2, 6, 4, 5, 7, 8};
  const std::map<std::string, Bytes> files = {
      {"model.safetensors", samplegen::serialize_raw(t, order, {{"format", "mlx"}}, false)},
      {"config.json", bytes_of("{\"quantization\": {\"group_size\": 32, \"bits\": 4}}")}};
  HostOptions h;
  const LoadResult want = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
  ASSERT_EQ(want.verdict(), "Ok");
  ASSERT_EQ(want.weights.size(), 3u);
  EXPECT_EQ(want.weights.at("c.weight").bytes.size(), 8u * 32 * 4);
  for (Feed feed : {Feed::Whole, Feed::OneByte}) {
    h.seekable = false;
    h.feed = feed;
    h.arena = 4096;  // the retries find the exact need, so the held region is the dry run's peak
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
    EXPECT_EQ(r.violation, "");
    EXPECT_EQ(summary(r), summary(want));
    EXPECT_EQ(r.order, (std::vector<std::string>{"a.weight", "b.weight", "c.weight"}));  // as they complete
  }
}

// --- Linear work --------------------------------------------------------------------------------

// An MLX file of n 4-bit g32 linears ([2, 4] U32 weight, BF16 scales and biases [2, 1]).
Bytes mlx_model(uint32_t n, std::string* config) {
  std::vector<samplegen::RawTensor> tensors;
  std::vector<size_t> order;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".proj.";
    tensors.push_back({p + "biases", "BF16", {2, 1}, Bytes(4, 0x3f)});
    tensors.push_back({p + "scales", "BF16", {2, 1}, Bytes(4, 0x3c)});
    tensors.push_back({p + "weight", "U32", {2, 4}, Bytes(32, 0x5a)});
  }
  for (size_t i = 0; i < tensors.size(); ++i) order.push_back(i);
  *config = "{\"quantization\": {\"group_size\": 32, \"bits\": 4}}";
  return samplegen::serialize_raw(tensors, order, {{"format", "mlx"}}, false);
}

void load_mlx_model(uint32_t n, ws::ModelLoadMode mode, bool seekable) {
  std::string config;
  const std::map<std::string, Bytes> files = {{"model.safetensors", mlx_model(n, &config)}, {"config.json", bytes_of(config)}};
  HostOptions h;
  h.mode = mode;
  h.seekable = seekable;
  h.arena = size_t(n) * 2000 + (1 << 20);  // tables, weights and hash: about 1 KB per weight
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.weight_names.size(), n);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.violation, "");
  if (mode == ws::ModelLoadMode::Decode) {
    ASSERT_EQ(r.weights.size(), n);
    // Every linear holds the same bytes: the last decodes as the first, 2 x 32 f32 values.
    const auto& first = r.weights.at("model.layers.0.proj.weight").bytes;
    EXPECT_EQ(first.size(), 2u * 32 * 4);
    EXPECT_EQ(r.weights.at("model.layers." + std::to_string(n - 1) + ".proj.weight").bytes, first);
  }
}

// estimate_arena on a large header (20,000 expert tensors as DeepSeek-V3 names them, ≈ 2.3 MB) from
// a 64 KiB arena: the first attempt stops after the 8-byte length, the second is the only parse and
// succeeds; without the option the first attempt counts the whole header through.
TEST(ModelLoader, EstimatedArenaParsesALargeHeaderOnce) {
  std::vector<samplegen::RawTensor> tensors;
  std::vector<size_t> order;
  for (uint32_t i = 0; i < 20000; ++i) {
    tensors.push_back({"model.layers." + std::to_string(i / 256) + ".mlp.experts." + std::to_string(i % 256) + ".up_proj.weight",
                       "BF16", {1, 2}, Bytes(4, 0x3c)});
    order.push_back(i);
  }
  const std::map<std::string, Bytes> files = {{"model.safetensors", samplegen::serialize_raw(tensors, order, {}, false)}};
  for (bool estimate : {true, false}) {
    HostOptions h;
    h.mode = ws::ModelLoadMode::Headers;
    h.arena = 64 << 10;
    h.estimate_arena = estimate;
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
    EXPECT_EQ(r.verdict(), "Ok") << estimate;
    EXPECT_EQ(r.weight_names.size(), 20000u) << estimate;
    if (estimate) {
      EXPECT_EQ(r.attempts, 2);
      EXPECT_EQ(r.read_first_attempt, 8u);
    } else {
      EXPECT_GT(r.read_first_attempt, 1000000u);
    }
  }
}

// A plain model copies its tensors' half of the name hash into the weights' half (build_plain,
// at the first lookup): every weight is still found by its name, in two tables (a sharded model),
// a duplicate name (first table first) included, and an absent name is not.
TEST(LogicalModel, PlainWeightsAreFoundByName) {
  std::vector<std::vector<uint64_t>> arenas;
  std::vector<std::unique_ptr<ws::Reader>> readers;
  std::vector<Bytes> files;
  for (uint32_t f = 0; f < 2; ++f) {
    std::vector<samplegen::RawTensor> tensors;
    std::vector<size_t> order;
    for (uint32_t i = 0; i < 1500; ++i) {
      tensors.push_back({"model.layers." + std::to_string(f * 1500 + i) + ".mlp.up_proj.weight", "BF16", {1, 2}, Bytes(4, 0x3c)});
      order.push_back(i);
    }
    tensors.push_back({"shared.weight", "F32", {1}, Bytes(4, 0)});
    order.push_back(1500);
    files.push_back(samplegen::serialize_raw(tensors, order, {}, false));
    arenas.emplace_back(1 << 17);
    readers.emplace_back(new ws::Reader(arenas.back().data(), arenas.back().size() * 8));
    ws::Reader& r = *readers.back();
    ASSERT_EQ(r.next().type, ws::EventType::NeedInput);
    r.feed(files.back().data(), files.back().size());
    ws::Event e;
    while ((e = r.next()).type != ws::EventType::HeaderReady) ASSERT_NE(e.type, ws::EventType::Error);
  }
  std::vector<ws::LogicalWeight> weights(3002);
  std::vector<uint32_t> slots(ws::LogicalModel::index_slots_for(3002));
  ws::LogicalModel m(weights.data(), uint32_t(weights.size()));
  m.set_index_slots(slots.data(), uint32_t(slots.size()));
  for (const auto& r : readers) ASSERT_EQ(m.add_table(&r->tensors(), r->data_start()), ws::Status::Ok);
  ASSERT_EQ(m.build_plain(), ws::Status::Ok);
  ASSERT_EQ(m.weight_count(), 3002u);
  for (uint32_t w = 0; w < m.weight_count(); ++w) {
    const ws::StrView n = m.weight(w).name;
    const bool shared = n.equals("shared.weight");
    EXPECT_EQ(m.find(n.data, n.size), shared ? 1500u : w) << str(n);
    ws::PieceRole role = ws::PieceRole::Scales;
    // Every tensor's owner is the weight made of it, the second `shared.weight` included (by
    // number: a plain model's weight k is tensor k, no name lookup involved).
    EXPECT_EQ(m.owner(m.weight(w).ref(ws::PieceRole::Packed), &role), w) << str(n);
    EXPECT_EQ(role, ws::PieceRole::Packed);
  }
  EXPECT_EQ(m.find("model.layers.3000.mlp.up_proj.weight", 36), ws::kNoTensor);
}

// 50,000 weights (150,000 tensors) build, plan and decode in one attempt with the arena the model's
// size suggests, seekable and sequential. How the cost grows with the weight count is measured by
// ws-bench-model (a benchmark that prints the ratios; a timed test fails on a loaded machine).
TEST(ModelLoader, FiftyThousandWeightsLoadInOneAttempt) {
  for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Headers, ws::ModelLoadMode::Decode}) load_mlx_model(50000, mode, true);
  load_mlx_model(50000, ws::ModelLoadMode::Decode, false);
}

}  // namespace

namespace {

// Not a check: with WS_MODEL_SEED_DIR set, writes every golden case of 64 KiB or less as a
// fuzz_model_loader input (`u8 chunk seed, u8 entry kind, u8 file count - 1`, then per file
// `u8 name length, name, u32 LE length, bytes`, the last file without its length) — how
// fuzz/corpus/fuzz_model_loader was made.
TEST(ModelLoader, WriteFuzzSeedsWhenAsked) {
  const char* dir = getenv("WS_MODEL_SEED_DIR");
  if (!dir) GTEST_SKIP() << "set WS_MODEL_SEED_DIR to write the fuzz_model_loader seeds";
  uint8_t seed = 1;
  size_t written = 0;
  for (const Case& c : modeltest::cases()) {
    const Opened o = modeltest::open_case(c);
    // The entry first, then the files the model may ask for (at most 4 more).
    std::vector<std::pair<std::string, Bytes>> files;
    Bytes b;
    if (o.entry != ws::ModelEntry::UqffFiles) {
      if (!o.files(o.name, &b)) continue;
      files.push_back({o.name, b});
    }
    std::vector<std::string> others = o.listing;
    if (o.entry == ws::ModelEntry::File) others = {"config.json"};
    if (o.entry == ws::ModelEntry::ShardIndex)
      others = {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                "model-00003-of-00003.safetensors", "config.json"};
    if (o.entry == ws::ModelEntry::OllamaManifest)
      others = {"blobs/sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42",
                "blobs/sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7"};
    for (const std::string& n : others)
      if (files.size() < 5 && n != o.name && o.files(n, &b)) files.push_back({n, b});
    if (files.empty()) continue;
    Bytes out = {seed++, uint8_t(o.entry), uint8_t(files.size() - 1)};
    for (size_t i = 0; i < files.size(); ++i) {
      out.push_back(uint8_t(files[i].first.size()));
      out.insert(out.end(), files[i].first.begin(), files[i].first.end());
      if (i + 1 < files.size())
        for (int k = 0; k < 4; ++k) out.push_back(uint8_t(files[i].second.size() >> (8 * k)));
      out.insert(out.end(), files[i].second.begin(), files[i].second.end());
    }
    if (out.size() > 65536) continue;
    std::string name = c.name;
    for (char& ch : name)
      if (ch == '/') ch = '_';
    FILE* f = fopen((std::string(dir) + "/" + name).c_str(), "wb");
    ASSERT_NE(f, nullptr) << name;
    fwrite(out.data(), 1, out.size(), f);
    fclose(f);
    ++written;
  }
  EXPECT_GT(written, 300u);
}

}  // namespace

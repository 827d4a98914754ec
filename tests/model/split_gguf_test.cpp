// Split GGUF models through ws::ModelLoader (FORMATS.md §8), on the fixtures ggml's own writer
// made (tests/data/split-gguf, tools/ggml-fixtures/make_split_gguf.cpp): every case of its
// expected.json — the valid split models (three splits, a metadata-only first split, one split,
// opened at their first or last split) decoded to exactly the unsplit model's values, and every
// malformed neighbour's status, split file, offset, values and tensor — seekable and sequential,
// whole reads, random pieces and single bytes, sizes known or not, without allocating. Then the
// caller's list of splits (llama.cpp's `splits`), the names against llama.cpp's own
// llama_split_path when its library is installed, and what a later split's extra key-values are.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "mini_json.h"
#include "model_host.h"
#include "sha256.h"
#include "weightstream/gguf_split.h"

using clitest::Json;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

const std::string kDir = std::string(WS_SOURCE_DIR) + "/tests/data/split-gguf";

const Json& expected() {
  static const Json j = [] {
    std::ifstream in(kDir + "/expected.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return clitest::parse_json(ss.str());
  }();
  return j;
}

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

LoadResult load(const Json& c, const HostOptions& h) {
  return modeltest::load_model(modeltest::disk_files(kDir + "/" + c["dir"].str()), ws::ModelEntry::Auto, c["entry"].str(), h);
}

// What a load produced, as one comparable text: the verdict with its values, every weight's bytes.
std::string summary(const LoadResult& r) {
  std::string s = r.verdict();
  if (r.has_found) s += " found=" + std::to_string(r.found);
  if (r.has_expected) s += " expected=" + std::to_string(r.expected);
  if (!r.detail.empty()) s += " detail=" + r.detail;
  s += "\n";
  for (const std::string& n : r.weight_names) s += n + "\n";
  for (const auto& w : r.weights)
    s += w.first + " " + (w.second.ended ? "end " : "open ") + wstest::sha256_hex(w.second.bytes.data(), w.second.bytes.size()) + "\n";
  return s;
}

TEST(SplitGguf, ExpectedCoversEveryRule) {
  std::vector<std::string> codes;
  for (const Json& c : expected()["cases"].items)
    if (c["valid"].type == Json::Bool && !c["valid"].boolean) codes.push_back(c["code"].str());
  for (const char* want : {"GgufSplitFirstNotZero", "GgufSplitCountMismatch", "GgufSplitNoMismatch", "GgufSplitNoMissing",
                           "GgufSplitKeyType", "GgufSplitDuplicateTensor", "GgufSplitTensorCountMismatch",
                           "GgufSplitTensorCountMissing", "GgufSplitNameMismatch", "GgufSplitNotGguf", "GgufSplitMissing"})
    EXPECT_NE(std::find(codes.begin(), codes.end(), want), codes.end()) << want;
}

// Each case: the status, split file, offset and values expected.json gives (malformed), or the
// unsplit model's exact weights (valid).
TEST(SplitGguf, EveryCaseAsExpected) {
  size_t n = 0;
  for (const Json& c : expected()["cases"].items) {
    HostOptions h;
    h.mode = ws::ModelLoadMode::Decode;
    const LoadResult r = load(c, h);
    const std::string what = c["case"].str();
    EXPECT_EQ(r.violation, "") << what;
    if (c["valid"].boolean) {
      EXPECT_EQ(r.verdict(), "Ok") << what;
      EXPECT_EQ(r.weight_names.size(), c["tensors"].u64()) << what;
      EXPECT_EQ(r.weights.size(), c["tensors"].u64()) << what;
      if (c.has("same_as")) {
        const LoadResult one =
            modeltest::load_model(modeltest::disk_files(kDir), ws::ModelEntry::File, c["same_as"].str(), h);
        ASSERT_EQ(one.verdict(), "Ok");
        EXPECT_EQ(summary(r), summary(one)) << what << ": the splits are the unsplit model";
      }
    } else {
      EXPECT_EQ(ws::status_name(r.code), c["code"].str()) << what << ": " << r.verdict();
      EXPECT_EQ(r.file, c["file"].str()) << what;
      EXPECT_EQ(r.offset, c["offset"].u64()) << what;
      EXPECT_EQ(r.has_found, c.has("found")) << what;
      EXPECT_EQ(r.has_expected, c.has("expected")) << what;
      if (c.has("found")) {
        EXPECT_EQ(r.found, c["found"].u64()) << what;
      }
      if (c.has("expected")) {
        EXPECT_EQ(r.expected, c["expected"].u64()) << what;
      }
      EXPECT_EQ(r.tensor, c.has("tensor") ? c["tensor"].str() : "") << what;
      if (c.has("tensor_index")) {
        EXPECT_EQ(r.tensor_index, c["tensor_index"].u64()) << what;
      }
      EXPECT_EQ(r.detail, c.has("detail") ? c["detail"].str() : "") << what;
      EXPECT_FALSE(r.ready) << what << ": no model is handed on";
    }
    ++n;
  }
  EXPECT_GE(n, 20u);
}

// Seekable and sequential; whole reads, random pieces, one byte at a time; sizes given or not;
// every mode: one verdict and the same bytes.
TEST(SplitGguf, EveryWayOfReadingAgrees) {
  struct Way {
    bool seekable;
    Feed feed;
    uint32_t read_size;
    bool sizes;
  };
  const Way ways[] = {{true, Feed::Random, 4096, true}, {true, Feed::OneByte, 64, true},    {true, Feed::Whole, 1, false},
                      {false, Feed::Whole, 1 << 16, true}, {false, Feed::Random, 100, false}, {false, Feed::OneByte, 7, true}};
  for (const Json& c : expected()["cases"].items) {
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Decode, ws::ModelLoadMode::Validate, ws::ModelLoadMode::Headers}) {
      HostOptions base;
      base.mode = mode;
      const LoadResult want = load(c, base);
      uint32_t seed = 1;
      for (const Way& w : ways) {
        HostOptions h = base;
        h.seekable = w.seekable;
        h.feed = w.feed;
        h.read_size = w.read_size;
        h.declare_sizes = w.sizes;
        h.seed = seed++;
        const LoadResult r = load(c, h);
        const std::string what = c["case"].str() + " mode " + std::to_string(int(mode)) + (w.seekable ? " seekable" : " sequential") +
                                 " feed " + std::to_string(int(w.feed)) + " read " + std::to_string(w.read_size);
        EXPECT_EQ(r.violation, "") << what;
        EXPECT_EQ(summary(r), summary(want)) << what;
      }
    }
  }
}

TEST(SplitGguf, NeverAllocates) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "the sanitizers bring their own allocator";
#else
  for (const Json& c : expected()["cases"].items) {
    for (bool seekable : {true, false}) {
      HostOptions h;
      h.seekable = seekable;
      h.count_allocations = true;
      h.feed = Feed::Random;
      const LoadResult r = load(c, h);
      EXPECT_EQ(r.allocations, 0) << c["case"].str();
    }
  }
#endif
}

// The arena the loader asks for, not more: a tiny first arena converges in a few retries, and
// the model is the same.
TEST(SplitGguf, ArenaRetriesConverge) {
  for (const Json& c : expected()["cases"].items) {
    HostOptions big, small;
    small.arena = 256;
    const LoadResult want = load(c, big), r = load(c, small);
    EXPECT_EQ(summary(r), summary(want)) << c["case"].str();
    EXPECT_LE(r.attempts, 8) << c["case"].str();
  }
}

// llama.cpp's list of splits: taken in name order as given; it must be split.count long and start
// with split 0.
TEST(SplitGguf, AListOfSplits) {
  const modeltest::Files files = modeltest::disk_files(kDir);
  const std::vector<std::string> all = {"tiny-00003-of-00003.gguf", "tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf"};
  HostOptions h;
  LoadResult r = modeltest::load_model(files, ws::ModelEntry::Auto, "tiny", h, all);
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.weights.size(), 6u);
  // Other names in a listing (a README, config.json) are not the model's.
  std::vector<std::string> listing = all;
  listing.push_back("README.md");
  r = modeltest::load_model(files, ws::ModelEntry::GgufSplits, "tiny", h, listing);
  EXPECT_EQ(r.verdict(), "Ok");
  // Two of three: the first split's split.count says 3.
  r = modeltest::load_model(files, ws::ModelEntry::GgufSplits, "tiny", h, {"tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf"});
  EXPECT_EQ(summary(r), "GgufSplitCountMismatch@" + std::to_string(r.offset) + " tensor= file=tiny-00001-of-00003.gguf found=2 expected=3\n");
  EXPECT_GT(r.offset, 0u);
  // One more than the model has (the unsplit file sorts after the splits).
  r = modeltest::load_model(files, ws::ModelEntry::GgufSplits, "tiny", h,
                            {"tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf", "tiny.gguf"});
  EXPECT_EQ(r.code, ws::Status::GgufSplitCountMismatch);
  EXPECT_EQ(r.found, 4u);
  // Without the first: the list's first is split 1.
  r = modeltest::load_model(files, ws::ModelEntry::GgufSplits, "tiny", h, {"tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf"});
  EXPECT_EQ(r.code, ws::Status::GgufSplitFirstNotZero);
  EXPECT_EQ(r.file, "tiny-00002-of-00003.gguf");
  EXPECT_EQ(r.found, 1u);
  // A whole model given as a one-name list is that model.
  r = modeltest::load_model(files, ws::ModelEntry::GgufSplits, "tiny", h, {"tiny.gguf"});
  EXPECT_EQ(r.verdict(), "Ok");
  // A UQFF name among them makes the list a UQFF directory (Auto), where the splits are ignored.
  r = modeltest::load_model(files, ws::ModelEntry::Auto, "x", h, {"tiny-00001-of-00003.gguf", "model-0.uqff"});
  EXPECT_EQ(r.code, ws::Status::FileMissing) << r.verdict();
  EXPECT_EQ(r.file, "model-0.uqff");
}

// The splits the loader asks for, in order, and its table: split order whatever the entry.
TEST(SplitGguf, FilesAndTablesAreInSplitOrder) {
  for (const char* entry : {"tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf"}) {
    std::vector<std::string> asked, tables;
    std::vector<uint32_t> splits;
    HostOptions h;
    h.mode = ws::ModelLoadMode::Headers;
    h.on_ready = [&](const ws::ModelLoader& L) {
      EXPECT_EQ(L.split_count(), 3u);
      EXPECT_EQ(L.format(), ws::Format::Gguf);
      for (uint32_t f = 0; f < L.file_count(); ++f) {
        asked.push_back(str(L.file_name(f)));
        splits.push_back(L.file_split(f));
        EXPECT_EQ(L.file_kind(f), ws::ModelFileKind::Split);
      }
      for (uint32_t t = 0; t < L.table_count(); ++t) tables.push_back(str(L.file_name(L.table_file(t))));
      // Weights in split order: split 1's first tensor is the model's first.
      EXPECT_EQ(str(L.weight(0).name), "token_embd.weight");
      EXPECT_EQ(L.weight_file(0), L.table_file(0));
      EXPECT_EQ(L.weight_file(5), L.table_file(2));
    };
    const LoadResult r = modeltest::load_model(modeltest::disk_files(kDir), ws::ModelEntry::File, entry, h);
    ASSERT_EQ(r.verdict(), "Ok") << entry;
    EXPECT_EQ(asked.front(), entry) << "the entry is file 0";
    EXPECT_EQ(tables, (std::vector<std::string>{"tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf"}));
    EXPECT_EQ(splits.front(), uint32_t(entry[9] - '1'));
  }
}

// Key-values other than split.* in a later split: not the model's (llama.cpp reads the first
// split's only), handed on as Kv events of their own file, counted — and the model is valid.
TEST(SplitGguf, ALaterSplitsExtraKeyValuesAreReportedNotMerged) {
  for (const Json& c : expected()["cases"].items) {
    if (!c.has("foreign_file")) continue;
    HostOptions h;
    bool seen = false;
    h.on_ready = [&](const ws::ModelLoader& L) {
      for (uint32_t f = 0; f < L.file_count(); ++f) {
        const bool that = str(L.file_name(f)) == c["foreign_file"].str();
        EXPECT_EQ(L.split_foreign_kvs(f), that ? c["foreign_kvs"].u64() : 0u) << str(L.file_name(f));
        EXPECT_EQ(L.split_foreign_offset(f), that ? c["foreign_offset"].u64() : 0u);
        seen = seen || that;
      }
    };
    const LoadResult r = load(c, h);
    EXPECT_EQ(r.verdict(), "Ok");
    EXPECT_TRUE(seen);
  }
  // The first split's own key-values are the model's, not "foreign".
  HostOptions h;
  h.on_ready = [&](const ws::ModelLoader& L) {
    for (uint32_t f = 0; f < L.file_count(); ++f) EXPECT_EQ(L.split_foreign_kvs(f), 0u);
  };
  EXPECT_EQ(modeltest::load_model(modeltest::disk_files(kDir), ws::ModelEntry::File, "tiny-00001-of-00003.gguf", h).verdict(), "Ok");
}

TEST(SplitGguf, NamesAndParsing) {
  char b[64];
  EXPECT_EQ(ws::gguf_split_name("dir/m", 5, 0, 3, b, sizeof b), 25u);
  EXPECT_STREQ(b, "dir/m-00001-of-00003.gguf");
  EXPECT_EQ(ws::gguf_split_name("m", 1, 65534, 65535, b, sizeof b), 21u);
  EXPECT_STREQ(b, "m-65535-of-65535.gguf");
  EXPECT_EQ(ws::gguf_split_name("m", 1, 3, 3, b, sizeof b), 0u);   // no such split
  EXPECT_EQ(ws::gguf_split_name("m", 1, 0, 3, b, 21), 0u);         // no room for the NUL
  size_t prefix = 0;
  uint32_t no = 0;
  EXPECT_TRUE(ws::gguf_split_parse("dir/m-00002-of-00003.gguf", 25, 3, &prefix, &no));
  EXPECT_EQ(prefix, 5u);
  EXPECT_EQ(no, 1u);
  for (const char* bad : {"m-00002-of-00004.gguf", "m-00000-of-00003.gguf", "m-00004-of-00003.gguf", "-00001-of-00003.gguf",
                          "m-0001-of-00003.gguf", "m-00001-of-00003.GGUF", "m_00001-of-00003.gguf", "m-00001_of-00003.gguf",
                          "m-000a1-of-00003.gguf"})
    EXPECT_FALSE(ws::gguf_split_parse(bad, strlen(bad), 3, &prefix, &no)) << bad;
}

// The names against llama.cpp's own llama_split_path / llama_split_prefix (libllama of the npm
// package the benchmark installs), when it is there.
TEST(SplitGguf, NamesAreLlamaCpps) {
  const std::string lib = std::string(WS_SOURCE_DIR) + "/bench/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.5.0.so";
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "libllama not found (npm ci --prefix bench)";
  auto path = reinterpret_cast<int (*)(char*, size_t, const char*, int, int)>(dlsym(h, "llama_split_path"));
  auto prefix_of = reinterpret_cast<int (*)(char*, size_t, const char*, int, int)>(dlsym(h, "llama_split_prefix"));
  ASSERT_TRUE(path && prefix_of);
  for (const char* pre : {"a", "models/llama-3-70b-Q4_K_M", "x/y/z"}) {
    for (uint32_t count : {1u, 2u, 3u, 9u, 10u, 99u, 100u, 12345u, 65535u}) {
      for (uint32_t no : {0u, 1u, count / 2, count - 1}) {
        if (no >= count) continue;
        char want[512], got[512];
        const int n = path(want, sizeof want, pre, int(no), int(count));
        const size_t m = ws::gguf_split_name(pre, strlen(pre), no, count, got, sizeof got);
        ASSERT_EQ(std::string(got, m), std::string(want, size_t(n)));
        size_t plen = 0;
        uint32_t parsed = 0;
        ASSERT_TRUE(ws::gguf_split_parse(got, m, count, &plen, &parsed));
        char up[512];
        const int k = prefix_of(up, sizeof up, want, int(no), int(count));
        EXPECT_EQ(plen, size_t(k));
        EXPECT_EQ(parsed, no);
      }
    }
  }
  dlclose(h);
}

}  // namespace

namespace {

// fuzz_model_loader's input: `u8 seed, u8 entry kind (| digest bits), u8 count - 1`, then per file
// `u8 name length, name, u32 LE length, bytes`, the last file without its length.
void write_seed(const std::string& path, uint8_t seed, uint8_t kind, const std::vector<std::pair<std::string, modeltest::Bytes>>& files) {
  modeltest::Bytes out = {seed, kind, uint8_t(files.size() - 1)};
  for (size_t i = 0; i < files.size(); ++i) {
    out.push_back(uint8_t(files[i].first.size()));
    out.insert(out.end(), files[i].first.begin(), files[i].first.end());
    if (i + 1 < files.size())
      for (int k = 0; k < 4; ++k) out.push_back(uint8_t(files[i].second.size() >> (8 * k)));
    out.insert(out.end(), files[i].second.begin(), files[i].second.end());
  }
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  fwrite(out.data(), 1, out.size(), f);
  fclose(f);
}

// Not a check: with WS_MODEL_SEED_DIR set, writes every case of expected.json as a
// fuzz_model_loader seed (the entry first, then its other files), the three-split model also as
// a list of splits (GgufSplits) and with digests (every file's true one; the last one wrong).
TEST(SplitGguf, WriteFuzzSeedsWhenAsked) {
  const char* dir = getenv("WS_MODEL_SEED_DIR");
  if (!dir) GTEST_SKIP() << "set WS_MODEL_SEED_DIR to write the fuzz_model_loader seeds";
  uint8_t seed = 101;
  for (const Json& c : expected()["cases"].items) {
    const modeltest::Files files = modeltest::disk_files(kDir + "/" + c["dir"].str());
    std::vector<std::pair<std::string, modeltest::Bytes>> list;
    modeltest::Bytes b;
    ASSERT_TRUE(files(c["entry"].str(), &b));
    list.push_back({c["entry"].str(), b});
    for (const Json& f : c["files"].items)
      if (f.str() != c["entry"].str() && files(f.str(), &b)) list.push_back({f.str(), b});
    if (list.size() > 5) continue;
    std::string name = "split_" + c["case"].str();
    for (char& ch : name)
      if (ch == '/' || ch == ' ' || ch == '(' || ch == ')') ch = '_';
    write_seed(std::string(dir) + "/" + name, seed++, uint8_t(ws::ModelEntry::File), list);
    if (c["case"].str() == "tiny" && list.size() == 3) {
      write_seed(std::string(dir) + "/split_tiny_list", seed++, uint8_t(ws::ModelEntry::GgufSplits), list);
      write_seed(std::string(dir) + "/split_tiny_true_digests", seed++, uint8_t(ws::ModelEntry::File) | 16, list);
      write_seed(std::string(dir) + "/split_tiny_wrong_digest", seed++, uint8_t(ws::ModelEntry::File) | 32, list);
    }
  }
}

}  // namespace

// ws::ModelLoader's SHA-256 verification (model_loader.h: expect_sha256, set_file_sha256,
// verify_blobs): a model whose files match loads with every file Verified; one byte changed in the
// first, a middle or the last piece of a file is DigestMismatch naming that file with both digests,
// before that file's last tensor is handed on as complete and before Done — seekable and
// sequential, whole reads, random pieces and single bytes, sizes known or not, Decode, Raw and
// Validate. Seekable sources are read forward in full when verified. Ollama blobs against their
// names. Digests given at a file's first request. Nothing allocates.
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "convention_fixtures.h"
#include "model_host.h"
#include "safetensors_writer.h"
#include "sha256.h"
#include "weightstream/sha256.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

const std::string kSplit = std::string(WS_SOURCE_DIR) + "/tests/data/split-gguf";

std::string hex_of(const Bytes& b) { return wstest::sha256_hex(b.data(), b.size()); }

std::map<std::string, Bytes> read_files(const std::string& dir, const std::vector<std::string>& names) {
  std::map<std::string, Bytes> out;
  for (const std::string& n : names) EXPECT_TRUE(modeltest::disk_files(dir)(n, &out[n])) << n;
  return out;
}

const std::vector<std::string> kTiny = {"tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf"};

struct Way {
  bool seekable;
  Feed feed;
  uint32_t read_size;
  bool sizes;
};
const Way kWays[] = {{true, Feed::Whole, 1 << 16, true},   {true, Feed::Random, 333, true}, {true, Feed::OneByte, 64, false},
                     {false, Feed::Whole, 1 << 16, true},  {false, Feed::Random, 100, false}, {false, Feed::OneByte, 7, true}};

HostOptions with_way(HostOptions h, const Way& w, uint32_t seed) {
  h.seekable = w.seekable;
  h.feed = w.feed;
  h.read_size = w.read_size;
  h.declare_sizes = w.sizes;
  h.seed = seed;
  return h;
}

TEST(ModelDigest, AVerifiedSplitModelLoadsWithEveryFileVerified) {
  const auto files = read_files(kSplit, kTiny);
  HostOptions plain;
  const LoadResult want = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], plain);
  ASSERT_EQ(want.verdict(), "Ok");
  HostOptions h;
  for (const auto& f : files) h.sha256.push_back({f.first, hex_of(f.second)});
  uint32_t seed = 1;
  for (const Way& w : kWays) {
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Decode, ws::ModelLoadMode::Raw, ws::ModelLoadMode::Validate}) {
      HostOptions x = with_way(h, w, seed++);
      x.mode = mode;
      const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], x);
      ASSERT_EQ(r.verdict(), "Ok");
      EXPECT_EQ(r.violation, "");
      for (const std::string& n : kTiny) {
        EXPECT_EQ(r.digests.at(n), "verified") << n;
        // Verification read every byte.
        EXPECT_GE(r.bytes_fed.at(n), files.at(n).size()) << n;
      }
      if (mode == ws::ModelLoadMode::Decode) {
        ASSERT_EQ(r.weights.size(), want.weights.size());
        for (const auto& wt : want.weights) EXPECT_EQ(r.weights.at(wt.first).bytes, wt.second.bytes) << wt.first;
      }
    }
  }
}

// One byte changed in the first piece (a key-value string), a middle piece (tensor data) and the
// last (the last byte of the last tensor) of the middle and the last split.
TEST(ModelDigest, AChangedByteIsDigestMismatchBeforeTheFilesLastTensorEnds) {
  const auto clean = read_files(kSplit, kTiny);
  struct Change {
    std::string file;
    size_t at;  // the byte changed; 0: in the key-values (split.count's key -> split.Count)
    std::string last_tensor;
  };
  const size_t n2 = clean.at(kTiny[1]).size(), n3 = clean.at(kTiny[2]).size();
  // tiny-00002 holds blk.0.ffn_up (Q4_0 64x32: 1152 B) then blk.1.attn_q (Q8_0 64x64: 4352 B),
  // which ends at the file's end; tiny-00003 holds blk.1.ffn_up then output_norm (F32 64: 256 B).
  const std::vector<Change> changes = {
      {kTiny[1], 0, "blk.1.attn_q.weight"},       // the first piece: its key-values
      {kTiny[1], n2 / 2, "blk.1.attn_q.weight"},  // a middle one: tensor data
      {kTiny[1], n2 - 1, "blk.1.attn_q.weight"},  // the last byte
      {kTiny[2], 0, "output_norm.weight"},
      {kTiny[2], n3 / 2, "output_norm.weight"},
      {kTiny[2], n3 - 1, "output_norm.weight"},
  };
  HostOptions base;
  for (const auto& f : clean) base.sha256.push_back({f.first, hex_of(f.second)});
  uint32_t seed = 1;
  for (const Change& c : changes) {
    auto files = clean;
    Bytes& b = files[c.file];
    if (c.at == 0) {
      // A later split's split.count is optional: "split.Count" is an unknown split.* key, and the
      // header still parses, so only the digest can tell.
      const std::string key = "split.count";
      const auto it = std::search(b.begin(), b.end(), key.begin(), key.end());
      ASSERT_NE(it, b.end());
      *(it + 6) = 'C';
    } else {
      b[c.at] ^= 0x01;
    }
    const std::string bad = hex_of(files[c.file]);
    ASSERT_NE(bad, hex_of(clean.at(c.file)));
    for (const Way& w : kWays) {
      for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Decode, ws::ModelLoadMode::Raw, ws::ModelLoadMode::Validate}) {
        HostOptions h = with_way(base, w, seed++);
        h.mode = mode;
        const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], h);
        const std::string what = c.file + "@" + std::to_string(c.at) + (w.seekable ? " seekable" : " sequential") + " feed " +
                                 std::to_string(int(w.feed)) + " mode " + std::to_string(int(mode));
        EXPECT_EQ(r.violation, "") << what;
        EXPECT_EQ(r.code, ws::Status::DigestMismatch) << what << ": " << r.verdict();
        EXPECT_EQ(r.file, c.file) << what;
        EXPECT_EQ(r.offset, files[c.file].size()) << what;  // detected where the file ends
        EXPECT_EQ(r.expected_sha256, hex_of(clean.at(c.file))) << what;
        EXPECT_EQ(r.actual_sha256, bad) << what;
        EXPECT_EQ(r.digests.at(c.file), "mismatch") << what;
        // The file's last tensor never ended, nor anything after it.
        for (const std::string& e : r.ends) EXPECT_NE(e, c.last_tensor) << what;
        if (c.file == kTiny[1]) {
          for (const std::string& e : r.ends) EXPECT_NE(e, "output_norm.weight") << what;
        }
      }
    }
  }
}

// A safetensors model with config.json and an index: the index, each shard and config.json can
// each be given a digest; a wrong one names its file.
TEST(ModelDigest, EveryKindOfFileCanBeVerified) {
  const std::string dir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/sharded-mlx";
  const std::vector<std::string> names = {"model.safetensors.index.json", "model-00001-of-00003.safetensors",
                                          "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors",
                                          "config.json"};
  const auto files = read_files(dir, names);
  HostOptions h;
  for (const auto& f : files) h.sha256.push_back({f.first, hex_of(f.second)});
  for (bool seekable : {true, false}) {
    h.seekable = seekable;
    LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::ShardIndex, names[0], h);
    ASSERT_EQ(r.verdict(), "Ok");
    EXPECT_EQ(r.digests.size(), names.size());
    for (const std::string& n : names) EXPECT_EQ(r.digests.at(n), "verified") << n;
    for (size_t i = 0; i < names.size(); ++i) {
      HostOptions x = h;
      x.sha256[i].second = std::string(64, 'a');
      r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::ShardIndex, names[0], x);
      EXPECT_EQ(r.code, ws::Status::DigestMismatch) << x.sha256[i].first;
      EXPECT_EQ(r.file, x.sha256[i].first);
      EXPECT_EQ(r.expected_sha256, std::string(64, 'a'));
      EXPECT_EQ(r.actual_sha256, hex_of(files.at(x.sha256[i].first))) << x.sha256[i].first;
    }
  }
}

// Headers mode reads headers only: a digest stays pending (nothing is claimed).
TEST(ModelDigest, HeadersModeLeavesDigestsPending) {
  const auto files = read_files(kSplit, kTiny);
  HostOptions h;
  h.mode = ws::ModelLoadMode::Headers;
  for (const auto& f : files) h.sha256.push_back({f.first, std::string(64, '0')});
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], h);
  EXPECT_EQ(r.verdict(), "Ok");
  for (const std::string& n : kTiny) EXPECT_EQ(r.digests.at(n), "pending");
}

// A seekable decode of one weight of a verified file still reads the whole file, forward.
TEST(ModelDigest, ASeekableSourceIsReadForwardInFullWhenVerified) {
  const auto files = read_files(kSplit, kTiny);
  HostOptions h;
  h.read_size = 128;  // a header read does not cover the whole (small) file
  h.select_all = false;
  h.select = {"blk.0.attn_q.weight"};
  const LoadResult unverified = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], h);
  ASSERT_EQ(unverified.verdict(), "Ok");
  EXPECT_LT(unverified.bytes_fed.at(kTiny[2]), files.at(kTiny[2]).size());  // by range: split 3 only its header
  h.sha256 = {{kTiny[2], hex_of(files.at(kTiny[2]))}};
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], h);
  ASSERT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.digests.at(kTiny[2]), "verified");
  EXPECT_GE(r.bytes_fed.at(kTiny[2]), files.at(kTiny[2]).size());
  EXPECT_EQ(r.weights.at("blk.0.attn_q.weight").bytes, unverified.weights.at("blk.0.attn_q.weight").bytes);
  EXPECT_EQ(r.weights.size(), 1u);
}

// The digest may come with a file's first response (X-Linked-Etag): set_file_sha256 then.
TEST(ModelDigest, ADigestGivenAtTheFirstRequest) {
  const auto files = read_files(kSplit, kTiny);
  for (bool right : {true, false}) {
    HostOptions h;
    h.on_first_read = [&](ws::ModelLoader& L, uint32_t f) {
      const std::string name(L.file_name(f).data, L.file_name(f).size);
      uint8_t d[32];
      ws::sha256(files.at(name).data(), files.at(name).size(), d);
      if (!right && name == kTiny[2]) d[5] ^= 1;
      EXPECT_EQ(L.set_file_sha256(d), ws::Status::Ok);
      EXPECT_EQ(L.set_file_sha256(nullptr), ws::Status::UsageError);
    };
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[1], h);
    if (right) {
      EXPECT_EQ(r.verdict(), "Ok");
      for (const std::string& n : kTiny) EXPECT_EQ(r.digests.at(n), "verified");
    } else {
      EXPECT_EQ(r.code, ws::Status::DigestMismatch);
      EXPECT_EQ(r.file, kTiny[2]);
    }
  }
}

TEST(ModelDigest, TheApiIsRefusedOutOfPlace) {
  std::vector<uint64_t> arena(1 << 14);
  ws::ModelLoader L(arena.data(), arena.size() * 8);
  uint8_t d[32] = {};
  EXPECT_EQ(L.expect_sha256_hex("a", 1, "xyz", 3), ws::Status::UsageError);
  EXPECT_EQ(L.set_file_sha256(d), ws::Status::UsageError);  // no request pending
  ASSERT_EQ(L.expect_sha256("a.gguf", 6, d), ws::Status::Ok);
  ASSERT_EQ(L.expect_sha256("b.gguf", 6, d), ws::Status::Ok);
  ASSERT_EQ(L.open(ws::ModelEntry::File, "a.gguf"), ws::Status::Ok);
  EXPECT_EQ(L.expect_sha256("c.gguf", 6, d), ws::Status::UsageError);
  EXPECT_EQ(L.verify_blobs(), ws::Status::UsageError);
  ws::ModelEvent e = L.next();
  ASSERT_EQ(e.type, ws::ModelEventType::NeedRead);
  EXPECT_EQ(L.set_file_sha256(d), ws::Status::Ok);
  const uint8_t gguf[4] = {'G', 'G', 'U', 'F'};
  L.feed(gguf, 4);
  e = L.next();
  ASSERT_EQ(e.type, ws::ModelEventType::NeedRead);
  EXPECT_EQ(L.set_file_sha256(d), ws::Status::UsageError);  // not its first request
  // The names given, and which matched a file.
  ASSERT_EQ(L.expected_digest_count(), 2u);
  EXPECT_EQ(std::string(L.expected_digest_name(1).data, L.expected_digest_name(1).size), "b.gguf");
  EXPECT_TRUE(L.expected_digest_used(0));
  EXPECT_FALSE(L.expected_digest_used(1));
}

// --- Ollama blobs: content-addressed --------------------------------------------------------------

samplegen::SampleTensor f32_tensor(const std::string& name, float v) {
  samplegen::SampleTensor t;
  t.name = name;
  t.dtype = samplegen::SampleDtype::F32;
  t.shape = {4};
  for (int i = 0; i < 4; ++i) {
    const float x = v + float(i);
    uint8_t b[4];
    memcpy(b, &x, 4);
    t.data.insert(t.data.end(), b, b + 4);
  }
  return t;
}

std::map<std::string, Bytes> ollama_model(std::vector<std::string>* blobs) {
  std::map<std::string, Bytes> files;
  std::vector<samplegen::ManifestLayerSpec> layers;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "model.layers." + std::to_string(i) + ".weight";
    const Bytes blob = samplegen::serialize_safetensors({f32_tensor(name, float(i))}, {});
    const std::string hex = hex_of(blob);
    files["blobs/sha256-" + hex] = blob;
    blobs->push_back("blobs/sha256-" + hex);
    layers.push_back({hex, blob.size(), name});
  }
  const std::string m = samplegen::ollama_manifest_json(layers);
  files["manifest.json"] = Bytes(m.begin(), m.end());
  return files;
}

TEST(ModelDigest, OllamaBlobsAreVerifiedAgainstTheirNames) {
  std::vector<std::string> blobs;
  const auto files = ollama_model(&blobs);
  HostOptions h;
  h.verify_blobs = true;
  for (const Way& w : kWays) {
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::OllamaManifest, "manifest.json",
                                               with_way(h, w, 3));
    ASSERT_EQ(r.verdict(), "Ok");
    EXPECT_EQ(r.digests.size(), 3u);  // the blobs, not the manifest
    for (const std::string& b : blobs) EXPECT_EQ(r.digests.at(b), "verified");
  }
  // A blob whose bytes are not its name's: the middle one, one byte of its data.
  auto bad = files;
  bad[blobs[1]][bad[blobs[1]].size() - 3] ^= 0x40;
  for (const Way& w : kWays) {
    const LoadResult r = modeltest::load_model(modeltest::memory_files(bad), ws::ModelEntry::OllamaManifest, "manifest.json",
                                               with_way(h, w, 4));
    EXPECT_EQ(r.code, ws::Status::DigestMismatch);
    EXPECT_EQ(r.file, blobs[1]);
    EXPECT_EQ(r.expected_sha256, blobs[1].substr(13));
    EXPECT_EQ(r.actual_sha256, hex_of(bad[blobs[1]]));
    for (const std::string& e : r.ends) EXPECT_NE(e, "model.layers.1.weight");
  }
  // Without verify_blobs, the same model is read as the manifest says.
  HostOptions off;
  EXPECT_EQ(modeltest::load_model(modeltest::memory_files(bad), ws::ModelEntry::OllamaManifest, "manifest.json", off).verdict(), "Ok");
  // A blob given directly (its file's name is its digest).
  const std::string one = blobs[0].substr(6);
  std::map<std::string, Bytes> direct = {{one, files.at(blobs[0])}};
  LoadResult r = modeltest::load_model(modeltest::memory_files(direct), ws::ModelEntry::File, one, h);
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.digests.at(one), "verified");
  direct[one].back() ^= 1;  // its last tensor's last byte
  r = modeltest::load_model(modeltest::memory_files(direct), ws::ModelEntry::File, one, h);
  EXPECT_EQ(r.code, ws::Status::DigestMismatch);
  EXPECT_EQ(r.file, one);
}

// The convention fixtures' blobs are named by their SHA-256 (as `ollama pull` stores them):
// verified, the model loads, with the same weights as unverified.
TEST(ModelDigest, TheConventionFixturesBlobsAreTheirNames) {
  const std::string dir = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/ollama";
  HostOptions verified, unverified;
  verified.verify_blobs = true;
  const LoadResult a = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::OllamaManifest, "manifest.json", verified);
  const LoadResult b = modeltest::load_model(modeltest::disk_files(dir), ws::ModelEntry::OllamaManifest, "manifest.json", unverified);
  ASSERT_EQ(a.code, ws::Status::Ok) << a.file << " " << a.detail;
  ASSERT_EQ(b.code, ws::Status::Ok);
  EXPECT_EQ(a.weight_names, b.weight_names);
  EXPECT_FALSE(a.weights.empty());
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (const auto& [name, w] : a.weights) EXPECT_EQ(w.bytes, b.weights.at(name).bytes) << name;
}

TEST(ModelDigest, NeverAllocates) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "the sanitizers bring their own allocator";
#else
  const auto files = read_files(kSplit, kTiny);
  std::vector<std::string> blobs;
  const auto ollama = ollama_model(&blobs);
  for (bool seekable : {true, false}) {
    HostOptions h;
    h.seekable = seekable;
    h.count_allocations = true;
    h.feed = Feed::Random;
    for (const auto& f : files) h.sha256.push_back({f.first, hex_of(f.second)});
    LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], h);
    EXPECT_EQ(r.verdict(), "Ok");
    EXPECT_EQ(r.allocations, 0);
    h.sha256.clear();
    h.verify_blobs = true;
    r = modeltest::load_model(modeltest::memory_files(ollama), ws::ModelEntry::OllamaManifest, "manifest.json", h);
    EXPECT_EQ(r.verdict(), "Ok");
    EXPECT_EQ(r.allocations, 0);
  }
#endif
}

}  // namespace

namespace {

// Every convention through the verified (forward) data phase: the same weights as by range.
TEST(ModelDigest, VerifiedModelsOfEveryConventionDecodeTheSame) {
  const std::string root = std::string(WS_SOURCE_DIR) + "/tests/data/conventions/";
  struct Model {
    std::string dir, entry;
    ws::ModelEntry kind;
    std::vector<std::string> names;  // the files to verify (and, UQFF, the listing)
  };
  const std::vector<Model> models = {
      {"uqff", "model-0.uqff", ws::ModelEntry::UqffFiles, {"model-0.uqff", "model-1.uqff", "residual.safetensors"}},
      {"mlx", "model.safetensors", ws::ModelEntry::File, {"model.safetensors", "config.json"}},
      {"sharded-mlx", "model.safetensors.index.json", ws::ModelEntry::ShardIndex,
       {"model.safetensors.index.json", "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
        "model-00003-of-00003.safetensors", "config.json"}},
  };
  for (const Model& m : models) {
    const auto files = read_files(root + m.dir, m.names);
    const std::vector<std::string> listing = m.kind == ws::ModelEntry::UqffFiles ? m.names : std::vector<std::string>();
    HostOptions plain;
    const LoadResult want = modeltest::load_model(modeltest::memory_files(files), m.kind, m.entry, plain, listing);
    ASSERT_EQ(want.verdict(), "Ok") << m.dir;
    HostOptions h;
    for (const auto& f : files) h.sha256.push_back({f.first, hex_of(f.second)});
    const LoadResult r = modeltest::load_model(modeltest::memory_files(files), m.kind, m.entry, h, listing);
    ASSERT_EQ(r.verdict(), "Ok") << m.dir;
    EXPECT_EQ(r.violation, "");
    for (const std::string& n : m.names) EXPECT_EQ(r.digests.at(n), "verified") << m.dir << " " << n;
    ASSERT_EQ(r.weights.size(), want.weights.size()) << m.dir;
    for (const auto& w : want.weights) EXPECT_EQ(r.weights.at(w.first).bytes, w.second.bytes) << m.dir << " " << w.first;
  }
}

}  // namespace

namespace {

// Not a check: with WS_MODEL_SEED_DIR set, writes the Ollama model of true digests as a
// fuzz_model_loader seed with verify_blobs (entry kind | 8): the manifest, then its blobs.
TEST(ModelDigest, WriteFuzzSeedsWhenAsked) {
  const char* dir = getenv("WS_MODEL_SEED_DIR");
  if (!dir) GTEST_SKIP() << "set WS_MODEL_SEED_DIR to write the fuzz_model_loader seeds";
  std::vector<std::string> blobs;
  const auto files = ollama_model(&blobs);
  Bytes out = {7, uint8_t(uint8_t(ws::ModelEntry::OllamaManifest) | 8), uint8_t(blobs.size())};
  std::vector<std::string> order = {"manifest.json"};
  order.insert(order.end(), blobs.begin(), blobs.end());
  for (size_t i = 0; i < order.size(); ++i) {
    const Bytes& b = files.at(order[i]);
    out.push_back(uint8_t(order[i].size()));
    out.insert(out.end(), order[i].begin(), order[i].end());
    if (i + 1 < order.size())
      for (int k = 0; k < 4; ++k) out.push_back(uint8_t(b.size() >> (8 * k)));
    out.insert(out.end(), b.begin(), b.end());
  }
  FILE* f = fopen((std::string(dir) + "/digest_ollama_verify_blobs").c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fwrite(out.data(), 1, out.size(), f);
  fclose(f);
}

}  // namespace

namespace {

// A host's SHA-256 (set_sha256_engine): here the tests' own implementation, counting its calls.
int g_engine_updates = 0;
const ws::Sha256Engine kTestEngine = {
    sizeof(wstest::Sha256),
    [](void* s) { new (s) wstest::Sha256(); },
    [](void* s, const void* d, size_t n) {
      ++g_engine_updates;
      static_cast<wstest::Sha256*>(s)->update(d, n);
    },
    [](void* s, uint8_t out[32]) { static_cast<wstest::Sha256*>(s)->finish(out); },
};

TEST(ModelDigest, AHostsEngineHashesInsteadOfOurs) {
  static_assert(sizeof(wstest::Sha256) <= ws::kSha256EngineState, "fits");
  const auto files = read_files(kSplit, kTiny);
  for (bool right : {true, false}) {
    g_engine_updates = 0;
    HostOptions h;
    h.feed = Feed::Random;
    for (const auto& f : files) h.sha256.push_back({f.first, right ? hex_of(f.second) : std::string(64, '1')});
    std::vector<uint64_t> arena(1 << 15);
    ws::ModelLoader probe(arena.data(), arena.size() * 8);
    ws::Sha256Engine big = kTestEngine;
    big.state_size = ws::kSha256EngineState + 1;
    EXPECT_EQ(probe.set_sha256_engine(&big), ws::Status::UsageError);
    EXPECT_EQ(probe.set_sha256_engine(&kTestEngine), ws::Status::Ok);
    // Only before open().
    h.on_first_read = [&](ws::ModelLoader& L, uint32_t) { EXPECT_EQ(L.set_sha256_engine(&kTestEngine), ws::Status::UsageError); };
    const LoadResult r = modeltest::load_model_with(modeltest::memory_files(files), ws::ModelEntry::File, kTiny[0], h,
                                                    [](ws::ModelLoader& L) { EXPECT_EQ(L.set_sha256_engine(&kTestEngine), ws::Status::Ok); });
    EXPECT_GT(g_engine_updates, 2);
    if (right) {
      EXPECT_EQ(r.verdict(), "Ok");
      for (const std::string& n : kTiny) EXPECT_EQ(r.digests.at(n), "verified");
    } else {
      EXPECT_EQ(r.code, ws::Status::DigestMismatch);
      EXPECT_EQ(r.actual_sha256, hex_of(files.at(r.file)));
    }
  }
}

}  // namespace

// A config.json that does not parse is ignored beside a plain model (it is not the model's
// quantization source), but a digest given for it still covers every byte: the loader reads the
// rest of the file for the hash (fuzz_model_loader found a load ending with it pending).
TEST(ModelDigest, AConfigThatDoesNotParseIsStillVerified) {
  const std::string json = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  Bytes model(8, 0);
  for (int i = 0; i < 8; ++i) model[size_t(i)] = uint8_t(uint64_t(json.size()) >> (8 * i));
  model.insert(model.end(), json.begin(), json.end());
  const float w[2] = {1.5f, -2.0f};
  const uint8_t* wb = reinterpret_cast<const uint8_t*>(w);
  model.insert(model.end(), wb, wb + 8);
  std::string cfg = "{\n  \"architectures\": [\"LlamaForCa\x8c\x8c\"],\n  \"model_type\": \"llama\"";
  cfg += std::string(300, ' ') + "}\n";  // the parse fails at byte 33: the rest is never parsed
  const std::map<std::string, Bytes> files = {{"model.safetensors", model},
                                              {"config.json", Bytes(cfg.begin(), cfg.end())}};
  using Feed = HostOptions::Feed;
  for (Feed feed : {Feed::Whole, Feed::OneByte, Feed::Random})
    for (bool seekable : {true, false}) {
      HostOptions h;
      h.feed = feed;
      h.seekable = seekable;
      for (const auto& f : files) h.sha256.push_back({f.first, hex_of(f.second)});
      LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
      ASSERT_EQ(r.verdict(), "Ok") << int(feed) << seekable;
      EXPECT_FALSE(r.config_used);
      EXPECT_EQ(r.digests.at("model.safetensors"), "verified");
      EXPECT_EQ(r.digests.at("config.json"), "verified") << int(feed) << seekable;
      EXPECT_EQ(r.bytes_fed.at("config.json"), cfg.size()) << int(feed) << seekable;
      // A wrong digest for it is a mismatch, not a model that loads.
      h.sha256[0].second = std::string(64, 'a');  // config.json sorts first
      r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::File, "model.safetensors", h);
      EXPECT_EQ(r.code, ws::Status::DigestMismatch) << int(feed) << seekable;
      EXPECT_EQ(r.file, "config.json");
    }
}

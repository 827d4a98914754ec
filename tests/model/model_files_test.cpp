// ws::ModelLoader: models of many files. The loader had a 64-file cap (LogicalModel's inline tables);
// a model's file count is now bounded by the arena (and by ModelLoaderOptions::max_files when a
// host sets one): DeepSeek-V3's 163 safetensors shards, an Ollama manifest of 100 blobs, every
// way of reading; and the work stays linear in the files.
#include <gtest/gtest.h>
#include <stdio.h>

#include <map>
#include <string>
#include <vector>

#include "convention_fixtures.h"
#include "index_writer.h"
#include "model_host.h"
#include "safetensors_writer.h"
#include "sha256.h"

using modeltest::Bytes;
using modeltest::HostOptions;
using modeltest::LoadResult;
using Feed = modeltest::HostOptions::Feed;

namespace {

std::string shard_name(size_t i, size_t n) {
  char b[64];
  snprintf(b, sizeof b, "model-%05zu-of-%05zu.safetensors", i + 1, n);
  return b;
}

samplegen::SampleTensor f32_tensor(const std::string& name, float base) {
  samplegen::SampleTensor t;
  t.name = name;
  t.dtype = samplegen::SampleDtype::F32;
  t.shape = {2};
  for (float v : {base, base + 0.5f}) {
    uint8_t b[4];
    memcpy(b, &v, 4);
    t.data.insert(t.data.end(), b, b + 4);
  }
  return t;
}

// A Hugging Face sharded model of `n` shards, two F32 tensors per shard.
std::map<std::string, Bytes> sharded(size_t n) {
  std::map<std::string, Bytes> files;
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<samplegen::SampleTensor> ts;
    for (int k = 0; k < 2; ++k) {
      ts.push_back(f32_tensor("model.layers." + std::to_string(i) + ".w" + std::to_string(k), float(i * 2 + k)));
      weight_map[ts.back().name] = shard_name(i, n);
      total += 8;
    }
    files[shard_name(i, n)] = samplegen::serialize_safetensors(ts, {});
  }
  const std::string idx = samplegen::shard_index_json(total, weight_map);
  files["model.safetensors.index.json"] = Bytes(idx.begin(), idx.end());
  return files;
}

// An Ollama manifest of `n` tensor blobs (named by their true SHA-256), one plain F32 tensor each.
std::map<std::string, Bytes> manifest(size_t n) {
  std::map<std::string, Bytes> files;
  std::vector<samplegen::ManifestLayerSpec> layers;
  for (size_t i = 0; i < n; ++i) {
    const std::string name = "model.layers." + std::to_string(i) + ".weight";
    const Bytes blob = samplegen::serialize_safetensors({f32_tensor(name, float(i))}, {});
    const std::string hex = wstest::sha256_hex(blob.data(), blob.size());
    files["blobs/sha256-" + hex] = blob;
    layers.push_back({hex, blob.size(), name});
  }
  const std::string m = samplegen::ollama_manifest_json(layers);
  files["manifest.json"] = Bytes(m.begin(), m.end());
  return files;
}

float value_of(const LoadResult& r, const std::string& name, size_t i) {
  const auto it = r.weights.find(name);
  if (it == r.weights.end() || it->second.bytes.size() < 4 * (i + 1)) return -1;
  float v;
  memcpy(&v, it->second.bytes.data() + 4 * i, 4);
  return v;
}

TEST(ModelFiles, DeepSeekV3Has163ShardsAndAllAreOneModel) {
  const auto files = sharded(163);
  for (bool seekable : {true, false}) {
    for (Feed feed : {Feed::Whole, Feed::Random}) {
      HostOptions h;
      h.seekable = seekable;
      h.feed = feed;
      h.read_size = 4096;
      h.arena = 64 << 10;  // grows by retries to what the loader asks
      const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::ShardIndex,
                                                 "model.safetensors.index.json", h);
      ASSERT_EQ(r.verdict(), "Ok") << seekable;
      EXPECT_EQ(r.violation, "");
      ASSERT_EQ(r.weight_names.size(), 326u);
      EXPECT_EQ(r.weights.size(), 326u);
      // Shards in file-name order: the last shard's second tensor is the model's last weight.
      EXPECT_EQ(r.weight_names.back(), "model.layers.162.w1");
      EXPECT_EQ(value_of(r, "model.layers.162.w1", 0), 325.0f);
      EXPECT_EQ(value_of(r, "model.layers.100.w0", 1), 200.5f);
    }
  }
}

TEST(ModelFiles, AManifestOf100BlobsIsOneModel) {
  const auto files = manifest(100);
  HostOptions h;
  h.arena = 64 << 10;
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::OllamaManifest, "manifest.json", h);
  ASSERT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.convention, ws::Convention::Ollama);
  EXPECT_EQ(r.weights.size(), 100u);
  EXPECT_EQ(value_of(r, "model.layers.99.weight", 1), 99.5f);
}

TEST(ModelFiles, AHostsMaxFilesIsTooManyFilesWithBothCounts) {
  const auto files = sharded(70);
  std::vector<uint64_t> arena(1 << 17);
  for (uint32_t max : {3u, 71u, 72u}) {
    ws::ModelLoaderOptions opt;
    opt.max_files = max;
    ws::ModelLoader L(arena.data(), arena.size() * 8, opt);
    ASSERT_EQ(L.open(ws::ModelEntry::ShardIndex, "model.safetensors.index.json"), ws::Status::Ok);
    ws::ModelEvent e;
    for (;;) {
      e = L.next();
      if (e.type != ws::ModelEventType::NeedRead) break;
      const auto it = files.find(std::string(L.file_name(e.file).data, L.file_name(e.file).size));
      if (it == files.end()) {
        L.file_missing();
        continue;
      }
      if (e.offset >= it->second.size())
        L.end_of_file();
      else
        L.feed(it->second.data() + e.offset, std::min<size_t>(it->second.size() - e.offset, e.length));
    }
    if (max == 72) {  // the index, 70 shards and config.json (asked for after the headers)
      EXPECT_EQ(e.type, ws::ModelEventType::ModelReady) << ws::status_name(L.error().code);
      continue;
    }
    ASSERT_EQ(e.type, ws::ModelEventType::Error);
    EXPECT_EQ(L.error().code, ws::Status::TooManyFiles);
    EXPECT_EQ(L.error_file(), 0u);  // the index names them
    EXPECT_EQ(L.error().found, 72u);  // the index, 70 shards and config.json
    EXPECT_EQ(L.error().expected, max);
  }
}

// 8,000 shards load in one attempt with the arena the index's size suggests, every shard's tensor
// in the model. (How the cost grows with the file count is measured by ws-bench-model --shards, a
// benchmark, not here: a timed test fails on a loaded machine.)
TEST(ModelFiles, EightThousandShardsAreOneModelInOneAttempt) {
  const size_t n = 8000;
  const auto files = sharded(n);
  HostOptions h;
  h.mode = ws::ModelLoadMode::Validate;
  h.arena = n * 4096 + (1 << 20);
  const LoadResult r = modeltest::load_model(modeltest::memory_files(files), ws::ModelEntry::ShardIndex,
                                             "model.safetensors.index.json", h);
  EXPECT_EQ(r.verdict(), "Ok");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.violation, "");
  EXPECT_EQ(r.weight_names.size(), 2 * n);
}

}  // namespace

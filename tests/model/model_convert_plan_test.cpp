// ws::ConvertPlan (convert_plan.h) over loaded fixtures: the weights taken, their output files,
// names, tables and sizes, the index, the filter, the skipped weights and the arena contract. The
// sizes asserted are those of the files `weightstream convert` wrote for these fixtures, which
// tests/cli/convert_test.py reads with its own safetensors reader; a plan built here must agree
// with them byte count for byte count, under every chunking of the load.
#include <gtest/gtest.h>
#include <string.h>

#include <string>
#include <vector>

#include "alloc_counter.h"
#include "model_host.h"
#include "weightstream/convert_plan.h"
#include "weightstream/model_loader.h"

using modeltest::HostOptions;
using Feed = modeltest::HostOptions::Feed;

namespace {

const std::string kConv = std::string(WS_SOURCE_DIR) + "/tests/data/conventions";

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

// What a test checks of a plan, copied out at ModelReady (the plan points into the loader).
struct Seen {
  ws::Status status = ws::Status::Ok;
  size_t needed = 0;
  std::vector<std::string> entries;   // names, plan order
  std::vector<uint32_t> entry_shard, entry_row;
  std::vector<std::string> actions;
  std::vector<std::string> skipped;
  std::vector<std::string> shard_names;
  std::vector<uint64_t> file_sizes, data_sizes;
  std::vector<std::string> headers;  // every shard's header, from init_writer()
  std::string index;
  std::string from;
  uint64_t total = 0;
  bool consistent = true;  // entry_of_weight / rows / shard ranges agree
  long allocations = -1;
};

using Build = std::function<void(const ws::ModelLoader&, Seen*)>;

Seen plan_of(const std::string& path, ws::ModelEntry entry, const ws::ConvertOptions& o, ws::ConvertFilter filter,
             void* fctx, Feed feed = Feed::Whole, size_t arena_size = 1 << 16) {
  Seen seen;
  HostOptions h;
  h.feed = feed;
  h.read_size = feed == Feed::OneByte ? 64 : 4096;
  h.select_all = false;
  h.on_ready = [&](const ws::ModelLoader& L) {
    seen = Seen();
    std::vector<uint64_t> arena(arena_size / 8);
    ws::ConvertPlan plan;
#ifdef WS_COUNTING_ALLOCATOR
    wsalloc::g_allocs = 0;
    wsalloc::g_armed = true;
#endif
    seen.status = plan.build(L, o, filter, fctx, arena.data(), arena_size);
#ifdef WS_COUNTING_ALLOCATOR
    wsalloc::g_armed = false;
    seen.allocations = wsalloc::g_allocs;
#endif
    seen.needed = plan.arena_needed();
    if (seen.status != ws::Status::Ok) return;
    for (uint32_t k = 0; k < plan.entry_count(); ++k) {
      const ws::ConvertEntry& e = plan.entry(k);
      seen.entries.push_back(str(L.weight(e.weight).name));
      seen.entry_shard.push_back(e.shard);
      seen.entry_row.push_back(e.row);
      seen.actions.push_back(ws::convert_action_name(e.decision.action));
      const ws::ConvertShard& s = plan.shard(e.shard);
      const ws::WriterTensor& t = plan.shard_rows(e.shard)[e.row];
      seen.consistent = seen.consistent && plan.entry_of_weight(e.weight) == k && k == s.first + e.row &&
                        e.row < s.count && t.byte_size == e.decision.bytes &&
                        std::string(t.name, t.name_size) == seen.entries.back();
    }
    for (uint32_t w = 0; w < L.weight_count(); ++w)
      if (plan.entry_of_weight(w) == ws::ConvertPlan::kNotConverted)
        seen.consistent = seen.consistent && std::find(seen.entries.begin(), seen.entries.end(),
                                                       str(L.weight(w).name)) == seen.entries.end();
    for (uint32_t i = 0; i < plan.skipped_count(); ++i) seen.skipped.push_back(str(L.weight(plan.skipped(i)).name));
    for (uint32_t s = 0; s < plan.shard_count(); ++s) {
      const ws::ConvertShard& sh = plan.shard(s);
      seen.shard_names.push_back(sh.name);
      seen.file_sizes.push_back(sh.file_size);
      seen.data_sizes.push_back(sh.data_size);
      ws::SafetensorsWriter w;
      EXPECT_EQ(plan.init_writer(s, &w), ws::Status::Ok);
      EXPECT_EQ(w.file_size(), sh.file_size);
      EXPECT_EQ(w.header_size(), sh.header_size);
      std::string head(size_t(w.header_size()), '\0');
      size_t got = 0;
      EXPECT_EQ(w.header(reinterpret_cast<uint8_t*>(&head[0]), head.size(), &got), ws::Status::Ok);
      seen.headers.push_back(head);
    }
    auto sink = [](void* ctx, const uint8_t* p, size_t n) {
      static_cast<std::string*>(ctx)->append(reinterpret_cast<const char*>(p), n);
      return true;
    };
    EXPECT_EQ(plan.write_index(sink, &seen.index), ws::Status::Ok);
    seen.from = plan.converted_from();
    seen.total = plan.total_size();
  };
  const size_t slash = path.rfind('/');
  const modeltest::LoadResult r =
      modeltest::load_model(modeltest::disk_files(path.substr(0, slash)), entry, path.substr(slash + 1), h);
  EXPECT_EQ(r.verdict(), "Ok") << path;
  return seen;
}

const Feed kFeeds[] = {Feed::Whole, Feed::Random, Feed::OneByte};

TEST(ConvertPlanModel, Fp8BlockOneFile) {
  ws::ConvertOptions o;  // bf16, one file
  for (Feed f : kFeeds) {
    const Seen s = plan_of(kConv + "/hub/fp8-block/model.safetensors", ws::ModelEntry::File, o, nullptr, nullptr, f);
    ASSERT_EQ(s.status, ws::Status::Ok);
    EXPECT_TRUE(s.consistent);
    EXPECT_EQ(s.entries.size(), 4u);
    EXPECT_EQ(s.shard_names, std::vector<std::string>{"model.safetensors"});
    EXPECT_EQ(s.file_sizes, std::vector<uint64_t>{792});  // the CLI's model.safetensors
    EXPECT_EQ(s.data_sizes, std::vector<uint64_t>{304});
    EXPECT_EQ(s.total, 304u);
    EXPECT_EQ(s.from, "fp8");
    EXPECT_TRUE(s.skipped.empty());
    EXPECT_EQ(s.allocations, s.allocations < 0 ? -1 : 0);
    // The header names the marks.
    EXPECT_NE(s.headers[0].find("\"weightstream.converted_to\":\"bf16\""), std::string::npos);
  }
}

TEST(ConvertPlanModel, MlxShardsAndIndex) {
  ws::ConvertOptions o;
  o.to = ws::OutType::F16;
  o.max_shard_size = 100;
  for (Feed f : kFeeds) {
    const Seen s = plan_of(kConv + "/mlx/model.safetensors", ws::ModelEntry::File, o, nullptr, nullptr, f);
    ASSERT_EQ(s.status, ws::Status::Ok);
    EXPECT_TRUE(s.consistent);
    EXPECT_EQ(s.shard_names, (std::vector<std::string>{
                                 "model-00001-of-00005.safetensors", "model-00002-of-00005.safetensors",
                                 "model-00003-of-00005.safetensors", "model-00004-of-00005.safetensors",
                                 "model-00005-of-00005.safetensors"}));
    // The CLI's files for `convert --to f16 --max-shard-size 100`.
    EXPECT_EQ(s.file_sizes, (std::vector<uint64_t>{464, 464, 720, 728, 292}));
    EXPECT_EQ(s.total, 1556u);
    EXPECT_EQ(s.entry_shard, (std::vector<uint32_t>{0, 1, 2, 3, 4, 4}));
    EXPECT_EQ(s.entry_row, (std::vector<uint32_t>{0, 0, 0, 0, 0, 1}));
    EXPECT_EQ(s.index,
              "{\n  \"metadata\": {\n    \"total_size\": 1556\n  },\n  \"weight_map\": {\n"
              "    \"model.layers.0.mlp.down_proj.weight\": \"model-00003-of-00005.safetensors\",\n"
              "    \"model.layers.0.mlp.experts.gate_proj.weight\": \"model-00004-of-00005.safetensors\",\n"
              "    \"model.layers.0.mlp.up_proj.weight\": \"model-00002-of-00005.safetensors\",\n"
              "    \"model.layers.0.self_attn.q_proj.bias\": \"model-00005-of-00005.safetensors\",\n"
              "    \"model.layers.0.self_attn.q_proj.weight\": \"model-00001-of-00005.safetensors\",\n"
              "    \"model.norm.weight\": \"model-00005-of-00005.safetensors\"\n  }\n}\n");
  }
}

bool only_q_proj(void*, const char* name, size_t n) {
  return std::string(name, n).find("q_proj") != std::string::npos;
}

TEST(ConvertPlanModel, FilterTakesASubset) {
  ws::ConvertOptions o;
  const Seen s = plan_of(kConv + "/mlx/model.safetensors", ws::ModelEntry::File, o, only_q_proj, nullptr);
  ASSERT_EQ(s.status, ws::Status::Ok);
  EXPECT_TRUE(s.consistent);
  EXPECT_EQ(s.entries, (std::vector<std::string>{"model.layers.0.self_attn.q_proj.weight",
                                                 "model.layers.0.self_attn.q_proj.bias"}));
  EXPECT_EQ(s.shard_names, std::vector<std::string>{"model.safetensors"});
}

TEST(ConvertPlanModel, KeepCopiesStored) {
  // fp8-block-bf16: its unquantized BF16 layers copied with keep BF16 on an f32 output.
  ws::ConvertOptions o;
  o.to = ws::OutType::F32;
  const Seen all = plan_of(kConv + "/hub/fp8-block-bf16/model.safetensors", ws::ModelEntry::File, o, nullptr, nullptr);
  o.keep_dtypes = 1u << uint32_t(ws::DType::BF16);
  const Seen kept = plan_of(kConv + "/hub/fp8-block-bf16/model.safetensors", ws::ModelEntry::File, o, nullptr, nullptr);
  ASSERT_EQ(kept.status, ws::Status::Ok);
  EXPECT_EQ(kept.entries, all.entries);
  EXPECT_EQ(std::count(all.actions.begin(), all.actions.end(), "copy"), 0);
  EXPECT_GT(std::count(kept.actions.begin(), kept.actions.end(), "copy"), 0);
  EXPECT_LT(kept.total, all.total);
}

TEST(ConvertPlanModel, GgufBlocks) {
  // Every ggml block type of the synthetic file decoded to bf16: the CLI's 34 weights, 917601 bytes
  // (one file: no index), marked as converted from gguf, with no input metadata.
  ws::ConvertOptions o;
  for (Feed f : {Feed::Whole, Feed::Random}) {
    const Seen s = plan_of(std::string(WS_SOURCE_DIR) + "/tests/data/synthetic/gguf/all_quant_types.gguf",
                           ws::ModelEntry::File, o, nullptr, nullptr, f);
    ASSERT_EQ(s.status, ws::Status::Ok);
    EXPECT_TRUE(s.consistent);
    EXPECT_EQ(s.entries.size(), 34u);
    EXPECT_EQ(s.total, 917601u);
    EXPECT_EQ(s.from, "gguf");
    EXPECT_TRUE(s.skipped.empty());
    EXPECT_EQ(s.shard_names, std::vector<std::string>{"model.safetensors"});
    // Right after the 8-byte length and "{".
    EXPECT_EQ(s.headers[0].find("\"__metadata__\":{\"format\":\"pt\",\"weightstream.converted_from\":\"gguf\""),
              9u);
  }
}

TEST(ConvertPlanModel, ArenaExhaustedThenExact) {
  ws::ConvertOptions o;
  o.max_shard_size = 100;
  const std::string m = kConv + "/mlx/model.safetensors";
  const Seen small = plan_of(m, ws::ModelEntry::File, o, nullptr, nullptr, Feed::Whole, 64);
  EXPECT_EQ(small.status, ws::Status::ArenaExhausted);
  ASSERT_GT(small.needed, 64u);
  const Seen exact = plan_of(m, ws::ModelEntry::File, o, nullptr, nullptr, Feed::Whole, small.needed);
  EXPECT_EQ(exact.status, ws::Status::Ok);
  EXPECT_EQ(exact.needed, small.needed);
  const Seen less = plan_of(m, ws::ModelEntry::File, o, nullptr, nullptr, Feed::Whole, small.needed - 8);
  EXPECT_EQ(less.status, ws::Status::ArenaExhausted);
}

}  // namespace

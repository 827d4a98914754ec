// Model facts from GGUF metadata: the real vocab files (values from their expect.json), read
// whole and one byte at a time, plus key order and foreign prefixes on hand-made events.
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "weightstream/model_facts.h"
#include "weightstream/reader.h"

namespace {

using ws::Fact;

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> out;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return out;
}

// Streams the file through a Reader in `chunk`-byte pieces, every event into the collector.
ws::ModelFacts facts_of(const std::string& name, size_t chunk) {
  std::vector<uint8_t> bytes = read_file(std::string(WS_SHARED_DIR) + "/testdata/real/gguf/" + name);
  EXPECT_FALSE(bytes.empty()) << name;
  static uint64_t arena[1 << 17];  // 1 MiB
  ws::Reader r(arena, sizeof arena);
  ws::GgufFactsCollector c;
  size_t pos = 0;
  for (;;) {
    ws::Event e = r.next();
    c.on_event(e);
    if (e.type == ws::EventType::NeedInput) {
      if (pos < bytes.size()) {
        size_t n = std::min(chunk, bytes.size() - pos);
        r.feed(bytes.data() + pos, n);
        pos += n;
      } else {
        r.finish();
      }
    } else if (e.type == ws::EventType::End) {
      break;
    } else if (e.type == ws::EventType::Error) {
      ADD_FAILURE() << name << ": " << ws::status_name(r.error().code);
      break;
    }
  }
  return c.facts();
}

void expect_int(const ws::ModelFacts& f, Fact k, uint64_t v, bool derived = false) {
  ws::FactValue x = f.get(k);
  EXPECT_TRUE(x.present) << ws::fact_name(k);
  EXPECT_EQ(x.derived, derived) << ws::fact_name(k);
  EXPECT_EQ(x.u, v) << ws::fact_name(k);
  EXPECT_EQ(x.f, double(v)) << ws::fact_name(k);
}
void expect_real(const ws::ModelFacts& f, Fact k, double v) {
  ws::FactValue x = f.get(k);
  EXPECT_TRUE(x.present) << ws::fact_name(k);
  EXPECT_FALSE(x.derived) << ws::fact_name(k);
  EXPECT_EQ(x.u, 0u) << ws::fact_name(k);
  EXPECT_EQ(x.f, v) << ws::fact_name(k);
}
void expect_absent(const ws::ModelFacts& f, Fact k) {
  EXPECT_FALSE(f.get(k).present) << ws::fact_name(k);
}

class GgufFacts : public ::testing::TestWithParam<size_t> {};

TEST_P(GgufFacts, LlamaSpm) {
  ws::ModelFacts f = facts_of("ggml-vocab-llama-spm.gguf", GetParam());
  EXPECT_EQ(std::string(f.architecture(), f.architecture_size()), "llama");
  expect_int(f, Fact::Layers, 32);
  expect_int(f, Fact::ContextLength, 4096);
  expect_int(f, Fact::HiddenSize, 4096);
  expect_int(f, Fact::IntermediateSize, 11008);
  expect_int(f, Fact::Heads, 32);
  expect_int(f, Fact::KvHeads, 32);
  expect_real(f, Fact::NormEps, 9.999999747378752e-06);  // f32 1e-5, widened
  expect_int(f, Fact::VocabSize, 32000);  // llama.vocab_size
  expect_absent(f, Fact::RopeTheta);
  expect_absent(f, Fact::Experts);
  expect_absent(f, Fact::ExpertsUsed);
}

TEST_P(GgufFacts, DeepseekCoder) {
  ws::ModelFacts f = facts_of("ggml-vocab-deepseek-coder.gguf", GetParam());
  EXPECT_EQ(std::string(f.architecture()), "llama");
  expect_int(f, Fact::Layers, 32);
  expect_int(f, Fact::ContextLength, 16384);
  expect_int(f, Fact::HiddenSize, 4096);
  expect_int(f, Fact::IntermediateSize, 11008);
  expect_int(f, Fact::Heads, 32);
  expect_int(f, Fact::KvHeads, 32);
  expect_real(f, Fact::RopeTheta, 100000.0);
  expect_real(f, Fact::NormEps, 9.999999974752427e-07);
  expect_int(f, Fact::VocabSize, 32256);
}

TEST_P(GgufFacts, Gpt2) {
  ws::ModelFacts f = facts_of("ggml-vocab-gpt-2.gguf", GetParam());
  EXPECT_EQ(std::string(f.architecture()), "gpt2");
  expect_int(f, Fact::Layers, 12);
  expect_int(f, Fact::ContextLength, 1024);
  expect_int(f, Fact::HiddenSize, 768);
  expect_int(f, Fact::IntermediateSize, 3072);
  expect_int(f, Fact::Heads, 12);
  expect_int(f, Fact::KvHeads, 12, true);  // no head_count_kv: the head count
  expect_real(f, Fact::NormEps, 9.999999747378752e-06);  // gpt2.attention.layer_norm_epsilon
  expect_int(f, Fact::VocabSize, 50257, true);  // tokenizer.ggml.tokens
  expect_absent(f, Fact::RopeTheta);
}

TEST_P(GgufFacts, BertBge) {
  ws::ModelFacts f = facts_of("ggml-vocab-bert-bge.gguf", GetParam());
  EXPECT_EQ(std::string(f.architecture()), "bert");
  expect_int(f, Fact::Layers, 12);
  expect_int(f, Fact::ContextLength, 512);
  expect_int(f, Fact::HiddenSize, 384);
  expect_int(f, Fact::IntermediateSize, 1536);
  expect_int(f, Fact::Heads, 12);
  expect_int(f, Fact::KvHeads, 12, true);
  expect_real(f, Fact::NormEps, 9.999999960041972e-13);
  expect_int(f, Fact::VocabSize, 30522, true);
}

TEST_P(GgufFacts, NoArchitectureNoFacts) {
  ws::ModelFacts f = facts_of("hyllama-dummy.gguf", GetParam());
  EXPECT_FALSE(f.has_architecture());
  for (uint32_t i = 0; i < ws::kFactCount; ++i) expect_absent(f, Fact(i));
}

INSTANTIATE_TEST_SUITE_P(Chunking, GgufFacts, ::testing::Values(size_t(1) << 30, size_t(1), size_t(4093)));

// Hand-made events: the collector only looks at KV events.
struct Feeder {
  ws::GgufFactsCollector c;
  void str(const char* key, const char* value) {
    ws::Event e;
    e.type = ws::EventType::KvBegin;
    e.key.data = key;
    e.key.size = strlen(key);
    e.value_type = ws::GgufType::String;
    c.on_event(e);
    ws::Event b;
    b.type = ws::EventType::KvBytes;
    b.data = reinterpret_cast<const uint8_t*>(value);
    b.size = strlen(value);
    b.first = b.last = true;
    c.on_event(b);
    end();
  }
  void u32(const char* key, uint64_t v) { scalar(key, ws::GgufType::U32, v, 0, 0); }
  void i32(const char* key, int64_t v) { scalar(key, ws::GgufType::I32, uint64_t(v), v, 0); }
  void f32(const char* key, double v) { scalar(key, ws::GgufType::F32, 0, 0, v); }
  void scalar(const char* key, ws::GgufType t, uint64_t u, int64_t i, double f) {
    ws::Event e;
    e.type = ws::EventType::KvBegin;
    e.key.data = key;
    e.key.size = strlen(key);
    e.value_type = t;
    c.on_event(e);
    ws::Event s;
    s.type = ws::EventType::KvScalar;
    s.value_type = t;
    s.u = u;
    s.i = i;
    s.f = f;
    c.on_event(s);
    end();
  }
  void end() {
    ws::Event e;
    e.type = ws::EventType::KvEnd;
    c.on_event(e);
  }
};

TEST(GgufFactsEvents, ArchitectureAfterFactsAndForeignPrefixes) {
  Feeder f;
  f.u32("qwen2moe.block_count", 24);
  f.u32("llama.block_count", 99);  // another architecture's key: dropped once the arch is known
  f.u32("qwen2moe.expert_count", 60);
  f.u32("qwen2moe.expert_used_count", 4);
  f.i32("qwen2moe.attention.head_count", 16);
  f.u32("qwen2moe.rope.freq_base", 1000000);  // an integer where a real is expected: converted
  f.str("general.architecture", "qwen2moe");
  f.u32("llama.embedding_length", 1);  // after the arch: ignored at once
  f.f32("qwen2moe.embedding_length", 2048.0);  // a real where a count is expected: ignored
  f.i32("qwen2moe.feed_forward_length", -5);    // negative count: ignored
  ws::ModelFacts m = f.c.facts();
  EXPECT_EQ(std::string(m.architecture()), "qwen2moe");
  expect_int(m, Fact::Layers, 24);
  expect_int(m, Fact::Experts, 60);
  expect_int(m, Fact::ExpertsUsed, 4);
  expect_int(m, Fact::Heads, 16);
  expect_int(m, Fact::KvHeads, 16, true);
  expect_real(m, Fact::RopeTheta, 1000000.0);
  expect_absent(m, Fact::HiddenSize);
  expect_absent(m, Fact::IntermediateSize);
}

TEST(GgufFactsEvents, FactsOfAnotherArchitectureOnly) {
  Feeder f;
  f.str("general.architecture", "gemma2");
  f.u32("llama.block_count", 26);
  EXPECT_FALSE(f.c.facts().get(Fact::Layers).present);
  EXPECT_EQ(std::string(f.c.facts().architecture()), "gemma2");
}

TEST(GgufFactsEvents, OverlongArchitectureCountsAsAbsent) {
  Feeder f;
  std::string arch(64, 'a');
  f.str("general.architecture", arch.c_str());
  EXPECT_FALSE(f.c.facts().has_architecture());
  Feeder g;
  std::string arch63(63, 'a');
  g.str("general.architecture", arch63.c_str());
  g.u32((arch63 + ".block_count").c_str(), 3);
  EXPECT_EQ(g.c.facts().architecture_size(), 63u);
  expect_int(g.c.facts(), Fact::Layers, 3);
}

TEST(ModelFactsApi, Names) {
  EXPECT_STREQ(ws::fact_name(Fact::Layers), "layers");
  EXPECT_STREQ(ws::fact_name(Fact::KvHeads), "kv_heads");
  EXPECT_STREQ(ws::fact_name(Fact::ExpertsUsed), "experts_used");
  EXPECT_STREQ(ws::fact_name(Fact(11)), "?");
  EXPECT_TRUE(ws::fact_is_real(Fact::RopeTheta));
  EXPECT_TRUE(ws::fact_is_real(Fact::NormEps));
  EXPECT_FALSE(ws::fact_is_real(Fact::VocabSize));
  ws::ModelFacts empty;
  EXPECT_FALSE(empty.get(Fact(200)).present);
}

}  // namespace

// Model facts from config.json: hand-written configs of six model families under every chunking,
// and malformed configs with their exact status and offset.
#include <stdio.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "weightstream/model_facts.h"

namespace {

using ws::Fact;

std::string read_text(const std::string& path) {
  std::string out;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

struct Parsed {
  ws::Status status = ws::Status::Ok;
  uint64_t offset = 0;
  ws::ModelFacts facts;
};

Parsed parse(const std::string& text, size_t chunk) {
  ws::ConfigFactsParser p;
  Parsed r;
  for (size_t pos = 0; pos < text.size() && r.status == ws::Status::Ok; pos += chunk)
    r.status = p.feed(text.data() + pos, std::min(chunk, text.size() - pos));
  if (r.status == ws::Status::Ok) r.status = p.finish();
  r.offset = p.error().offset;
  r.facts = p.facts();
  return r;
}

void expect_int(const ws::ModelFacts& f, Fact k, uint64_t v, bool derived = false) {
  ws::FactValue x = f.get(k);
  EXPECT_TRUE(x.present) << ws::fact_name(k);
  EXPECT_EQ(x.derived, derived) << ws::fact_name(k);
  EXPECT_EQ(x.u, v) << ws::fact_name(k);
}
void expect_real(const ws::ModelFacts& f, Fact k, double v) {
  ws::FactValue x = f.get(k);
  EXPECT_TRUE(x.present) << ws::fact_name(k);
  EXPECT_EQ(x.f, v) << ws::fact_name(k);
}
void expect_absent(const ws::ModelFacts& f, Fact k) { EXPECT_FALSE(f.get(k).present) << ws::fact_name(k); }

class ConfigFacts : public ::testing::TestWithParam<size_t> {
 protected:
  ws::ModelFacts load(const char* file) {
    Parsed r = parse(read_text(std::string(WS_NAMING_DATA) + "/" + file), GetParam());
    EXPECT_EQ(r.status, ws::Status::Ok) << file << " at " << r.offset;
    return r.facts;
  }
};

TEST_P(ConfigFacts, Llama3) {
  ws::ModelFacts f = load("llama3.config.json");
  EXPECT_STREQ(f.architecture(), "llama");
  expect_int(f, Fact::Layers, 32);
  expect_int(f, Fact::Heads, 32);
  expect_int(f, Fact::KvHeads, 8);
  expect_int(f, Fact::HiddenSize, 4096);
  expect_int(f, Fact::IntermediateSize, 14336);
  expect_int(f, Fact::VocabSize, 128256);
  expect_real(f, Fact::RopeTheta, 500000.0);
  expect_real(f, Fact::NormEps, 1e-05);
  expect_int(f, Fact::ContextLength, 8192);
  expect_absent(f, Fact::Experts);
  expect_absent(f, Fact::ExpertsUsed);
}

TEST_P(ConfigFacts, Qwen2Moe) {
  ws::ModelFacts f = load("qwen2_moe.config.json");
  EXPECT_STREQ(f.architecture(), "qwen2_moe");
  expect_int(f, Fact::Layers, 24);
  expect_int(f, Fact::Heads, 16);
  expect_int(f, Fact::KvHeads, 16);
  expect_int(f, Fact::HiddenSize, 2048);
  expect_int(f, Fact::IntermediateSize, 5632);
  expect_int(f, Fact::VocabSize, 151936);
  expect_real(f, Fact::RopeTheta, 1000000.0);
  expect_real(f, Fact::NormEps, 1e-06);
  expect_int(f, Fact::ContextLength, 8192);
  expect_int(f, Fact::Experts, 60);
  expect_int(f, Fact::ExpertsUsed, 4);
}

TEST_P(ConfigFacts, Mixtral) {
  ws::ModelFacts f = load("mixtral.config.json");
  EXPECT_STREQ(f.architecture(), "mixtral");
  expect_int(f, Fact::Layers, 32);
  expect_int(f, Fact::Heads, 32);
  expect_int(f, Fact::KvHeads, 8);
  expect_int(f, Fact::HiddenSize, 4096);
  expect_int(f, Fact::IntermediateSize, 14336);
  expect_int(f, Fact::VocabSize, 32000);
  expect_real(f, Fact::RopeTheta, 1e6);
  expect_real(f, Fact::NormEps, 1e-05);
  expect_int(f, Fact::ContextLength, 32768);
  expect_int(f, Fact::Experts, 8);
  expect_int(f, Fact::ExpertsUsed, 2);
}

TEST_P(ConfigFacts, Gemma2) {
  ws::ModelFacts f = load("gemma2.config.json");
  EXPECT_STREQ(f.architecture(), "gemma2");
  expect_int(f, Fact::Layers, 26);
  expect_int(f, Fact::Heads, 8);
  expect_int(f, Fact::KvHeads, 4);
  expect_int(f, Fact::HiddenSize, 2304);
  expect_int(f, Fact::IntermediateSize, 9216);
  expect_int(f, Fact::VocabSize, 256000);
  expect_real(f, Fact::RopeTheta, 10000.0);
  expect_real(f, Fact::NormEps, 1e-06);
  expect_int(f, Fact::ContextLength, 8192);
}

TEST_P(ConfigFacts, Phi3) {
  ws::ModelFacts f = load("phi3.config.json");
  EXPECT_STREQ(f.architecture(), "phi3");
  expect_int(f, Fact::Layers, 32);
  expect_int(f, Fact::Heads, 32);
  expect_int(f, Fact::KvHeads, 32);
  expect_int(f, Fact::HiddenSize, 3072);
  expect_int(f, Fact::IntermediateSize, 8192);
  expect_int(f, Fact::VocabSize, 32064);
  expect_real(f, Fact::RopeTheta, 10000.0);
  expect_real(f, Fact::NormEps, 1e-05);
  expect_int(f, Fact::ContextLength, 4096);
}

TEST_P(ConfigFacts, LlavaTextConfig) {
  ws::ModelFacts f = load("llava.config.json");
  // text_config's members win over the root's (vocab 32064, not 32000) and vision_config's.
  EXPECT_STREQ(f.architecture(), "llama");
  expect_int(f, Fact::Layers, 32);
  expect_int(f, Fact::Heads, 32);
  expect_int(f, Fact::KvHeads, 32, true);
  expect_int(f, Fact::HiddenSize, 4096);
  expect_int(f, Fact::IntermediateSize, 11008);
  expect_int(f, Fact::VocabSize, 32064);
  expect_real(f, Fact::RopeTheta, 10000.0);
  expect_real(f, Fact::NormEps, 1e-05);
  expect_int(f, Fact::ContextLength, 4096);
}

INSTANTIATE_TEST_SUITE_P(Chunking, ConfigFacts, ::testing::Values(size_t(1) << 20, size_t(1), size_t(7)));

TEST(ConfigFactsValues, RealsAndDefaults) {
  Parsed r = parse(R"({"rms_norm_eps":0.000001000000000000000000000000000000,"rope_theta":5e5,)"
                   R"("num_attention_heads":4,"num_key_value_heads":null,"layer_norm_epsilon":1E-12})",
                   1);
  ASSERT_EQ(r.status, ws::Status::Ok);
  expect_real(r.facts, Fact::NormEps, 1e-12);  // the later key wins
  expect_real(r.facts, Fact::RopeTheta, 500000.0);
  expect_int(r.facts, Fact::KvHeads, 4, true);
  r = parse(R"({"rms_norm_eps":0.000001000000000000000000000000000000})", 1);
  expect_real(r.facts, Fact::NormEps, 1e-06);
  r = parse(R"({"rope_theta":0, "layer_norm_eps": 1.5e-300})", 3);
  expect_real(r.facts, Fact::RopeTheta, 0.0);
  EXPECT_NEAR(r.facts.get(Fact::NormEps).f, 1.5e-300, 1e-314);
  EXPECT_FALSE(r.facts.has_architecture());
}

struct Bad {
  const char* text;
  ws::Status status;
  uint64_t offset;
};

TEST(ConfigFactsErrors, ExactStatusAndOffset) {
  const Bad kBad[] = {
      {"[1,2]", ws::Status::ConfigNotObject, 0},
      {"  \"llama\"", ws::Status::ConfigNotObject, 2},
      {"{\"num_hidden_layers\": \"32\"}", ws::Status::ModelConfigInvalidFact, 22},
      {"{\"hidden_size\":4096.5}", ws::Status::ModelConfigInvalidFact, 15},
      {"{\"num_attention_heads\": -8}", ws::Status::ModelConfigInvalidFact, 24},
      {"{\"vocab_size\": 18446744073709551616}", ws::Status::ModelConfigInvalidFact, 15},
      {"{\"rope_theta\": -1.0}", ws::Status::ModelConfigInvalidFact, 15},
      {"{\"rope_theta\": 1e400}", ws::Status::ModelConfigInvalidFact, 15},
      {"{\"rope_theta\": true}", ws::Status::ModelConfigInvalidFact, 15},
      {"{\"model_type\": 5}", ws::Status::ModelConfigInvalidFact, 15},
      {"{\"text_config\": [1]}", ws::Status::ModelConfigInvalidFact, 16},
      {"{\"a\": {}, \"text_config\": {\"num_hidden_layers\": {}}}", ws::Status::ModelConfigInvalidFact, 47},
      {"{\"vocab_size\": 32000", ws::Status::JsonUnexpectedEnd, 20},
      {"{\"vocab_size\": 32000,}", ws::Status::JsonSyntax, 21},
      {"{\"vocab_size\": 32000} x", ws::Status::JsonTrailingCharacters, 22},
      {"{\"vocab_size\": 0032}", ws::Status::JsonInvalidNumber, 15},
      {"{\"model_type\": \"ll\xff\"}", ws::Status::InvalidUtf8, 18},
      {"", ws::Status::JsonUnexpectedEnd, 0},
  };
  for (const Bad& b : kBad) {
    for (size_t chunk : {size_t(1) << 20, size_t(1), size_t(5)}) {
      Parsed r = parse(b.text, chunk);
      EXPECT_EQ(r.status, b.status) << b.text << " chunk " << chunk << ": " << ws::status_name(r.status);
      EXPECT_EQ(r.offset, b.offset) << b.text << " chunk " << chunk;
    }
  }
}

TEST(ConfigFactsErrors, NestingLimitAndUsage) {
  ws::Limits lim;
  lim.max_nesting = 3;
  ws::ConfigFactsParser p(lim);
  const std::string t = R"({"a":{"b":{"c":{}}}})";
  EXPECT_EQ(p.feed(t.data(), t.size()), ws::Status::NestingTooDeep);
  EXPECT_EQ(p.error().offset, 15u);
  ws::ConfigFactsParser q;
  EXPECT_EQ(q.feed("{}", 2), ws::Status::Ok);
  EXPECT_EQ(q.finish(), ws::Status::Ok);
  EXPECT_EQ(q.finish(), ws::Status::UsageError);
  EXPECT_EQ(q.feed("{}", 2), ws::Status::UsageError);
}

}  // namespace

// Caller limits (ws::Limits) and the arena budget: a caller that lowers a limit gets that limit's
// own status at the right place, never a truncated table; a too-small arena reports the size that
// suffices, and exactly that size then works.
//
// Offsets follow tests/corpus/README.md: the first byte where the input breaks the limit, except
// limits on tensor keys (count, name length), which are known only once the key is complete — it
// could be "__metadata__" — and are reported at the key's opening quote.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "expect_table.h"
#include "harness.h"

namespace wstest {
namespace {

// A valid one-tensor file around an entry with extra text (an unknown field) inside it.
const std::string kPrefix = "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":";

std::string ok(const std::vector<uint8_t>& file) {
  return "Ok(End@" + std::to_string(file.size()) + ")";
}

std::string err(const char* status, uint64_t offset, const char* tensor = nullptr) {
  std::string s = std::string(status) + "@" + std::to_string(offset);
  if (tensor) s += "[" + printable(tensor) + "]";
  return s;
}

// Absolute offset of the k-th `needle` in a header.
uint64_t at(const std::string& header, const std::string& needle, int k = 1) {
  size_t pos = find_nth(header, needle, k);
  EXPECT_NE(pos, std::string::npos) << needle;
  return 8 + pos;
}

RunOptions with(void (*set)(ws::Limits*)) {
  RunOptions o;
  set(&o.limits);
  return o;
}

std::string nested(size_t arrays) {
  return kPrefix + std::string(arrays, '[') + std::string(arrays, ']') + "}}";
}

// max_nesting is the deepest allowed nesting, the root object counting as 1 (limits.h; the
// default 127 is serde_json's, see tests/corpus/README.md).
TEST(Limits, LoweredNesting) {
  RunOptions o = with([](ws::Limits* l) { l->max_nesting = 4; });
  // Root (1) + entry (2) + two arrays = depth 4: allowed; a third array is depth 5.
  auto good = make_safetensors(nested(2), pattern_bytes(1));
  expect_outcome(good, o, ok(good));
  auto bad = make_safetensors(nested(3), pattern_bytes(1));
  expect_outcome(bad, o, err("NestingTooDeep", 8 + kPrefix.size() + 2, "t"));

  // A plain one-tensor file is depth 3 (root, entry, shape array).
  std::string h = "{" + entry_json("t", "U8", "1", 0, 1) + "}";
  auto one = make_safetensors(h, pattern_bytes(1));
  expect_outcome(one, with([](ws::Limits* l) { l->max_nesting = 3; }), ok(one));
  expect_outcome(one, with([](ws::Limits* l) { l->max_nesting = 2; }),
                 err("NestingTooDeep", at(h, "[1]"), "t"));
  expect_outcome(one, with([](ws::Limits* l) { l->max_nesting = 1; }),
                 err("NestingTooDeep", at(h, "{\"dtype"), "t"));
}

TEST(Limits, NestingAboveTheSupportedBoundIsClamped) {
  RunOptions o = with([](ws::Limits* l) { l->max_nesting = 100000; });
  // Clamped to kMaxNestingSupported, the deepest nesting accepted.
  const size_t max_arrays = ws::kMaxNestingSupported - 2;  // root + entry + arrays
  auto good = make_safetensors(nested(max_arrays), pattern_bytes(1));
  expect_outcome(good, o, ok(good));
  auto bad = make_safetensors(nested(max_arrays + 1), pattern_bytes(1));
  expect_outcome(bad, o, err("NestingTooDeep", 8 + kPrefix.size() + max_arrays, "t"));
}

TEST(Limits, LoweredHeaderCap) {
  RunOptions o = with([](ws::Limits* l) { l->max_header_bytes = 64; });
  std::string body = "{" + entry_json("w", "U8", "2", 0, 2) + "}";
  std::string h64 = body + std::string(64 - body.size(), ' ');
  auto at_cap = make_safetensors(h64, pattern_bytes(2));
  expect_outcome(at_cap, o, ok(at_cap));
  auto over = make_safetensors(h64 + std::string(8, ' '), pattern_bytes(2));
  expect_outcome(over, o, err("HeaderTooLarge", 0));

  // A cap of 0 still lets an empty header through to the JSON check.
  RunOptions zero = with([](ws::Limits* l) { l->max_header_bytes = 0; });
  expect_outcome(make_safetensors("{}"), zero, err("HeaderTooLarge", 0));
  expect_outcome(make_safetensors(""), zero, err("JsonUnexpectedEnd", 8));
}

TEST(Limits, HeaderCapCannotBeRaised) {
  RunOptions o = with([](ws::Limits* l) { l->max_header_bytes = 200000000; });
  std::vector<uint8_t> f = make_safetensors("{}");
  uint64_t n = ws::kMaxSafetensorsHeader + 1;
  for (int i = 0; i < 8; ++i) f[i] = uint8_t(n >> (8 * i));
  expect_outcome(f, o, err("HeaderTooLarge", 0));
}

TEST(Limits, TensorCount) {
  RunOptions o = with([](ws::Limits* l) { l->max_tensors = 2; });
  std::string two = "{\"__metadata__\":{\"k\":\"v\"}," + entry_json("a", "U8", "1", 0, 1) + "," +
                    entry_json("b", "U8", "1", 1, 2) + "}";
  auto f2 = make_safetensors(two, pattern_bytes(2));
  expect_outcome(f2, o, ok(f2));  // __metadata__ is not a tensor
  std::string three = "{" + entry_json("a", "U8", "1", 0, 1) + "," +
                      entry_json("b", "U8", "1", 1, 2) + "," + entry_json("c", "U8", "1", 2, 3) +
                      "}";
  expect_outcome(make_safetensors(three, pattern_bytes(3)), o,
                 err("TooManyTensors", at(three, "\"c\""), "c"));

  RunOptions none = with([](ws::Limits* l) { l->max_tensors = 0; });
  std::string meta = "{\"__metadata__\":{\"k\":\"v\"}}";
  auto fm = make_safetensors(meta);
  expect_outcome(fm, none, ok(fm));
  std::string one = "{" + entry_json("a", "U8", "1", 0, 1) + "}";
  expect_outcome(make_safetensors(one, pattern_bytes(1)), none, err("TooManyTensors", 9, "a"));
}

TEST(Limits, NameLength) {
  RunOptions o = with([](ws::Limits* l) { l->max_name_bytes = 4; });
  std::string fits = "{\"__metadata__\":{}," + entry_json("abcd", "U8", "1", 0, 1) + "," +
                     entry_json("\\u00e9\\u00e9", "U8", "1", 1, 2) + "}";
  auto f = make_safetensors(fits, pattern_bytes(2));
  // "__metadata__" (12 bytes) is not a tensor name; "\u00e9\u00e9" is 4 bytes once decoded.
  expect_outcome(f, o, ok(f));
  std::string longer = "{" + entry_json("abcd", "U8", "1", 0, 1) + "," +
                       entry_json("abcde", "U8", "1", 1, 2) + "}";
  expect_outcome(make_safetensors(longer, pattern_bytes(2)), o,
                 err("NameTooLong", at(longer, "\"abcde\"")));
  std::string escaped = "{" + entry_json("\\u00e9\\u00e9\\u00e9", "U8", "1", 0, 1) + "}";
  expect_outcome(make_safetensors(escaped, pattern_bytes(1)), o, err("NameTooLong", 9));

  RunOptions zero = with([](ws::Limits* l) { l->max_name_bytes = 0; });
  std::string empty_name = "{" + entry_json("", "U8", "1", 0, 1) + "}";
  auto fe = make_safetensors(empty_name, pattern_bytes(1));
  expect_outcome(fe, zero, ok(fe));
  std::string a = "{" + entry_json("a", "U8", "1", 0, 1) + "}";
  expect_outcome(make_safetensors(a, pattern_bytes(1)), zero, err("NameTooLong", 9));
}

TEST(Limits, Rank) {
  RunOptions o = with([](ws::Limits* l) { l->max_rank = 2; });
  std::string two = "{" + entry_json("a", "U8", "2,3", 0, 6) + "}";
  auto f = make_safetensors(two, pattern_bytes(6));
  expect_outcome(f, o, ok(f));
  std::string three = "{" + entry_json("a", "U8", "1,2,3", 0, 6) + "}";
  expect_outcome(make_safetensors(three, pattern_bytes(6)), o,
                 err("RankTooLarge", at(three, "3]"), "a"));

  RunOptions scalar = with([](ws::Limits* l) { l->max_rank = 0; });
  std::string s0 = "{" + entry_json("a", "U8", "", 0, 1) + "}";
  auto fs = make_safetensors(s0, pattern_bytes(1));
  expect_outcome(fs, scalar, ok(fs));
  std::string s1 = "{" + entry_json("a", "U8", "1", 0, 1) + "}";
  expect_outcome(make_safetensors(s1, pattern_bytes(1)), scalar,
                 err("RankTooLarge", at(s1, "1]"), "a"));
}

TEST(Limits, MetadataCanBeValidatedAndDropped) {
  std::string h = "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"" + std::string(200, 'x') +
                  "\"}," + entry_json("a", "U8", "1", 0, 1) + "}";
  auto f = make_safetensors(h, pattern_bytes(1));
  RunResult kept = expect_outcome(f, RunOptions(), ok(f));
  EXPECT_EQ(kept.metadata.size(), 2u);
  RunOptions drop = with([](ws::Limits* l) { l->keep_metadata = false; });
  RunResult dropped = expect_outcome(f, drop, ok(f));
  EXPECT_TRUE(dropped.metadata.empty());
  // Values need not be kept to be validated (keys must, for the duplicate check): the 200-byte
  // value must not cost arena when metadata is dropped.
  EXPECT_LE(dropped.arena_peak + 200, kept.arena_peak)
      << "dropped metadata still uses the arena: peak " << dropped.arena_peak << " vs "
      << kept.arena_peak << " when kept";
  // Still validated: a non-string value is rejected.
  std::string bad = "{\"__metadata__\":{\"k\":1}}";
  expect_outcome(make_safetensors(bad), drop, err("MetadataValueNotString", at(bad, "1}")));
}

// --- arena -------------------------------------------------------------------------------------

TEST(Arena, ExhaustionReportsASizeThatSuffices) {
  int exhausted = 0;
  for (const std::string& path :
       list_files(std::string(WS_TESTS_DIR) + "/data/real/safetensors", ".safetensors")) {
    SCOPED_TRACE(path);
    std::vector<uint8_t> f;
    ASSERT_TRUE(read_file(path, &f));
    RunResult roomy = run_reader(f.data(), f.size(), Chunking::whole());
    ASSERT_TRUE(roomy.ended) << roomy.summary();

    RunOptions tiny;
    tiny.arena_size = 64;
    RunResult small = run_reader(f.data(), f.size(), Chunking::whole(), tiny);
    if (small.ended) {
      EXPECT_LE(roomy.arena_peak, 64u);
      continue;
    }
    ++exhausted;
    EXPECT_EQ(small.status_name(), "ArenaExhausted");
    EXPECT_FALSE(small.header_ready);
    EXPECT_GT(small.arena_needed, 64u);
    // The same under 1-byte feeding: the count does not depend on chunking.
    RunResult small1 = run_reader(f.data(), f.size(), Chunking::fixed(1), tiny);
    EXPECT_EQ(small1.status_name(), "ArenaExhausted");
    EXPECT_EQ(small1.arena_needed, small.arena_needed);

    RunOptions exact;
    exact.arena_size = small.arena_needed;
    for (const Chunking& c : {Chunking::whole(), Chunking::fixed(1)}) {
      RunResult r = run_reader(f.data(), f.size(), c, exact);
      EXPECT_TRUE(r.ended) << "arena of exactly arena_needed() = " << small.arena_needed
                           << " bytes, chunking " << c.name() << ": " << r.summary();
      EXPECT_TRUE(r.events == roomy.events);
      EXPECT_TRUE(r.tensor_bytes == roomy.tensor_bytes);
      EXPECT_EQ(r.tensors.size(), roomy.tensors.size());
      for (size_t i = 0; i < r.tensors.size() && i < roomy.tensors.size(); ++i)
        EXPECT_EQ(r.tensors[i].name, roomy.tensors[i].name);
      EXPECT_EQ(r.metadata, roomy.metadata);
    }
  }
  EXPECT_GE(exhausted, 5) << "64 bytes should be too small for most real files";
}

TEST(Arena, ZeroBytes) {
  std::string h = "{" + entry_json("a", "U8", "1", 0, 1) + "}";
  auto f = make_safetensors(h, pattern_bytes(1));
  RunOptions none;
  none.arena_size = 0;
  RunResult r = run_reader(f.data(), f.size(), Chunking::whole(), none);
  ASSERT_EQ(r.status_name(), "ArenaExhausted");
  RunOptions exact;
  exact.arena_size = r.arena_needed;
  RunResult again = run_reader(f.data(), f.size(), Chunking::whole(), exact);
  EXPECT_TRUE(again.ended) << again.summary();
}

}  // namespace
}  // namespace wstest

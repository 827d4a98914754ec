// Chunking invariance under mutation: thousands of deterministic mutants of the corpora and the
// real files — safetensors: bytes replaced by JSON-significant or invalid-UTF-8 bytes, deleted,
// inserted, ranges duplicated; GGUF: bytes and whole 4/8-byte fields replaced by boundary values
// (lengths, counts, types), deleted, inserted, duplicated — each fed whole, 1 byte at a time and
// in random pieces. No expectation is needed: whatever the verdict, every chunking must reach the
// same one, with the same events and bytes (DESIGN.md: "Chunking never changes the result"). A
// reader with a fast path for whole entries/fields and a slow path for split ones is exactly
// where this breaks. Also run with lowered limits and a tiny arena, which both paths must enforce
// alike.
#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness.h"

namespace wstest {
namespace {

// Seed files of one format: the corpus and the real files, small enough to feed 1 byte at a time
// thousands of times.
std::vector<std::vector<uint8_t>> seeds(const std::vector<std::string>& dirs,
                                        const std::string& extension, size_t max_size) {
  std::vector<std::vector<uint8_t>> v;
  for (const std::string& sub : dirs) {
    for (const std::string& f : list_files(std::string(WS_TESTS_DIR) + sub, extension)) {
      std::vector<uint8_t> bytes;
      EXPECT_TRUE(read_file(f, &bytes));
      if (bytes.size() > 8 && bytes.size() < max_size) v.push_back(bytes);
    }
  }
  return v;
}

std::vector<std::vector<uint8_t>> safetensors_seeds() {
  return seeds({"/corpus/safetensors", "/data/real/safetensors"}, ".safetensors", 4096);
}

std::vector<std::vector<uint8_t>> gguf_seeds() {
  return seeds({"/corpus/gguf", "/data/real/gguf", "/data/synthetic/gguf"}, ".gguf", 16384);
}

// Deterministic mutator (xorshift; the sequence depends only on the seed).
class Mutator {
 public:
  explicit Mutator(uint32_t seed) : s_(seed * 2654435761u + 1) {}
  uint32_t next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 17;
    s_ ^= s_ << 5;
    return s_;
  }
  uint32_t below(uint32_t n) { return n ? next() % n : 0; }

  std::vector<uint8_t> mutate(std::vector<uint8_t> f) {
    static const uint8_t kBytes[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '0', '1', '9',
                                     '-', '+', 'e', '.', ' ', '\t', 'u', 'n', 'd', 0x00, 0x1F,
                                     0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xFF};
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | f[size_t(i)];
    size_t header_end = size_t(std::min<uint64_t>(8 + n, f.size()));
    int edits = 1 + int(below(3));
    for (int k = 0; k < edits && f.size() > 8; ++k) {
      // Mostly inside the header, where the parsing is.
      size_t lo = 8, hi = std::min(header_end, f.size());
      if (hi <= lo || below(8) == 0) hi = f.size();
      size_t at = lo + below(uint32_t(hi - lo));
      switch (below(5)) {
        case 0:
        case 1: f[at] = kBytes[below(sizeof kBytes)]; break;
        case 2: f[at] = uint8_t(next()); break;
        case 3:
          f.erase(f.begin() + long(at));
          if (at < header_end && below(2)) --n, --header_end;  // keep the length consistent
          break;
        case 4: {
          size_t len = 1 + below(12);
          if (at + len > f.size()) len = f.size() - at;
          std::vector<uint8_t> copy(f.begin() + long(at), f.begin() + long(at + len));
          f.insert(f.begin() + long(at), copy.begin(), copy.end());
          if (at < header_end && below(2)) n += len, header_end += len;
          break;
        }
      }
    }
    for (int i = 0; i < 8; ++i) f[size_t(i)] = uint8_t(n >> (8 * i));
    return f;
  }

 private:
  uint32_t s_;
};

std::string hex(const std::vector<uint8_t>& f) {
  std::string s;
  char b[4];
  for (uint8_t c : f) {
    snprintf(b, sizeof b, "%02x", c);
    s += b;
  }
  return s;
}

// GGUF mutator: the interesting bytes of a binary header are its length, count and type fields,
// so besides single bytes it overwrites whole little-endian u32/u64 fields (at any position, so
// also across field boundaries) with boundary values.
class GgufMutator {
 public:
  explicit GgufMutator(uint32_t seed) : m_(seed) {}

  std::vector<uint8_t> mutate(std::vector<uint8_t> f) {
    static const uint8_t kBytes[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x07, 0x08, 0x09, 0x0C,
                                     0x0D, 0x1F, 0x20, 0x24, 0x27, 0x3F, 0x40, 0x7F, 0x80, 0xFF};
    static const uint64_t kValues[] = {0,          1,          2,          3,
                                       4,          5,          8,          9,
                                       12,         13,         17,         20,
                                       31,         32,         36,         39,
                                       43,         48,         63,         64,
                                       1000,       1u << 30,   (1u << 30) + 1,
                                       0xFFFFFFFFull, 1ull << 32, 1ull << 61, 1ull << 62,
                                       1ull << 63, ~0ull};
    int edits = 1 + int(m_.below(3));
    for (int k = 0; k < edits && f.size() > 8; ++k) {
      // Mostly inside the first 1 KiB, where the headers of the seeds are; never the magic.
      size_t hi = f.size();
      if (hi > 1024 && m_.below(4) != 0) hi = 1024;
      size_t at = 4 + m_.below(uint32_t(hi - 4));
      switch (m_.below(6)) {
        case 0: f[at] = kBytes[m_.below(sizeof kBytes)]; break;
        case 1: f[at] = uint8_t(m_.next()); break;
        case 2:
        case 3: {
          uint64_t v = kValues[m_.below(sizeof kValues / sizeof kValues[0])];
          size_t width = m_.below(2) ? 8 : 4;
          for (size_t i = 0; i < width && at + i < f.size(); ++i) f[at + i] = uint8_t(v >> (8 * i));
          break;
        }
        case 4: {
          size_t len = 1 + m_.below(9);
          if (at + len > f.size()) len = f.size() - at;
          f.erase(f.begin() + long(at), f.begin() + long(at + len));
          break;
        }
        case 5: {
          size_t len = 1 + m_.below(24);
          if (at + len > f.size()) len = f.size() - at;
          std::vector<uint8_t> copy(f.begin() + long(at), f.begin() + long(at + len));
          f.insert(f.begin() + long(at), copy.begin(), copy.end());
          break;
        }
      }
    }
    return f;
  }

 private:
  Mutator m_;
};

// Runs `mutants` mutants of every seed file; returns how many disagreed (and reports the first
// few). `mutate(seed, file)` makes one mutant.
template <typename Mutate>
int check_invariance(const std::vector<std::vector<uint8_t>>& files, Mutate mutate,
                     const RunOptions& options, int mutants, uint32_t base_seed) {
  int failures = 0, checked = 0;
  // How many disagreements to print (WS_FUZZ_REPORT=n to see more when triaging).
  const int report = getenv("WS_FUZZ_REPORT") ? atoi(getenv("WS_FUZZ_REPORT")) : 5;
  for (size_t fi = 0; fi < files.size(); ++fi) {
    for (int m = 0; m < mutants; ++m) {
      std::vector<uint8_t> f = mutate(base_seed + uint32_t(fi * 1000 + size_t(m)), files[fi]);
      RunResult whole = run_reader(f.data(), f.size(), Chunking::whole(), options);
      for (const Chunking& c : {Chunking::fixed(1), Chunking::random(uint32_t(m + 1))}) {
        RunResult r = run_reader(f.data(), f.size(), c, options);
        ++checked;
        bool same = r.summary() == whole.summary() && r.events == whole.events &&
                    r.tensor_bytes == whole.tensor_bytes && r.kvs == whole.kvs &&
                    r.violations.empty() && whole.violations.empty();
        if (!same && ++failures <= report)
          ADD_FAILURE() << "chunking " << c.name() << " gives " << r.summary() << ", whole gives "
                        << whole.summary()
                        << (r.violations.empty() ? "" : "; " + r.violations[0])
                        << (whole.violations.empty() ? "" : "; whole: " + whole.violations[0])
                        << "\n  input (" << f.size() << " bytes): " << hex(f);
      }
    }
  }
  EXPECT_EQ(failures, 0) << "of " << checked << " mutant runs";
  return failures;
}

int check_invariance(const RunOptions& options, int mutants, uint32_t base_seed) {
  std::vector<std::vector<uint8_t>> files = safetensors_seeds();
  EXPECT_GT(files.size(), 100u);
  auto mutate = [](uint32_t seed, const std::vector<uint8_t>& f) { return Mutator(seed).mutate(f); };
  return check_invariance(files, mutate, options, mutants, base_seed);
}

int check_gguf_invariance(const RunOptions& options, int mutants, uint32_t base_seed) {
  std::vector<std::vector<uint8_t>> files = gguf_seeds();
  EXPECT_GT(files.size(), 100u);
  auto mutate = [](uint32_t seed, const std::vector<uint8_t>& f) {
    return GgufMutator(seed).mutate(f);
  };
  return check_invariance(files, mutate, options, mutants, base_seed);
}

TEST(ChunkingFuzz, MutantsGiveTheSameVerdictUnderEveryChunking) {
  check_invariance(RunOptions(), 24, 1);
}

TEST(ChunkingFuzz, MutantsUnderLoweredLimits) {
  RunOptions o;
  o.limits.max_nesting = 3;
  o.limits.max_rank = 2;
  o.limits.max_name_bytes = 6;
  o.limits.max_tensors = 3;
  o.limits.max_header_bytes = 400;
  check_invariance(o, 12, 100000);
}

TEST(ChunkingFuzz, MutantsWithATinyArena) {
  RunOptions o;
  o.arena_size = 96;
  check_invariance(o, 8, 200000);
}

// GGUF: the same invariance over mutants of the GGUF corpus and files, plain, with the input
// size declared (a different verdict is allowed there, but again the same under every chunking),
// under lowered limits and with a tiny arena.
TEST(ChunkingFuzz, GgufMutantsGiveTheSameVerdictUnderEveryChunking) {
  check_gguf_invariance(RunOptions(), 64, 300000);
}

TEST(ChunkingFuzz, GgufMutantsWithADeclaredSize) {
  RunOptions o;
  o.declare_input_size = true;
  check_gguf_invariance(o, 24, 400000);
}

TEST(ChunkingFuzz, GgufMutantsUnderLoweredLimits) {
  RunOptions o;
  o.limits.max_tensors = 2;
  o.limits.max_name_bytes = 24;  // most keys pass, long names and mutated lengths do not
  check_gguf_invariance(o, 16, 500000);
}

TEST(ChunkingFuzz, GgufMutantsWithATinyArena) {
  RunOptions o;
  o.arena_size = 1024;  // a few keys and tensor infos fit, then ArenaExhausted
  check_gguf_invariance(o, 8, 600000);
}

}  // namespace
}  // namespace wstest

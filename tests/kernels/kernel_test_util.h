// Helpers shared by the kernel tests: reading the shared reference files, comparing decoded
// values bit-exactly, a deterministic PRNG, and decoding through ws::Dequantizer in pieces.
#pragma once

#include <gtest/gtest.h>
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "weightstream/dequant.h"

namespace kernel_test {

// A path under the shared reference directory (WS_SHARED_DIR), e.g. "testdata/vectors/ggml".
std::string shared_path(const std::string& relative);

// The whole file, or false (and *out empty) when it cannot be read.
bool read_file(const std::string& path, std::vector<uint8_t>* out);
// read_file(shared_path(relative)); adds a test failure naming the path when it cannot be read.
std::vector<uint8_t> load_shared(const std::string& relative);

// Every string value of `"key": "..."` in a JSON text, in document order (no escapes inside the
// values; enough for the manifests under shared/testdata).
std::vector<std::string> json_string_values(const std::string& json, const std::string& key);

// Bit-exact comparison of n floats; a NaN matches any NaN of the same sign (payloads differ
// between implementations). The failure message names the first mismatches and the count.
::testing::AssertionResult floats_identical(const float* got, const float* want, size_t n);
// The same for IEEE binary16 bit patterns.
::testing::AssertionResult halves_identical(const uint16_t* got, const uint16_t* want, size_t n);
// Raw little-endian f32 file contents as floats.
std::vector<float> as_floats(const std::vector<uint8_t>& bytes);

// SplitMix64: small, fast and the same on every platform, so a failing seed reproduces anywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n), n > 0.
  uint64_t below(uint64_t n) { return next() % n; }
  void fill(uint8_t* p, size_t n);

 private:
  uint64_t state_;
};

// How decode_in_pieces cuts the input.
struct Pieces {
  enum Kind { Whole, Fixed, Random } kind = Whole;
  size_t size = 0;        // Fixed: bytes per piece
  size_t max_size = 0;    // Random: pieces of 1..max_size bytes
  uint64_t seed = 1;      // Random
  size_t out_blocks = 0;  // output capacity per decode() call, in blocks (0: unlimited)
};

// Decodes `in` through a fresh Dequantizer initialised with `spec`, feeding it as `pieces` says,
// and returns the output bytes. Fails the current test (and returns what was written so far) on
// any status other than Ok, or when the input does not produce the whole tensor.
std::vector<uint8_t> decode_in_pieces(const ws::DequantSpec& spec, const uint8_t* in, size_t in_size,
                                      const Pieces& pieces);

}  // namespace kernel_test

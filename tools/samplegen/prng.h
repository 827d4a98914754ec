// ws-make-samples — the generator's only source of "randomness".
//
// SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified by integer arithmetic, so the sample
// files come out byte-identical on every machine and every run. Seeds are derived from tensor
// names, so a tensor's values do not depend on which other tensors a file holds.
// The convention and UQFF fixtures use xorshift32_bytes() below, seeded per tensor.
#pragma once

#include <stdint.h>

#include <stddef.h>

#include <string_view>
#include <vector>

namespace samplegen {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [-1, 1): a 24-bit integer scaled by 2^-23, exact in float (no rounding to differ
  // between compilers).
  float next_signed_unit() {
    const int32_t u = static_cast<int32_t>(next() >> 40) - (1 << 23);
    return static_cast<float>(u) * (1.0f / 8388608.0f);
  }

 private:
  uint64_t state_;
};

// FNV-1a, 64-bit: turns a name into a seed.
inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

// Deterministic bytes for the convention and UQFF fixtures: xorshift32 from `state` (must be
// nonzero), each byte taken as `x >> shift`. The committed fixtures depend on these exact bytes.
inline std::vector<uint8_t> xorshift32_bytes(size_t n, uint32_t state, unsigned shift) {
  std::vector<uint8_t> out(n);
  uint32_t x = state;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = uint8_t(x >> shift);
  }
  return out;
}

}  // namespace samplegen

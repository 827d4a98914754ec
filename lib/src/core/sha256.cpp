// SHA-256 (FIPS 180-4 §6.2), written from the standard: eight working variables, 64 rounds per
// 64-byte block. The message schedule is kept as a ring of 16 words (W[t] for t >= 16 is computed
// in place of W[t - 16]), so a block costs 64 bytes of stack instead of 256: the microcontroller
// build counts its stack. The rounds are unrolled by 8 with the variables renamed instead of
// rotated, which is what lets a compiler keep all of them in registers.
#include "weightstream/sha256.h"

#include <string.h>

namespace ws {

namespace {

const uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
inline uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

// One round on renamed variables: the caller passes them in their rotated roles.
#define WS_SHA_ROUND(a, b, c, d, e, f, g, h, k, w)                                                 \
  do {                                                                                             \
    const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k + w; \
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));  \
    d += t1;                                                                                       \
    h = t1 + t2;                                                                                   \
  } while (0)

// W[t] for t >= 16 in the ring: w[t & 15] = s1(w[t-2]) + w[t-7] + s0(w[t-15]) + w[t-16].
#define WS_SHA_W(t)                                                                                \
  (w[(t) & 15] += (rotr(w[((t) - 2) & 15], 17) ^ rotr(w[((t) - 2) & 15], 19) ^ (w[((t) - 2) & 15] >> 10)) + \
                  w[((t) - 7) & 15] +                                                              \
                  (rotr(w[((t) - 15) & 15], 7) ^ rotr(w[((t) - 15) & 15], 18) ^ (w[((t) - 15) & 15] >> 3)))

void blocks(uint32_t* state, const uint8_t* p, size_t n) {
  uint32_t w[16];
  for (; n > 0; --n, p += 64) {
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 16; ++i) w[i] = be32(p + 4 * i);
    for (int t = 0; t < 16; t += 8) {
      WS_SHA_ROUND(a, b, c, d, e, f, g, h, kK[t + 0], w[t + 0]);
      WS_SHA_ROUND(h, a, b, c, d, e, f, g, kK[t + 1], w[t + 1]);
      WS_SHA_ROUND(g, h, a, b, c, d, e, f, kK[t + 2], w[t + 2]);
      WS_SHA_ROUND(f, g, h, a, b, c, d, e, kK[t + 3], w[t + 3]);
      WS_SHA_ROUND(e, f, g, h, a, b, c, d, kK[t + 4], w[t + 4]);
      WS_SHA_ROUND(d, e, f, g, h, a, b, c, kK[t + 5], w[t + 5]);
      WS_SHA_ROUND(c, d, e, f, g, h, a, b, kK[t + 6], w[t + 6]);
      WS_SHA_ROUND(b, c, d, e, f, g, h, a, kK[t + 7], w[t + 7]);
    }
    for (int t = 16; t < 64; t += 8) {
      WS_SHA_ROUND(a, b, c, d, e, f, g, h, kK[t + 0], WS_SHA_W(t + 0));
      WS_SHA_ROUND(h, a, b, c, d, e, f, g, kK[t + 1], WS_SHA_W(t + 1));
      WS_SHA_ROUND(g, h, a, b, c, d, e, f, kK[t + 2], WS_SHA_W(t + 2));
      WS_SHA_ROUND(f, g, h, a, b, c, d, e, kK[t + 3], WS_SHA_W(t + 3));
      WS_SHA_ROUND(e, f, g, h, a, b, c, d, kK[t + 4], WS_SHA_W(t + 4));
      WS_SHA_ROUND(d, e, f, g, h, a, b, c, kK[t + 5], WS_SHA_W(t + 5));
      WS_SHA_ROUND(c, d, e, f, g, h, a, b, kK[t + 6], WS_SHA_W(t + 6));
      WS_SHA_ROUND(b, c, d, e, f, g, h, a, kK[t + 7], WS_SHA_W(t + 7));
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#undef WS_SHA_ROUND
#undef WS_SHA_W

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void Sha256::reset() {
  static const uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(h_, kInit, sizeof h_);
  count_ = 0;
  fill_ = 0;
}

void Sha256::update(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  count_ += n;
  if (fill_) {
    const size_t take = n < 64 - fill_ ? n : 64 - fill_;
    memcpy(buf_ + fill_, p, take);
    fill_ += uint32_t(take);
    p += take;
    n -= take;
    if (fill_ < 64) return;
    blocks(h_, buf_, 1);
    fill_ = 0;
  }
  // Whole blocks straight from the input: no copy.
  if (n >= 64) {
    blocks(h_, p, n / 64);
    p += n & ~size_t(63);
    n &= 63;
  }
  if (n) {
    memcpy(buf_, p, n);
    fill_ = uint32_t(n);
  }
}

void Sha256::finish(uint8_t out[kSha256Bytes]) {
  // Padding: 0x80, zeros to 56 mod 64, then the message length in bits, big-endian.
  const uint64_t bits = count_ * 8;
  buf_[fill_++] = 0x80;
  if (fill_ > 56) {
    memset(buf_ + fill_, 0, 64 - fill_);
    blocks(h_, buf_, 1);
    fill_ = 0;
  }
  memset(buf_ + fill_, 0, 56 - fill_);
  for (int i = 0; i < 8; ++i) buf_[56 + i] = uint8_t(bits >> (56 - 8 * i));
  blocks(h_, buf_, 1);
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = uint8_t(h_[i] >> 24);
    out[4 * i + 1] = uint8_t(h_[i] >> 16);
    out[4 * i + 2] = uint8_t(h_[i] >> 8);
    out[4 * i + 3] = uint8_t(h_[i]);
  }
  fill_ = 0;
}

void sha256(const void* data, size_t n, uint8_t out[kSha256Bytes]) {
  Sha256 h;
  h.update(data, n);
  h.finish(out);
}

bool sha256_from_hex(const char* hex, size_t n, uint8_t out[kSha256Bytes]) {
  if (hex == nullptr || n != kSha256HexChars) return false;
  uint8_t d[kSha256Bytes];
  for (size_t i = 0; i < kSha256Bytes; ++i) {
    const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    d[i] = uint8_t(hi << 4 | lo);
  }
  memcpy(out, d, kSha256Bytes);
  return true;
}

void sha256_to_hex(const uint8_t digest[kSha256Bytes], char out[kSha256HexChars + 1]) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < kSha256Bytes; ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 15];
  }
  out[kSha256HexChars] = '\0';
}

}  // namespace ws

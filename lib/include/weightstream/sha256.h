// weightstream — SHA-256 (FIPS 180-4), incremental: bytes are hashed as they stream past, in pieces
// of any size, with no buffer beyond one 64-byte block and no allocation.
//
//   ws::Sha256 h;
//   h.update(piece, n);            // as often as pieces come
//   uint8_t digest[ws::kSha256Bytes];
//   h.finish(digest);              // then reset() to hash something else
//
// Model files come with SHA-256 digests: Ollama names each blob `sha256-<hex>` of its bytes, and
// Hugging Face's LFS object id (`X-Linked-Etag`) is the SHA-256 of the file. ws::ModelLoader
// verifies files against them while it streams (model_loader.h: expect_sha256()).
//
// The state is 112 bytes and the block function keeps a 16-word rolling message schedule (64
// bytes of stack, not 256), so a microcontroller can verify what it reads. Only programs that call
// it link it (the model loader reaches it through its digest calls, model_digest.cpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {

constexpr size_t kSha256Bytes = 32;
constexpr size_t kSha256HexChars = 64;

class Sha256 {
 public:
  Sha256() { reset(); }
  void reset();
  void update(const void* data, size_t n);
  // Writes the digest of everything updated since reset(). The object is then spent: reset() it.
  void finish(uint8_t out[kSha256Bytes]);
  uint64_t bytes() const { return count_; }  // bytes hashed so far

 private:
  uint32_t h_[8];
  uint64_t count_;
  uint8_t buf_[64];
  uint32_t fill_;
};

// Another SHA-256 implementation a host can give ws::ModelLoader (set_sha256_engine): a system
// library's hardware-accelerated one (the CLI uses nettle's, whose x86-64 build has SHA-NI code:
// 3-4x ws::Sha256). Its state lives in the loader's arena: at most kSha256EngineState bytes,
// 8-byte aligned, never moved between calls. The functions must not fail.
constexpr size_t kSha256EngineState = 128;
struct Sha256Engine {
  size_t state_size;
  void (*init)(void* state);
  void (*update)(void* state, const void* data, size_t n);
  void (*finish)(void* state, uint8_t out[kSha256Bytes]);
};

// The digest of one buffer.
void sha256(const void* data, size_t n, uint8_t out[kSha256Bytes]);

// 64 hex digits (either case) -> 32 bytes. False (out untouched) for anything else.
bool sha256_from_hex(const char* hex, size_t n, uint8_t out[kSha256Bytes]);
// 32 bytes -> 64 lowercase hex digits and a NUL.
void sha256_to_hex(const uint8_t digest[kSha256Bytes], char out[kSha256HexChars + 1]);

}  // namespace ws

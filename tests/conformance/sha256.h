// SHA-256 (FIPS 180-4) for the tests: checksums of streamed tensor bytes, compared with the
// data_sha256 values the reference tooling recorded. Self-contained so the tests need no crypto
// library; incremental so bytes can be hashed as they stream, without buffering or allocating.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace wstest {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // Finishes the hash and writes 32 bytes. The object must not be updated afterwards.
  void finish(uint8_t out[32]);
  // Finishes and returns lowercase hex.
  std::string hex();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_size_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(const void* data, size_t size);

}  // namespace wstest

// tests/cli — writes small GGUF files for the tests, independently of the library under test.
//
// Enough of the format (FORMATS.md §5) to build the cases the real files do not cover: a BitNet
// file, wrong tensor offsets, retired type ids. Tensor offsets are laid out the ggml way (each
// tensor padded to the alignment) unless a test overrides one; the data is zeros.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace clitest {

class GgufBuilder {
 public:
  GgufBuilder& version(uint32_t v) { version_ = v; return *this; }
  // general.alignment is not written by this; it only sets the padding (add the KV too).
  GgufBuilder& alignment(uint32_t a) { alignment_ = a; return *this; }
  GgufBuilder& kv_string(const std::string& key, const std::string& value);
  GgufBuilder& kv_u32(const std::string& key, uint32_t value);
  GgufBuilder& kv_u64(const std::string& key, uint64_t value);
  GgufBuilder& kv_f32(const std::string& key, float value);
  GgufBuilder& kv_string_array(const std::string& key, const std::vector<std::string>& values);
  GgufBuilder& kv_i32_array(const std::string& key, const std::vector<int32_t>& values);
  // `bytes`: the tensor's data size as the test computes it for `type_id`. `offset_override`
  // (~0: none) replaces the offset written in its tensor info.
  GgufBuilder& tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type_id,
                      uint64_t bytes, uint64_t offset_override = ~uint64_t(0));

  // The whole file: header, padding, data (the last tensor unpadded).
  std::string bytes() const;
  // Absolute offset of the offset field / type field of tensor info `i`.
  uint64_t offset_field(size_t i) const;
  uint64_t type_field(size_t i) const;
  // Absolute offset of key-value `i`.
  uint64_t kv_offset(size_t i) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type;
    uint64_t bytes;
    uint64_t offset_override;
  };
  std::string header(std::vector<uint64_t>* type_fields, std::vector<uint64_t>* offset_fields,
                     std::vector<uint64_t>* kv_offsets) const;

  uint32_t version_ = 3;
  uint32_t alignment_ = 32;
  std::vector<std::string> kvs_;  // each key-value's encoding
  std::vector<Tensor> tensors_;
};

}  // namespace clitest

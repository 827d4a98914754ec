// weightstream CLI — a copy of a GGUF file's tensor-info section, kept while it streams so that
// an error inside it can be explained with the values involved.
//
// ws::Error says where a tensor info was rejected, not with which values: GgufRetiredType does
// not carry the type id, GgufInvalidTensorOffset neither the offset found nor the one ggml
// expects. Unlike the key-values before it (vocabularies of megabytes), the tensor-info section
// is small — about a hundred bytes per tensor, the same order as the reader's own table — so the
// CLI copies it as it passes and reads the values back from the copy.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>

#include "weightstream/ggml_types.h"

namespace wscli {

// Magic, version, tensor count, key-value count: where the key-values (or, without any, the
// tensor infos) start in GGUF v2 and v3.
constexpr uint64_t kGgufPreambleBytes = 24;

class GgufInfoCopy {
 public:
  // The tensor infos start at absolute offset `offset` (where the last key-value ends).
  void start(uint64_t offset);
  bool started() const { return started_; }
  // A piece of input fed to the reader, starting at absolute offset `at`, passed before the next
  // piece is read (the reader only has a view of it). Bytes before the section or already copied
  // are skipped, so a piece may be passed twice.
  void keep(const uint8_t* data, size_t size, uint64_t at);
  // The header is complete: nothing more is needed, and the copy is dropped.
  void stop();

  // Little-endian fields of the copy; false when not (or not wholly) in it.
  bool read_u32(uint64_t offset, uint32_t* v) const;
  bool read_u64(uint64_t offset, uint64_t* v) const;

  // The data offset ggml expects in the tensor info whose offset field is at absolute offset
  // `field_offset`: the end of the tensor before it padded to `alignment`, or 0 for the first.
  // False when the infos before it are not all in the copy.
  bool expected_data_offset(uint64_t field_offset, uint32_t alignment, ws::GgmlDialect dialect,
                            uint64_t* expected) const;

 private:
  bool read(uint64_t offset, uint32_t n, uint64_t* v) const;

  bool started_ = false;
  bool stopped_ = false;
  uint64_t start_ = 0;
  std::string bytes_;  // the section from start_ on
};

}  // namespace wscli

// weightstream CLI — error messages users can act on.
//
// The library reports a status, an offset and a tensor; the CLI turns that into a sentence with
// the numbers that explain it and, where there is one, a fix: the library's (ws::status_hint, in the
// words of the convention that raised it), the same the JS package gives.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <optional>
#include <string>

#include "weightstream/limits.h"
#include "weightstream/status.h"

namespace wscli {

// What the caller knows about the input when an error happens; every field is optional.
struct ErrorFacts {
  ws::Status code = ws::Status::Ok;
  std::string prefix;                       // the input's first bytes (up to 8), for format guesses
  std::optional<uint64_t> declared_header;  // the u64 header length, once 8 bytes were read
  uint64_t offset = 0;                      // the error's offset
  std::optional<uint64_t> input_size;       // file size, or how much of a stream was read
  bool input_size_exact = false;            // input_size is the whole input (a regular file)
  std::optional<uint64_t> data_end;         // absolute end of the last tensor's data (data_end_of)
  uint64_t header_limit = ws::kMaxSafetensorsHeader;
  size_t arena_size = 0;
  size_t arena_needed = 0;
  std::string index_shard;                  // shard errors: the shard the index places the tensor in
  std::optional<uint64_t> index_total_size;  // IndexTotalSizeMismatch: what the index says
  std::optional<uint64_t> tensors_total_size;  // ... and what the shards hold
  // GGUF values the library does not report with the error; the CLI reads them back from its copy
  // of the tensor infos (gguf_infos.h) or from the key-values it collected.
  std::optional<uint32_t> ggml_type_id;         // GgufInvalidType, GgufRetiredType: the id found
  std::string ggml_type_name;                   // GgufRetiredType: what the id meant, if known
  std::string bitnet_type_name;  // ... and what BitNet's fork means by it, in a file whose
                                 // general.architecture does not name bitnet
  std::optional<uint64_t> tensor_offset_found;  // GgufInvalidTensorOffset: the offset in the file
  std::optional<uint64_t> tensor_offset_expected;  // ... and the one ggml computes
  uint32_t gguf_alignment = 0;
  std::string gguf_key;                    // GgufDuplicateKey: the key
  std::optional<uint64_t> gguf_key_other;  // ... and where else it appears
  // ws::Error's found / expected values, where the library gives them (problem_from copies them).
  std::optional<uint64_t> found, expected;
  std::string detail;  // ModelLoader::error_detail() (GgufSplitNameMismatch: the ending the name needs)
  std::string digest_expected, digest_actual;  // DigestMismatch: the two SHA-256s (hex)
  uint8_t convention = 0;  // ModelLoader::error_convention(): whose words the fix is in (0 plain: none)
};

// data_start + data_size, or UINT64_MAX for a data section that would end past 2^64 (a crafted
// header; the reader rejects it as TruncatedData).
uint64_t data_end_of(uint64_t data_start, uint64_t data_size);

// "description (details). Hint" — the message after "invalid: Code at byte N: ".
std::string error_message(const ErrorFacts& facts);

// What the first bytes of a rejected input look like ("an HTML page", "a Git LFS pointer"), as a
// sentence suggesting the fix, or "" when they look like nothing in particular.
std::string content_guess(const std::string& prefix);

}  // namespace wscli

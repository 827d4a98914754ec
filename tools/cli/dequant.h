// weightstream CLI — `weightstream dequant FILE (--tensor NAME | --all) [--to f32|f16] -o OUT`:
// decodes tensors to raw little-endian values in row-major order, streaming the file through
// ws::Reader and each tensor's bytes through a ws::Dequantizer (never the whole file, nor a whole
// tensor, in memory; the output is written in pieces of at most 1 MiB).
#pragma once

#include <stdint.h>

#include <optional>
#include <string>
#include <vector>

#include "cli_args.h"
#include "report.h"
#include "weightstream/dequant.h"
#include "weightstream/reader.h"

namespace wscli {

// One tensor of the file: what it is, how it decodes, where its values go.
struct DequantTensor {
  std::string name;
  std::string stored;                  // the safetensors dtype or the GGML type name
  std::optional<uint32_t> ggml_type;   // GGUF: the type id
  std::optional<ws::QuantFormat> format;  // empty: it cannot be decoded, `skip_reason` says why
  std::string skip_reason;
  uint32_t block_elems = 0, block_bytes = 0;  // the format's block (1 value for element-wise)
  std::vector<uint64_t> shape;         // logical, row-major (GGUF: ne reversed)
  uint64_t elements = 0;
  uint64_t stored_bytes = 0;
  uint64_t data_offset = 0;            // absolute file offset of its first stored byte
  uint64_t output_bytes = 0;           // elements x 4 (f32) or x 2 (f16)
  std::optional<float> i2s_scale;      // BitNet I2_S: the f32 scale from the tensor's tail
  bool selected = false;
  std::string output_file;             // where its values go (empty: not written)
  bool written = false;
};

// Every tensor of a validated header, with its decoding (or why there is none).
std::vector<DequantTensor> plan_tensors(const ws::Reader& reader, bool f16);

// Why a stored type has no decoding, e.g. "I64 holds integers, which have no float decoding".
std::string no_decoding_reason(const std::string& stored, bool gguf);

// A tensor name as a file name in --all's directory: bytes other than [A-Za-z0-9._-] become '_',
// a leading '.' (hidden files, "..") gets a '_' before it, an empty name becomes "_", and names
// are cut to 200 bytes. `taken` holds the names given so far (lowercase, for case-insensitive
// filesystems); a repeat gets "~2", "~3", ... Returns the name without ".bin".
std::string output_file_stem(const std::string& tensor_name, std::vector<std::string>* taken);

// Up to `max` names like `wanted` (ignoring case: edit distance within a third of its length,
// or containing it, or contained in it), closest first.
std::vector<std::string> close_names(const std::string& wanted, const std::vector<std::string>& names,
                                     size_t max);

// The --json output: {"file","format","to","tensors":[...],"error"}.
std::string dequant_json(const std::string& path, ws::Format format, bool f16,
                         const std::vector<DequantTensor>& tensors, bool all,
                         const std::optional<Problem>& problem);

// Returns the exit status: 0 done, 1 invalid input (the file or a block in it), 2 usage error,
// unreadable input or unwritable output, a tensor that is not there or has no decoding.
int run_dequant(const CliOptions& options);

}  // namespace wscli

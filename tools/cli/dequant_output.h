// weightstream CLI — what `dequant` reports and where its values go, for both kinds of rows: a
// file's tensors as stored (tensor_rows.h: GGUF, safetensors without a convention, a companion by
// name) and logical weights (MLX, Ollama, UQFF, sharded models). One row type, one JSON writer,
// one text line per tensor written, one --all summary, one naming of output files.
#pragma once

#include <stdint.h>

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "report.h"
#include "weightstream/dequant.h"
#include "weightstream/reader.h"

namespace wscli {

// A piece of a logical weight, in the order it is read (companions first).
struct DequantPiece {
  std::string role, tensor, shard;
  uint64_t offset = 0, bytes = 0;
};

// One output of dequant: a stored tensor, or a logical weight (`logical`).
struct DequantTensor {
  std::string name;
  std::string stored;                  // the safetensors dtype or the GGML type name (logical: the packed piece's)
  std::optional<uint32_t> ggml_type;   // GGUF: the type id
  std::optional<ws::QuantFormat> format;  // empty: it cannot be decoded, `skip_reason` says why
  std::string skip_reason;
  uint32_t block_elems = 0, block_bytes = 0;  // the format's block (1 value for element-wise)
  std::vector<uint64_t> shape;         // logical, row-major (GGUF: ne reversed)
  uint64_t elements = 0;
  uint64_t stored_bytes = 0;           // logical: every piece
  uint64_t data_offset = 0;            // absolute file offset of its first stored byte (logical: the packed piece's)
  uint64_t output_bytes = 0;           // elements x 4 (f32) or x 2 (f16)
  std::optional<float> i2s_scale;      // BitNet I2_S: the f32 scale from the tensor's tail
  // Logical weights only.
  bool logical = false;
  std::string convention, mode, shard;  // shard: the file of the packed piece (empty: the file itself)
  bool plain = true;                    // the convention's weights are stored tensors (convention_info)
  std::string split;                    // a split GGUF model's tensor: its split file
  uint32_t bits = 0, group = 0;         // 0: no MLX mode
  std::string parameters;               // ws::quant_parameters as "key=value ..." (empty: none)
  std::vector<DequantPiece> pieces;
  bool selected = false;
  std::string output_file;             // where its values go (empty: not written)
  bool written = false;
};

// Why a stored type has no decoding, e.g. "I64 holds integers, which have no float decoding".
std::string no_decoding_reason(const std::string& stored, bool gguf);

// A tensor name as a file name in --all's directory: bytes other than [A-Za-z0-9._-] become '_',
// a leading '.' (hidden files, "..") gets a '_' before it, an empty name becomes "_", and names
// are cut to 200 bytes. `taken` holds the names given so far (lowercase, for case-insensitive
// filesystems); a repeat gets "~2", "~3", ... Returns the name without ".bin".
std::string output_file_stem(const std::string& tensor_name, std::vector<std::string>* taken);
// The same, with the names given so far in a hash set: --all over a model of 100,000 weights.
std::string output_file_stem(const std::string& tensor_name, std::unordered_set<std::string>* taken);

// --all: creates `dir` when missing; a Problem (I/O) when it cannot be created or is no directory.
std::optional<Problem> prepare_output_dir(const std::string& dir);

// Up to `max` names like `wanted` (ignoring case: edit distance within a third of its length,
// or containing it, or contained in it), closest first.
std::vector<std::string> close_names(const std::string& wanted, const std::vector<std::string>& names,
                                     size_t max);
// TensorNotFound for --tensor `wanted`: "no <what> named W among the N <unit>s of the <whole>" and
// up to five close names (or where to list them). what/unit: "tensor"/"tensor" for a file,
// "logical weight"/"weight" for a model.
Problem name_not_found(const std::string& wanted, const std::vector<std::string>& names, const std::string& what,
                       const std::string& unit, const std::string& whole);

// The --json output: {"file","format",["convention",]"to","tensors":[...],"error"}. `convention`
// is given for a model read as logical weights (its rows are `logical`; the error then has a
// "shard"). Rows: every one with --all, else the selected one. "warnings" after "error" when the
// load raised any (problem_text.h write_warnings_json).
std::string dequant_json(const std::string& path, ws::Format format, const std::optional<std::string>& convention,
                         bool f16, const std::vector<DequantTensor>& tensors, bool all,
                         const std::optional<Problem>& problem, const std::vector<WarningRow>& warnings = {});

// The text line for a tensor written: "NAME: WHAT [shape] -> N f32 values, BYTES in FILE".
std::string written_line(const DequantTensor& t, bool f16);

// --all's text ending: "NAME: skipped: REASON" lines, then "N tensors, BYTES, written to DIR[; K skipped]".
std::string all_summary_text(const std::vector<DequantTensor>& tensors, const std::string& dir);

}  // namespace wscli

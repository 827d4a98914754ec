// weightstream CLI — `weightstream dequant FILE (--tensor NAME | --all) [--to f32|f16] -o OUT`:
// decodes tensors to raw little-endian values in row-major order (never the whole file, nor a
// whole tensor, in memory; the output is written in pieces of at most 1 MiB).
//
// A model with a convention (MLX, Ollama, UQFF) or of several files (an index, a manifest) is
// dequantized as logical weights (logical_dequant.h), --all included. Everything else (GGUF,
// standard input, a safetensors file of plain tensors) streams through ws::Reader here, tensor by
// tensor, each tensor's bytes through a ws::Dequantizer. Both report through dequant_output.h.
#pragma once

#include <stdint.h>

#include <optional>
#include <string>
#include <vector>

#include "cli_args.h"
#include "dequant_output.h"
#include "report.h"
#include "weightstream/dequant.h"
#include "weightstream/reader.h"

namespace wscli {

// Every tensor of a validated header, with its decoding (or why there is none).
std::vector<DequantTensor> plan_tensors(const ws::Reader& reader, bool f16);

// Returns the exit status: 0 done, 1 invalid input (the file or a block in it), 2 usage error,
// unreadable input or unwritable output, a tensor that is not there or has no decoding.
int run_dequant(const CliOptions& options);

}  // namespace wscli

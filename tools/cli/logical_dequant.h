// weightstream CLI — `dequant FILE --tensor <logical weight>` and `dequant FILE --all` for models
// with conventions (MLX, Ollama blobs or manifest, UQFF) and sharded models (`*.index.json`):
// each weight's companions (scales, biases, global scale) are read first by range, then its
// packed bytes in --chunk-size pieces through one ws::Dequantizer: the load plan's seekable mode,
// so the scratch is one weight's companions plus one chunk, whatever order the file stores the
// pieces in. --all does this weight after weight (companions are a small fraction of a weight;
// nothing is kept from one weight to the next) and writes each logical weight decoded to its
// logical shape; companions are not outputs.
//
// Built over ws::LogicalModel only (logical_load.h), so a new convention plugs in where the model
// is built, not here. Rows, JSON and text lines: dequant_output.h, as the tensor path.
#pragma once

#include <optional>
#include <string>

#include "cli_args.h"

namespace wscli {

// The exit status (0 written, 1 invalid input, 2 usage error / unreadable / not found / no
// decoding), or nullopt when the tensor-by-tensor path (dequant.h) handles the request: standard
// input, GGUF, a single safetensors file without a convention (its tensors are its weights), and
// with --tensor a plain weight of a single file or a name that is a stored tensor but no logical
// weight (a companion, decoded as stored).
std::optional<int> run_logical_dequant(const CliOptions& options);

}  // namespace wscli

// weightstream CLI — `dequant FILE --tensor <logical weight>` for models with conventions
// (MLX, Ollama blobs) and sharded models (`*.index.json`): the weight's companions (scales,
// biases, global scale) are read first by range, then its packed bytes in --chunk-size pieces
// through one ws::Dequantizer: the load plan's seekable mode, so the scratch is the companions
// plus one chunk, whatever order the file stores the pieces in.
//
// Built over ws::LogicalModel only (logical_load.h), so a new convention (UQFF) plugs in where
// the model is built, not here.
#pragma once

#include <optional>
#include <string>

#include "cli_args.h"

namespace wscli {

// The exit status (0 written, 1 invalid input, 2 usage error / unreadable / not found / no
// decoding), or nullopt when the tensor-by-tensor path (dequant.h) handles the request: --all,
// standard input, GGUF, a single file without a convention, a plain weight of a single file, or
// a name that is a stored tensor but no logical weight.
std::optional<int> run_logical_dequant(const CliOptions& options);

}  // namespace wscli

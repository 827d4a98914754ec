// weightstream CLI — `dequant FILE (--tensor NAME | --all)` through ws::ModelLoader: a file, standard
// input, a sharded index, an Ollama manifest or a UQFF directory, its weights decoded by the
// library (seekable files: each weight's companions by range, then its packed bytes; standard
// input: in file order, early bytes kept in the loader's arena) and written in 1 MiB pieces. Rows:
// a model with a convention or of several files lists logical weights; a plain file (and GGUF)
// its tensors, as they are stored.
#pragma once

#include <optional>

#include "cli_args.h"

namespace wscli {

// The exit status; nullopt when --tensor names a stored tensor of a single file that is no
// weight (a companion), which the tensor-by-tensor path (dequant.h) decodes as stored.
std::optional<int> run_model_dequant(const CliOptions& options);

}  // namespace wscli

// weightstream CLI — `dequant FILE (--tensor NAME | --all)` through ws::ModelLoader: a file, standard
// input, a sharded index, an Ollama manifest or a UQFF directory, its weights decoded by the
// library (seekable files: each weight's companions by range, then its packed bytes; standard
// input: in file order, early bytes kept in the loader's arena) and written in 1 MiB pieces. Rows:
// a model with a convention or of several files lists logical weights; a plain file (and GGUF)
// its tensors, as they are stored.
#pragma once

#include "cli_args.h"

namespace wscli {

// `weightstream dequant FILE (--tensor NAME | --all) [--to f32|f16] -o OUT`: raw little-endian
// values in row-major order, never the whole file nor a whole tensor in memory. A stored tensor that
// is no weight (a companion, --tensor) is decoded from the file loaded again as stored tensors.
// Returns the exit status: 0 done, 1 invalid input (the file or a block in it), 2 usage error,
// unreadable input or unwritable output, a tensor that is not there or has no decoding.
int run_dequant(const CliOptions& options);

}  // namespace wscli

// weightstream CLI — `convert MODEL -o DIR`: a model's logical weights out as plain safetensors.
//
// A host of ws::ModelLoader (Decode mode) and ws::SafetensorsWriter: the library decides what each
// weight becomes, the files, their names, metadata, the index and the config.json edit
// (convert_plan.h); this file opens files, moves bytes and reports. Each output file is written
// as <name>.partial, header first (from the plan's sizes), then the weights' bytes as the loader
// hands them out, and renamed when complete, with its SHA-256 in a hidden .<name>.sha256 beside
// it. Run again with the same arguments, a conversion keeps every file whose size, header and
// recorded digest are as planned, and writes only the others.
#pragma once

#include "cli_args.h"

namespace wscli {

// Returns the exit status: 0 done, 1 invalid input, 2 usage or I/O error.
int run_convert(const CliOptions& options);

}  // namespace wscli

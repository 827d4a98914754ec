// weightstream CLI — a model directory named on the command line, resolved to the file that
// stands for the whole model, as loaders find it:
//   1. model.safetensors.index.json (a sharded Hugging Face / MLX model),
//   2. the first *.uqff (a UQFF directory; its other shards and residual.safetensors follow it),
//   3. model.safetensors,
//   4. the only *.safetensors or *.gguf file there.
// Anything else is not resolved (the caller reports the directory as unusable).
#pragma once

#include <string>

namespace wscli {

// True when `path` is a directory; then *resolved is the model file, or empty with *why saying
// what the directory holds instead.
bool resolve_model_dir(const std::string& path, std::string* resolved, std::string* why);

}  // namespace wscli

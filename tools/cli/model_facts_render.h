// weightstream CLI — model architecture facts (GGUF metadata or a config.json beside a
// safetensors file) and canonical tensor names, for inspect.
#pragma once

#include <optional>
#include <string>

#include "json_writer.h"
#include "report.h"
#include "byte_source.h"
#include "weightstream/model_facts.h"

namespace wscli {

// Reads the config.json in the directory of `model_path` (a path or a URL), if there is one.
// Returns nullopt when there is none; a config.json that does not parse gives a report with
// `problem` set.
std::optional<ModelFactsReport> config_facts_beside(const std::string& model_path, const HttpOptions& http);

// The facts block of inspect's text output ("model facts   from config.json" and one line per
// fact present).
std::string model_facts_text(const ModelFactsReport& m);
// {"source":"gguf","architecture":"llama","layers":32,...,"derived":["kv_heads"]} or, for a
// config.json that does not parse, {"source":"config.json","error":{code, offset}}.
void write_model_facts_json(JsonWriter* w, const ModelFactsReport& m);

// The canonical name of a tensor (ws::canonical_name with the architecture's options).
std::string canonical_text(const std::string& name, const std::optional<ModelFactsReport>& m);

}  // namespace wscli

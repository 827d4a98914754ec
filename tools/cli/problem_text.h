// weightstream CLI — a Problem rendered for people ("invalid: Code at byte N ...") and as the
// JSON "error" object, shared by inspect and validate so both say the same thing.
#pragma once

#include <string>

#include "json_writer.h"
#include "report.h"

namespace wscli {

// "invalid: HeaderTooLarge at byte 0: declared header length ... (…). Is this really …?"
// Tensor and shard are named when known: "… at byte 160 of model-00003-of-00003.safetensors in
// tensor "model.norm.weight": …". I/O failures read "error: cannot open …".
std::string problem_line(const Problem& p);

// {"code":…,"offset":N,"tensor":…|null,"message":…} plus "shard":…|null when `with_shard`
// (inputs that are shard indexes).
void write_problem_json(JsonWriter* w, const Problem& p, bool with_shard);

// "warning: GptqZeroSpill at byte N of model.safetensors in tensor "…qzeros": <message>".
std::string warning_line(const WarningRow& w);
// Every warning on stderr, one line each after "weightstream: <input>: " (inspect, validate,
// dequant; in --json mode too: the JSON carries them as well).
void print_warnings(const std::string& input, const std::vector<WarningRow>& warnings);
// "warnings": [{code, file, offset, tensor, weight, count, message}, ...], only when there are any
// (outputs without warnings stay as they were).
void write_warnings_json(JsonWriter* w, const std::vector<WarningRow>& warnings);

}  // namespace wscli

// weightstream CLI — inspect's logical-weights section (see logical_render.h).
#include "logical_render.h"

#include "problem_text.h"
#include "scan_sharded.h"
#include "text_format.h"

namespace wscli {

std::string logical_text(const LogicalSummary& s) {
  std::string out = "logical weights (" + s.convention +
                    (s.config.empty() ? "" : ", quantization from " + display_text(s.config)) + ")\n";
  if (s.problem) return out + "  " + problem_line(*s.problem) + "\n";
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < s.weights.size(); ++i) {
    const LogicalRow& r = s.weights[i];
    const bool q = r.mode != "none";
    // UQFF's GGUF and F8Q8 layers have no MLX mode: their block format says what they are.
    const std::string mode = q ? r.mode : !r.plain && !r.format.empty() ? r.format : "plain " + r.stored;
    const bool held = !r.companions.empty();  // a weight of one piece streams through
    rows.push_back({std::to_string(i), mode, r.bits ? std::to_string(r.bits) : "-",
                    r.group ? std::to_string(r.group) : "-", shape_text(r.shape), std::to_string(r.bytes),
                    held ? std::to_string(r.sequential_scratch) : "-", held ? std::to_string(r.seekable_scratch) : "-",
                    name_text(r.name)});
  }
  out += table_text({"#", "mode", "bits", "group", "logical shape", "bytes", "seq scratch", "seek scratch", "name"},
                    rows, {true, false, true, true, false, true, true, true, false});
  // The parameters the columns above do not show: those of weights with no MLX mode (FP8's
  // method, block and scale dtype; UQFF's type), as their convention presents them.
  std::string params;
  for (size_t i = 0; i < s.weights.size(); ++i) {
    const LogicalRow& r = s.weights[i];
    if (r.mode != "none" || r.plain || r.parameters.empty()) continue;
    params += "  " + std::to_string(i) + " ";
    for (size_t k = 0; k < r.parameters.size(); ++k)
      params += (k ? " " : "") + r.parameters[k].key + "=" + r.parameters[k].value;
    params += "\n";
  }
  if (!params.empty()) out += "\nquantization parameters\n" + params;
  out += "\npeak scratch (sequential stream): " + bytes_text(s.sequential_peak) + "\n";
  out += "peak scratch (seekable, " + std::to_string(s.chunk) + "-byte reads): " + bytes_text(s.seekable_peak) +
         "\n";
  return out;
}

void write_logical_json(JsonWriter* w, const LogicalSummary& s) {
  w->begin_object();
  w->key("convention").string(s.convention);
  w->key("config");
  if (s.config.empty())
    w->null();
  else
    w->string(s.config);
  w->key("weights").begin_array();
  for (const LogicalRow& r : s.weights) {
    w->begin_object();
    w->key("name").string(r.name);
    w->key("convention").string(r.convention);
    w->key("mode").string(r.mode);
    w->key("stored").string(r.stored);
    w->key("format");
    if (r.format.empty()) w->null(); else w->string(r.format);
    w->key("bits");
    if (r.bits) w->number(r.bits); else w->null();
    w->key("group");
    if (r.group) w->number(r.group); else w->null();
    w->key("shape").begin_array();
    for (uint64_t d : r.shape) w->number(d);
    w->end_array();
    w->key("bytes").number(r.bytes);
    w->key("companions").begin_array();
    for (const std::string& c : r.companions) w->string(c);
    w->end_array();
    w->key("parameters").begin_object();
    for (const LogicalRow::Parameter& p : r.parameters) {
      w->key(p.key);
      if (p.number) w->number(std::stoull(p.value)); else w->string(p.value);
    }
    w->end_object();
    w->key("sequential_scratch").number(r.sequential_scratch);
    w->key("seekable_scratch").number(r.seekable_scratch);
    w->key("packed_before_companion").boolean(r.packed_before_companion);
    w->end_object();
  }
  w->end_array();
  w->key("plan").begin_object();
  w->key("chunk").number(s.chunk);
  w->key("sequential_peak").number(s.sequential_peak);
  w->key("seekable_peak").number(s.seekable_peak);
  w->end_object();
  w->key("error");
  if (s.problem)
    write_problem_json(w, *s.problem, true);
  else
    w->null();
  w->end_object();
}

}  // namespace wscli

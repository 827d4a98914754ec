// weightstream CLI — validate (see validate.h).
#include "validate.h"

#include <stdio.h>

#include "json_writer.h"
#include "problem_text.h"
#include "manifest_blobs.h"
#include "scan_model.h"
#include "scan_sharded.h"
#include "text_format.h"

namespace wscli {

std::string validate_json_line(const Verdict& v) {
  // Key order is part of the interface: scripts and tests compare these lines as text.
  JsonWriter w;
  w.begin_object();
  w.key("file").string(v.path);
  w.key("valid").boolean(v.valid);
  w.key("format");
  if (v.format)
    w.string(*v.format);
  else
    w.null();
  w.key("tensors").number(v.tensors);
  w.key("error");
  if (v.problem)
    write_problem_json(&w, *v.problem, v.is_index || !v.problem->shard.empty());
  else
    w.null();
  write_warnings_json(&w, v.warnings);
  w.end_object();
  return w.str();
}

std::string validate_text_line(const Verdict& v) {
  std::string line = display_text(v.path) + ": ";
  if (v.valid) {
    line += "valid (" + v.format.value_or("unknown format") + ", ";
    if (v.is_manifest)
      line += "Ollama manifest, " + std::to_string(v.shards) + (v.shards == 1 ? " blob, " : " blobs, ");
    else if (v.is_index)
      line += std::to_string(v.shards) + (v.shards == 1 ? " shard, " : " shards, ");
    else if (v.splits)
      line += std::to_string(v.splits) + " splits, ";
    line += std::to_string(v.tensors) + (v.tensors == 1 ? " tensor)" : " tensors)");
  } else if (v.problem) {
    line += problem_line(*v.problem);
  } else {
    line += "invalid";
  }
  return line;
}

int run_validate(const CliOptions& options) {
  bool any_invalid = false, any_io = false;
  for (const std::string& path : options.files) {
    const Verdict v = is_index_path(path)      ? verdict_of(scan_model_index(path, options.scan, nullptr))
                      : is_manifest_path(path) ? verdict_of(scan_model_manifest(path, options.scan, nullptr))
                                               : verdict_of(scan_model_file(path, options.scan, nullptr));
    if (!v.valid) {
      if (v.problem && v.problem->io)
        any_io = true;
      else
        any_invalid = true;
    }
    const std::string line = options.json ? validate_json_line(v) : validate_text_line(v);
    // Line by line, flushed: a long batch shows results as they come.
    fprintf(stdout, "%s\n", line.c_str());
    fflush(stdout);
    print_warnings(path, v.warnings);
  }
  return any_io ? 2 : any_invalid ? 1 : 0;
}

}  // namespace wscli

// weightstream CLI — Problem rendering (see problem_text.h).
#include "problem_text.h"

#include <stdio.h>

#include "text_format.h"

namespace wscli {

std::string problem_line(const Problem& p) {
  if (p.io) return "error: " + (p.shard.empty() ? "" : display_text(p.shard) + ": ") + display_text(p.message);
  std::string s = "invalid: " + p.code + " at byte " + std::to_string(p.offset);
  if (!p.shard.empty()) s += " of " + display_text(p.shard);
  if (p.tensor) s += " in tensor " + quoted(*p.tensor);
  s += ": " + display_text(p.message);
  return s;
}

void write_problem_json(JsonWriter* w, const Problem& p, bool with_shard) {
  w->begin_object();
  w->key("code").string(p.code);
  w->key("offset").number(p.offset);
  w->key("tensor");
  if (p.tensor)
    w->string(*p.tensor);
  else
    w->null();
  w->key("message").string(p.message);
  if (with_shard) {
    w->key("shard");
    if (p.shard.empty())
      w->null();
    else
      w->string(p.shard);
  }
  w->end_object();
}

std::string warning_line(const WarningRow& w) {
  return "warning: " + w.code + " at byte " + std::to_string(w.offset) + " of " + display_text(w.file) +
         " in tensor " + quoted(w.tensor) + ": " + display_text(w.message);
}

void print_warnings(const std::string& input, const std::vector<WarningRow>& warnings) {
  for (const WarningRow& w : warnings)
    fprintf(stderr, "weightstream: %s: %s\n", display_text(input).c_str(), warning_line(w).c_str());
  if (!warnings.empty()) fflush(stderr);
}

void write_warnings_json(JsonWriter* w, const std::vector<WarningRow>& warnings) {
  if (warnings.empty()) return;
  w->key("warnings").begin_array();
  for (const WarningRow& x : warnings) {
    w->begin_object();
    w->key("code").string(x.code);
    w->key("file").string(x.file);
    w->key("offset").number(x.offset);
    w->key("tensor").string(x.tensor);
    w->key("weight").string(x.weight);
    w->key("count").number(x.count);
    w->key("message").string(x.message);
    w->end_object();
  }
  w->end_array();
}

}  // namespace wscli

// weightstream CLI — Problem rendering (see problem_text.h).
#include "problem_text.h"

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

}  // namespace wscli

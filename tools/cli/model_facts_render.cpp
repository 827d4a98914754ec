// weightstream CLI — model facts and canonical names for inspect (see model_facts_render.h).
#include "model_facts_render.h"

#include <stdio.h>

#include <vector>

#include "error_text.h"
#include "problem_text.h"
#include "file_report.h"
#include "text_format.h"
#include "weightstream/canonical_names.h"

namespace wscli {
namespace {

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Shortest text that reads back the value; a value that is exactly an f32 (GGUF stores facts as
// FLOAT32) at float precision, so 1e-05 prints as 1e-05 and not 9.999999747378752e-06.
// Whole values (rope theta 10000, 500000) as integers rather than the shortest form "1e+04".
bool is_whole(double v) { return v >= 0 && v < 1e15 && double(uint64_t(v)) == v; }

std::string real_text(double v) {
  if (is_whole(v)) return std::to_string(uint64_t(v));
  JsonWriter w;
  w.real(v, double(float(v)) == v);
  return w.str();
}

void write_real(JsonWriter* w, double v) {
  if (is_whole(v))
    w->number(uint64_t(v));
  else
    w->real(v, double(float(v)) == v);
}

}  // namespace

std::optional<ModelFactsReport> config_facts_beside(const std::string& model_path, const HttpOptions& http) {
  if (model_path == "-") return std::nullopt;
  // Beside a URL too (its query, if any, is not the directory's).
  const std::string config =
      directory_of(is_url(model_path) ? model_path.substr(0, model_path.find_first_of("?#")) : model_path) + "config.json";
  std::string why;
  std::unique_ptr<ByteSource> f = open_source(config, http, &why);
  if (!f || f->open(0, 1 << 16) != ByteSource::Opened::Ok) return std::nullopt;
  ModelFactsReport m;
  m.source = config;
  ws::ConfigFactsParser parser;
  ws::Status s = ws::Status::Ok;
  uint64_t at = 0;
  const uint8_t* data = nullptr;
  size_t n = 0;
  bool read_failed = false;
  while (s == ws::Status::Ok && !(read_failed = !f->read(at, 1 << 16, &data, &n)) && n > 0) {
    s = parser.feed(data, n);
    at += n;
  }
  if (read_failed) {
    m.problem = io_problem("cannot read", f->error(), at);
    return m;
  }
  if (s == ws::Status::Ok) s = parser.finish();
  if (s != ws::Status::Ok) {
    ErrorFacts facts;
    facts.code = s;
    facts.offset = parser.error().offset;
    m.problem = problem_from(parser.error(), facts);
    return m;
  }
  m.facts = parser.facts();
  return m;
}

std::string model_facts_text(const ModelFactsReport& m) {
  auto line = [](const std::string& name, const std::string& value) {
    return "  " + pad_right(name, 19) + value + "\n";
  };
  std::string out = pad_right("model facts", 13) +
                    (m.source == "gguf" ? std::string("from the GGUF metadata")
                                        : "from " + display_text(m.source)) +
                    "\n";
  if (m.problem) return out + "  " + problem_line(*m.problem) + "\n";
  const ws::ModelFacts& f = m.facts;
  if (f.has_architecture())
    out += line("architecture", name_text(std::string(f.architecture(), f.architecture_size())));
  for (uint32_t i = 0; i < ws::kFactCount; ++i) {
    const ws::Fact k = ws::Fact(i);
    const ws::FactValue v = f.get(k);
    if (!v.present) continue;
    std::string text = ws::fact_is_real(k) ? real_text(v.f) : std::to_string(v.u);
    if (v.derived) text += k == ws::Fact::KvHeads ? " (= heads)" : " (tokenizer tokens)";
    out += line(ws::fact_name(k), text);
  }
  return out;
}

void write_model_facts_json(JsonWriter* w, const ModelFactsReport& m) {
  w->begin_object();
  w->key("source").string(m.source);
  if (m.problem) {
    w->key("error");
    write_problem_json(w, *m.problem, false);
    w->end_object();
    return;
  }
  const ws::ModelFacts& f = m.facts;
  w->key("architecture");
  if (f.has_architecture())
    w->string(std::string(f.architecture(), f.architecture_size()));
  else
    w->null();
  std::vector<const char*> derived;
  for (uint32_t i = 0; i < ws::kFactCount; ++i) {
    const ws::Fact k = ws::Fact(i);
    const ws::FactValue v = f.get(k);
    w->key(ws::fact_name(k));
    if (!v.present)
      w->null();
    else if (ws::fact_is_real(k))
      write_real(w, v.f);
    else
      w->number(v.u);
    if (v.present && v.derived) derived.push_back(ws::fact_name(k));
  }
  w->key("derived").begin_array();
  for (const char* d : derived) w->string(d);
  w->end_array();
  w->end_object();
}

std::string canonical_text(const std::string& name, const std::optional<ModelFactsReport>& m) {
  ws::NameOptions o;
  if (m && m->facts.has_architecture())
    o = ws::name_options_for_architecture(m->facts.architecture(), m->facts.architecture_size());
  std::string out(name.size() + 64, '\0');
  size_t n = ws::canonical_name(name.data(), name.size(), &out[0], out.size(), o);
  if (n == ws::kNameTooSmall) return name;  // cannot happen: canonical names are at most 64 longer
  out.resize(n);
  return out;
}

}  // namespace wscli

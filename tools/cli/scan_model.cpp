// weightstream CLI — reports from the model loader (see scan_model.h).
#include "scan_model.h"

#include <dirent.h>

#include "logical_render.h"
#include "model_host.h"
#include "weightstream/load_plan.h"

namespace wscli {

namespace {

uint64_t load_u64le(const std::string& b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return v;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string x = suffix;
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// The names in the directory of `path` (a UQFF file's: the loader picks and orders the model's).
std::vector<std::string> listing_beside(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.empty() ? "/" : dir.c_str())) {
    while (const dirent* e = readdir(d)) names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

}  // namespace

LogicalSummary summarize_model(const ws::ModelLoader& L, uint64_t chunk, const std::string& config) {
  LogicalSummary s;
  s.convention = ws::convention_name(L.convention());
  s.config = config;
  s.chunk = chunk;
  const ws::LogicalModel& m = *L.model();
  for (uint32_t i = 0; i < L.weight_count(); ++i) {
    const ws::LogicalWeight& w = L.weight(i);
    LogicalRow r;
    r.name.assign(w.name.data, w.name.size);
    r.convention = ws::convention_name(w.convention);
    r.mode = ws::quant_mode_name(w.params.mode);
    r.stored = ws::dtype_name(L.tensor(w.ref(ws::PieceRole::Packed)).dtype());
    if (w.decodable) r.format = ws::quant_format_name(w.format);
    r.bits = w.params.bits;
    r.group = w.params.group;
    r.shape.assign(w.shape, w.shape + w.rank);
    for (uint32_t p = 0; p < ws::kPieceRoles; ++p) {
      if (!w.piece[p].present()) continue;
      r.bytes += L.piece_end(w.piece[p]) - L.piece_begin(w.piece[p]);
      if (p) r.companions.push_back(ws::piece_role_name(ws::PieceRole(p)));
    }
    const ws::LoadPlan plan = ws::plan_weight(m, i, chunk);
    r.sequential_scratch = plan.sequential_scratch;
    // A plain weight streams through in either mode: no scratch beyond the read itself.
    r.seekable_scratch = plan.piece_count > 1 ? plan.seekable_scratch : 0;
    r.packed_before_companion = plan.packed_before_companion;
    s.weights.push_back(r);
  }
  const ws::ModelPlan plan = L.plan(chunk);
  s.sequential_peak = plan.sequential_peak;
  s.seekable_peak = plan.seekable_peak;
  return s;
}

FileReport scan_model_file(const std::string& path, const ScanOptions& options, std::optional<LogicalSummary>* logical) {
  FileReport rep;
  rep.path = path;
  HostSettings s;
  s.entry_path = path;
  s.entry = ws::ModelEntry::File;
  // A UQFF file is one part of its directory's model: the report is the file's, the verdict the
  // model's (its version, tags and layers live in the other files too).
  const bool uqff = path != "-" && ends_with(path, ".uqff");
  if (uqff) {
    s.entry = ws::ModelEntry::UqffFiles;
    s.listing = listing_beside(path);
  }
  s.mode = ws::ModelLoadMode::Validate;
  s.scan = options;
  ModelHost h(s);
  std::optional<LogicalSummary> summary;
  h.run([&](ws::ModelLoader& L, const ws::ModelEvent& e) {
    // A model of plain tensors has nothing to add to the tensor table.
    if (e.type == ws::ModelEventType::ModelReady && L.format() == ws::Format::Safetensors &&
        L.convention() != ws::Convention::Plain)
      summary = summarize_model(L, kPlanRead, L.config_used() ? h.dir() + "config.json" : "");
    return true;
  });
  const ws::ModelLoader& L = h.loader();
  // The file the report is about: the one named (a UQFF directory's files are in the loader's order).
  uint32_t fi = 0;
  if (uqff) {
    const std::string base = path.substr(path.find_last_of('/') + 1);
    for (uint32_t f = 0; f < L.file_count(); ++f)
      if (std::string(L.file_name(f).data, L.file_name(f).size) == base) fi = f;
  }
  HostFile& f = h.file(fi);
  rep.size_known = f.size_known;
  rep.file_size = f.size;
  rep.arena_size = h.arena_size();
  if (h.io()) {
    rep.problem = h.io();
    return rep;
  }
  const ws::Reader* r = L.file_reader(fi);
  if (r) {
    rep.format = r->format();
    if (rep.format == ws::Format::Safetensors && f.prefix.size() == 8) rep.header_size = load_u64le(f.prefix);
  }
  const bool header = L.file_table(fi) != ws::kNoTensor;
  // Given the input size, the reader checks it against the validated header and reports a short
  // or over-long file instead of HeaderReady; the table is complete then, and showing it tells
  // the user which tensors the file lacks.
  const ws::Status code = L.error().code;
  const bool length_error = h.failed() && L.error_file() == fi &&
                            (code == ws::Status::TruncatedData || code == ws::Status::TrailingBytes);
  if (r && (header || length_error)) {
    if (header && rep.format == ws::Format::Gguf && f.facts.facts().has_architecture()) {
      rep.model_facts = ModelFactsReport();
      rep.model_facts->source = "gguf";
      rep.model_facts->facts = f.facts.facts();
    }
    snapshot_header(*r, &f.kvs, &rep);
  }
  rep.valid = h.done();
  if (h.failed()) {
    Problem p = h.problem();
    if (L.error_file() == fi) p.shard.clear();  // the file named on the command line
    else if (L.file_kind(L.error_file()) == ws::ModelFileKind::Config) p.shard = h.dir() + "config.json";
    const ws::Error& err = L.error();
    if (!p.tensor && err.tensor != ws::kNoTensor && err.tensor < rep.tensors.size()) p.tensor = rep.tensors[err.tensor].name;
    rep.problem = p;
  }
  if (logical && rep.valid) *logical = summary;
  if (logical && h.failed() && L.convention_error()) {
    // The convention's error is the model's verdict; inspect also lists it where the logical
    // weights would be.
    LogicalSummary s;
    s.convention = ws::convention_name(L.convention());
    s.config = L.config_used() ? h.dir() + "config.json" : "";
    s.chunk = kPlanRead;
    s.problem = rep.problem;
    *logical = s;
  }
  return rep;
}

}  // namespace wscli

// weightstream CLI — reports from the model loader (see scan_model.h).
#include "scan_model.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include <algorithm>
#include <map>

#include "logical_render.h"
#include "manifest_blobs.h"
#include "model_host.h"
#include "scan_sharded.h"
#include "text_format.h"
#include "weightstream/load_plan.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/shard_index.h"

namespace wscli {

namespace {

uint64_t load_u64le(const std::string& b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return v;
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

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

// Every byte is read (the verdict covers the data), except with headers_only (inspect of a URL:
// a remote model's data is not fetched to print its tables).
ws::ModelLoadMode scan_mode(const ScanOptions& options) {
  return options.headers_only ? ws::ModelLoadMode::Headers : ws::ModelLoadMode::Validate;
}

// The logical section inspect shows for a model whose convention failed: the error where the
// weights would be.
std::optional<LogicalSummary> convention_problem(const ModelHost& h, const Problem& p) {
  LogicalSummary s;
  s.convention = ws::convention_name(h.loader().convention());
  s.config = h.loader().config_used() ? h.dir() + "config.json" : "";
  s.chunk = kPlanRead;
  s.problem = p;
  return s;
}

// The summary of a valid model that follows a convention (plain models have nothing to add).
std::optional<LogicalSummary> model_summary(const ModelHost& h) {
  const ws::ModelLoader& L = h.loader();
  if (L.format() != ws::Format::Safetensors || ws::convention_info(L.convention()).plain) return std::nullopt;
  return summarize_model(L, kPlanRead, L.config_used() ? h.dir() + "config.json" : "");
}

// A split GGUF model as one report: the first split's header, key-values and facts, then the
// other splits' tensors, each row with its split, and the splits in order.
void split_report(ModelHost& h, FileReport* rep) {
  const ws::ModelLoader& L = h.loader();
  HostFile& first = h.file(L.table_file(0));
  if (first.facts.facts().has_architecture()) {
    rep->model_facts = ModelFactsReport();
    rep->model_facts->source = "gguf";
    rep->model_facts->facts = first.facts.facts();
  }
  snapshot_header(*L.file_reader(L.table_file(0)), &first.kvs, rep);
  rep->tensors.clear();
  rep->data_size = 0;
  for (uint32_t t = 0; t < L.table_count(); ++t) {
    const uint32_t f = L.table_file(t);
    const ws::Reader& r = *L.file_reader(f);
    FileReport one;
    GgufKvCollector none;
    snapshot_header(r, &none, &one);
    for (TensorRow& row : one.tensors) {
      row.split = int32_t(t);
      rep->tensors.push_back(std::move(row));
    }
    SplitRow s;
    s.file = str(L.file_name(f));
    s.tensors = r.tensor_count();
    s.data_start = r.data_start();
    s.data_size = r.data_size();
    if (h.file(f).size_known) s.size = h.file(f).size;
    s.foreign_kvs = L.split_foreign_kvs(f);
    s.foreign_offset = L.split_foreign_offset(f);
    rep->data_size += r.data_size();
    rep->splits.push_back(s);
  }
}

}  // namespace

HostSettings model_settings(const std::string& path, const ScanOptions& options) {
  HostSettings s;
  s.entry_path = path;
  s.scan = options;
  s.entry = ws::ModelEntry::File;
  if (path == "-") return s;
  if (is_index_path(path)) {
    s.entry = ws::ModelEntry::ShardIndex;
  } else if (is_manifest_path(path)) {
    s.entry = ws::ModelEntry::OllamaManifest;
    s.blobs_dir = blobs_dir_for(path, options, &s.blobs_problem);
  } else if (ws::model_entry_from_name(path.data(), path.size()) == ws::ModelEntry::UqffFiles) {
    s.entry = ws::ModelEntry::UqffFiles;
    s.listing = listing_beside(path);
  }
  return s;
}

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
    r.plain = ws::convention_info(w.convention).plain;
    r.mode = ws::quant_mode_name(w.params.mode);
    r.stored = ws::dtype_name(L.tensor(w.ref(ws::PieceRole::Packed)).dtype());
    if (w.decodable) r.format = ws::quant_format_name(w.format);
    r.bits = w.params.bits;
    r.group = w.params.group;
    r.shape.assign(w.shape, w.shape + w.rank);
    ws::QuantParameter qp[ws::kMaxQuantParameters];
    const uint32_t nq = ws::quant_parameters(w, qp, ws::kMaxQuantParameters);
    for (uint32_t k = 0; k < nq && k < ws::kMaxQuantParameters; ++k)
      r.parameters.push_back({qp[k].key, qp[k].text ? qp[k].text : std::to_string(qp[k].number), !qp[k].text});
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
  const bool uqff = path != "-" && ws::model_entry_from_name(path.data(), path.size()) == ws::ModelEntry::UqffFiles;
  if (uqff) {
    s.entry = ws::ModelEntry::UqffFiles;
    s.listing = listing_beside(path);
  }
  s.mode = scan_mode(options);
  s.scan = options;
  ModelHost h(s);
  std::optional<LogicalSummary> summary;
  h.run([&](ws::ModelLoader& L, const ws::ModelEvent& e) {
    // A model of plain tensors has nothing to add to the tensor table.
    if (e.type == ws::ModelEventType::ModelReady && L.format() == ws::Format::Safetensors &&
        !ws::convention_info(L.convention()).plain)
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
  const bool header = L.file_table(fi) != ws::kNoTensor || L.file_header_ready(fi);
  // Given the input size, the reader checks it against the validated header and reports a short
  // or over-long file instead of HeaderReady; the table is complete then, and showing it tells
  // the user which tensors the file lacks.
  const ws::Status code = L.error().code;
  const bool length_error = h.failed() && L.error_file() == fi &&
                            (code == ws::Status::TruncatedData || code == ws::Status::TrailingBytes);
  if (L.split_count() > 1 && L.table_count() == L.split_count()) {
    // A split GGUF model: its metadata and facts are the first split's, its tensors every split's.
    split_report(h, &rep);
  } else if (r && (header || length_error)) {
    if (header && rep.format == ws::Format::Gguf && f.facts.facts().has_architecture()) {
      rep.model_facts = ModelFactsReport();
      rep.model_facts->source = "gguf";
      rep.model_facts->facts = f.facts.facts();
    }
    snapshot_header(*r, &f.kvs, &rep);
  }
  rep.valid = h.done();
  rep.warnings = h.warnings();
  if (h.failed()) {
    Problem p = h.problem();
    if (L.error_file() == fi) p.shard.clear();  // the file named on the command line
    else if (L.file_kind(L.error_file()) == ws::ModelFileKind::Config) p.shard = h.dir() + "config.json";
    const ws::Error& err = L.error();
    if (!p.tensor && err.tensor != ws::kNoTensor && err.tensor < rep.tensors.size()) p.tensor = rep.tensors[err.tensor].name;
    rep.problem = p;
  }
  if (logical && rep.valid) *logical = summary;
  // The convention's error is the model's verdict; inspect also lists it where the logical
  // weights would be.
  if (logical && h.failed() && L.convention_error()) *logical = convention_problem(h, *rep.problem);
  return rep;
}

}  // namespace wscli

namespace wscli {

ShardedReport scan_model_index(const std::string& path, const ScanOptions& options, std::optional<LogicalSummary>* logical) {
  ShardedReport rep;
  rep.path = path;
  HostSettings s;
  s.entry_path = path;
  s.entry = ws::ModelEntry::ShardIndex;
  s.mode = scan_mode(options);
  s.scan = options;
  ModelHost h(s);
  std::optional<LogicalSummary> summary;
  h.run([&](ws::ModelLoader&, const ws::ModelEvent& e) {
    if (e.type == ws::ModelEventType::ModelReady) summary = model_summary(h);
    return true;
  });
  if (h.io() && !h.loader().index()) {  // the index itself could not be read
    rep.problem = h.io();
    return rep;
  }
  const ws::ModelLoader& L = h.loader();
  const ws::ShardIndex* index = L.index();
  if (index && L.entry_ready()) {
    rep.index_ok = true;
    rep.tensor_count = index->tensor_count();
    if (index->has_total_size()) rep.total_size = index->total_size();
    rep.shards.resize(index->shard_count());
    for (uint32_t i = 0; i < index->shard_count(); ++i) rep.shards[i].file = str(index->shard_name(i));
    for (uint32_t e = 0; e < index->tensor_count(); ++e) {
      const uint32_t shard = index->tensor_shard(e);
      if (shard < rep.shards.size()) ++rep.shards[shard].index_tensors;
    }
    // The index numbers shards by first mention in a weight_map sorted by tensor name; people (and
    // the file names) count model-00001, model-00002, ...
    std::sort(rep.shards.begin(), rep.shards.end(), [](const ShardRow& a, const ShardRow& b) { return a.file < b.file; });
    // A shard whose header was read and checked against the index, and that is not where the
    // load failed, has its bytes counted (the loader validated its data, or will have: with the
    // sizes known, a short or long file is found at its header).
    std::map<std::string, uint32_t> file_of;
    for (uint32_t f = 0; f < L.file_count(); ++f) file_of[str(L.file_name(f))] = f;
    for (ShardRow& row : rep.shards) {
      const auto it = file_of.find(row.file);
      if (it == file_of.end() || L.file_table(it->second) == ws::kNoTensor) continue;
      if (h.failed() && L.error_file() == it->second) continue;
      row.scanned = true;
      const ws::TensorTable& t = L.table(L.file_table(it->second));
      for (uint32_t i = 0; i < t.count(); ++i) row.tensor_bytes += t.get(i).end - t.get(i).begin;
    }
    rep.checked_bytes = index->checked_bytes();
  }
  rep.valid = h.done();
  rep.warnings = h.warnings();
  if (h.io()) {
    rep.problem = h.io();
    const uint32_t f = uint32_t(L.file_count() ? L.file_count() - 1 : 0);
    (void)f;
    return rep;
  }
  if (h.failed()) {
    Problem p = h.problem();
    const ws::Error& err = L.error();
    if (err.code == ws::Status::UnsafeShardPath) {
      // The index as a whole is refused (offset 0, no shard: it was never opened).
      const std::string name(err.tensor_name ? err.tensor_name : "", err.tensor_name_size);
      p.tensor.reset();
      p.shard.clear();
      p.message = "the index names a shard outside its own directory (" + quoted(name) +
                  "). Shard names must be relative paths without \"..\": this index may be crafted "
                  "to read other files.";
    } else if (err.code == ws::Status::ShardNotGiven) {
      // On disk a shard the index names that is not there is an I/O error (exit 2), as it always
      // was in the CLI: the download is incomplete.
      p = io_problem("cannot open", strerror(ENOENT), 0);
      p.shard = str(L.file_name(L.error_file()));
      p.message += " The index names this shard: is the download complete?";
    } else if (L.error_file() == L.entry_file()) {
      p.shard.clear();  // the offset is in the index
    }
    rep.problem = p;
    if (logical && L.convention_error()) *logical = convention_problem(h, p);
  }
  if (logical && rep.valid) *logical = summary;
  return rep;
}

}  // namespace wscli

namespace wscli {

// The CLI's words for a manifest's blob problems (the layer's name is what users find in it).
void word_manifest_problem(const ModelHost& h, const std::string& blobs_dir, Problem* out) {
  const ws::ModelLoader& L = h.loader();
  const ws::OllamaManifest* m = L.manifest();
  const ws::Error& err = L.error();
  const uint32_t f = L.error_file();
  Problem& p = *out;
  const std::string layer = m && L.file_layer(f) != ws::kNoTensor ? str(m->layer(L.file_layer(f)).name) : "";
    // A blob's problems are its layer's (its name is what users find in the manifest).
  switch (err.code) {
    case ws::Status::ManifestBlobMissing:
      p.io = true;
      p.message = "the blob of layer " + quoted(layer) + " is not in " + blobs_dir +
                  ": pull the model again (ollama pull), or give the directory that holds it with --blobs DIR.";
      break;
    case ws::Status::ManifestBlobSize:
      p.message = "the blob of layer " + quoted(layer) + " is " + std::to_string(err.found) + " bytes, the manifest says " +
                  std::to_string(err.expected) +
                  ": the blob is incomplete or belongs to another model; pull the model again.";
      break;
    case ws::Status::ManifestTensorInOtherLayer: {
      const ws::ManifestLayer other = m->layer(uint32_t(err.found));
      p.message = "the blob of layer " + quoted(layer) + " holds a tensor that layer " + quoted(str(other.name)) +
                  " (" + str(other.blob_file) +
                  ") covers: the manifest and its blobs come from different models; pull the model again.";
      break;
    }
    case ws::Status::ManifestLayerNotInBlob:
      p.message = "no tensor of the blob is named " + quoted(layer) + " or starts with " + quoted(layer + ".") +
                  ": the layer's digest points at another blob; pull the model again.";
      break;
    case ws::Status::ManifestBlobNotSafetensors:
      p.message = "the blob of tensor layer " + quoted(layer) + " is a GGUF file: weightstream reads Ollama's "
                  "safetensors tensor blobs from a manifest (give a GGUF blob to weightstream directly).";
      break;
    default:
      break;
  }
}

ShardedReport scan_model_manifest(const std::string& path, const ScanOptions& options,
                                  std::optional<LogicalSummary>* logical) {
  ShardedReport rep;
  rep.path = path;
  rep.manifest = true;
  HostSettings s;
  s.entry_path = path;
  s.entry = ws::ModelEntry::OllamaManifest;
  s.mode = scan_mode(options);
  s.scan = options;
  s.blobs_dir = blobs_dir_for(path, options, &s.blobs_problem);
  ModelHost h(s);
  std::optional<LogicalSummary> summary;
  h.run([&](ws::ModelLoader&, const ws::ModelEvent& e) {
    if (e.type == ws::ModelEventType::ModelReady) summary = model_summary(h);
    return true;
  });
  const ws::ModelLoader& L = h.loader();
  const ws::OllamaManifest* m = L.manifest();
  if (m && L.entry_ready()) {
    rep.index_ok = true;
    rep.blobs_dir = s.blobs_dir;
    // One row per tensor blob, as the loader names them (blobs/sha256-<hex>, in manifest order).
    for (uint32_t f = 0; f < L.file_count(); ++f) {
      if (L.file_kind(f) != ws::ModelFileKind::Blob) continue;
      ShardRow row;
      row.file = str(L.file_name(f)).substr(6);
      row.layer = str(m->layer(L.file_layer(f)).name);
      if (L.file_table(f) != ws::kNoTensor) {
        const ws::TensorTable& t = L.table(L.file_table(f));
        row.index_tensors = t.count();
        if (!(h.failed() && L.error_file() == f)) {
          row.scanned = true;
          for (uint32_t i = 0; i < t.count(); ++i) row.tensor_bytes += t.get(i).end - t.get(i).begin;
        }
      }
      rep.tensor_count += row.index_tensors;
      rep.shards.push_back(row);
    }
  }
  rep.valid = h.done();
  rep.warnings = h.warnings();
  if (h.io()) {
    rep.problem = h.io();
    return rep;
  }
  if (h.failed()) {
    Problem p = h.problem();
    const uint32_t f = L.error_file();
    word_manifest_problem(h, s.blobs_dir, &p);
    if (f == L.entry_file()) p.shard.clear();  // the offset is in the manifest
    rep.problem = p;
    if (logical && L.convention_error()) *logical = convention_problem(h, p);
  }
  if (logical && rep.valid) *logical = summary;
  return rep;
}

}  // namespace wscli

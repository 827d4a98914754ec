// weightstream CLI — Ollama manifests for inspect and validate (see scan_manifest.h).
#include "scan_manifest.h"

#include "logical_load.h"
#include "logical_render.h"

namespace wscli {

ShardedReport scan_manifest(const std::string& path, const ScanOptions& options, bool logical) {
  ShardedReport r;
  r.path = path;
  r.manifest = true;
  LogicalView view;
  bool not_safetensors = false;
  std::optional<Problem> p = load_logical(path, options, &view, &not_safetensors);
  r.index_ok = view.manifest.parsed;
  r.blobs_dir = view.manifest.blobs_dir;
  if (p && !view.model) {  // the manifest, a blob's presence, size or header: the model is not whole
    for (size_t b = 0; b < view.manifest.blobs.size(); ++b) {
      ShardRow row;
      row.file = view.manifest.blobs[b].file;
      row.layer = view.manifest.blobs[b].name;
      if (b < view.tables.size()) row.index_tensors = view.tables[b]->reader->tensors().count();
      r.shards.push_back(row);
      r.tensor_count += row.index_tensors;
    }
    r.problem = p;
    return r;
  }
  for (size_t b = 0; b < view.tables.size(); ++b) {
    const LoadedTable& t = *view.tables[b];
    ShardRow row;
    row.file = t.shard;
    row.layer = view.manifest.blobs[b].name;
    row.index_tensors = t.reader->tensors().count();
    r.tensor_count += row.index_tensors;
    r.shards.push_back(row);
  }
  // Every byte of every blob, as validate checks one file (the headers alone were read so far).
  for (size_t b = 0; b < view.tables.size(); ++b) {
    const FileReport f = scan_file(view.tables[b]->path, options);
    if (!f.valid) {
      r.problem = f.problem;
      if (r.problem) r.problem->shard = view.tables[b]->shard;
      return r;
    }
    for (const TensorRow& t : f.tensors) r.shards[b].tensor_bytes += t.end - t.begin;
    r.shards[b].scanned = true;
  }
  r.valid = true;
  if (logical) {
    if (p) {
      LogicalSummary s;
      s.convention = ws::convention_name(view.convention);
      s.chunk = kPlanRead;
      s.problem = p;
      r.logical = s;
    } else {
      r.logical = summarize_logical(view, kPlanRead);
    }
  }
  return r;
}

}  // namespace wscli

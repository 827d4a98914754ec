// weightstream CLI — inspect (see inspect.h).
#include "inspect.h"

#include <stdio.h>

#include "gguf_render.h"
#include "json_writer.h"
#include "logical_render.h"
#include "manifest_blobs.h"
#include "metadata_render.h"
#include "model_facts_render.h"
#include "problem_text.h"
#include "scan_model.h"
#include "scan_sharded.h"
#include "text_format.h"

namespace wscli {
namespace {

std::string verdict_text(bool valid, const std::optional<Problem>& problem) {
  if (valid) return "valid";
  return problem ? problem_line(*problem) : "invalid";
}

std::string field(const char* name, const std::string& value) {
  return pad_right(name, 13) + value + "\n";
}

}  // namespace

std::string inspect_json(const FileReport& r) {
  JsonWriter w;
  w.begin_object();
  w.key("file").string(r.path);
  w.key("format");
  if (r.format != ws::Format::Unknown)
    w.string(ws::format_name(r.format));
  else
    w.null();
  w.key("valid").boolean(r.valid);
  // The declared header length is worth showing even when it was rejected (HeaderTooLarge).
  w.key("header_size");
  if (r.header_size)
    w.number(*r.header_size);
  else
    w.null();
  w.key("data_start");
  if (r.header_ready)
    w.number(r.data_start);
  else
    w.null();
  w.key("tensors").begin_array();
  for (const TensorRow& t : r.tensors) {
    w.begin_object();
    w.key("name").string(t.name);
    w.key("dtype").string(t.dtype);
    w.key("shape").begin_array();
    for (uint64_t d : t.shape) w.number(d);
    w.end_array();
    w.key("data_offsets").begin_array().number(t.begin).number(t.end).end_array();
    w.key("bytes").number(t.end - t.begin);
    if (r.canonical) w.key("canonical").string(canonical_text(t.name, r.model_facts));
    if (t.split >= 0) w.key("split").number(uint64_t(t.split));  // split GGUF models only
    w.end_object();
  }
  w.end_array();
  // Split GGUF models only, so a single file keeps exactly its documented keys.
  if (!r.splits.empty()) {
    w.key("splits").begin_array();
    for (const SplitRow& sp : r.splits) {
      w.begin_object();
      w.key("file").string(sp.file);
      w.key("tensors").number(sp.tensors);
      w.key("data_start").number(sp.data_start);
      w.key("data_size").number(sp.data_size);
      w.key("size");
      if (sp.size)
        w.number(*sp.size);
      else
        w.null();
      w.key("foreign_kvs").number(sp.foreign_kvs);
      w.end_object();
    }
    w.end_array();
  }
  w.key("metadata");
  if (r.has_metadata) {
    w.begin_object();
    for (const MetadataRow& m : r.metadata) {
      w.key(m.key);
      write_metadata_value_json(&w, m.value);
    }
    w.end_object();
  } else {
    w.null();
  }
  // Only when there are facts, so a file without them keeps exactly its documented keys.
  if (r.model_facts) {
    w.key("model_facts");
    write_model_facts_json(&w, *r.model_facts);
  }
  // MLX / Ollama files only, so other files keep exactly their documented keys.
  if (r.logical) {
    w.key("logical");
    write_logical_json(&w, *r.logical);
  }
  // GGUF only, so the safetensors object keeps exactly its documented keys.
  if (r.gguf) {
    w.key("gguf").begin_object();
    w.key("version").number(r.gguf->version);
    w.key("alignment").number(r.gguf->alignment);
    w.key("dialect").string(r.gguf->bitnet ? "bitnet" : "upstream");
    w.key("architecture");
    if (r.gguf->architecture)
      w.string(*r.gguf->architecture);
    else
      w.null();
    w.key("kv_count").number(r.gguf->kv_count);
    w.key("kv");
    write_gguf_kv_json(&w, r.metadata);
    w.end_object();
  }
  w.key("error");
  if (r.problem)
    write_problem_json(&w, *r.problem, !r.problem->shard.empty());  // another file of the model
  else
    w.null();
  write_warnings_json(&w, r.warnings);
  w.end_object();
  return w.str() + "\n";
}

namespace {

// The tensor table: one row per tensor, the name last (names vary most in length and would push
// every other column around).
std::string tensor_table_text(const FileReport& r) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(r.tensors.size());
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorRow& t = r.tensors[i];
    // A split's tensors are placed in its own data section.
    const uint64_t data_start = t.split >= 0 ? r.splits[size_t(t.split)].data_start : r.data_start;
    rows.push_back({std::to_string(i), display_text(t.dtype), shape_text(t.shape),
                    std::to_string(t.end - t.begin),
                    "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")",
                    std::to_string(data_start + t.begin), name_text(t.name)});
    if (r.canonical) rows.back().push_back(name_text(canonical_text(t.name, r.model_facts)));
    if (!r.splits.empty()) rows.back().insert(rows.back().begin() + 1, std::to_string(t.split + 1));
  }
  // GGUF lists dimensions the ggml way round; say so rather than reorder what the file holds.
  const bool gguf = r.format == ws::Format::Gguf;
  std::vector<std::string> heads = {"#", gguf ? "type" : "dtype", gguf ? "ne (ggml order)" : "shape",
                                    "bytes", "data offsets", "file offset", "name"};
  std::vector<bool> right = {true, false, false, true, false, true, false};
  if (r.canonical) {
    heads.push_back("canonical");
    right.push_back(false);
  }
  if (!r.splits.empty()) {  // which split holds it (1-based, as the file names count)
    heads.insert(heads.begin() + 1, "split");
    right.insert(right.begin() + 1, true);
  }
  return table_text(heads, rows, right);
}

// A split GGUF model's splits: file, tensors, data, and key-values a later split holds besides
// split.* (llama.cpp reads only the first split's: they are not the model's).
std::string split_table_text(const FileReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < r.splits.size(); ++i) {
    const SplitRow& sp = r.splits[i];
    rows.push_back({std::to_string(i + 1), std::to_string(sp.tensors), std::to_string(sp.data_size),
                    std::to_string(sp.data_start),
                    sp.foreign_kvs ? std::to_string(sp.foreign_kvs) + " (not read: only the first split's are the model's)" : "",
                    display_text(sp.file)});
  }
  return table_text({"split", "tensors", "bytes", "data offset", "other key-values", "file"}, rows,
                    {true, true, true, true, false, false});
}

// GGUF: the header facts, the key-values (typed, so a table of their own), then the tensors.
std::string gguf_text(const FileReport& r) {
  std::string out;
  out += field("file", display_text(r.path));
  out += field("format", "gguf");
  if (r.gguf) {
    const GgufFacts& g = *r.gguf;
    out += field("version", std::to_string(g.version));
    out += field("alignment", std::to_string(g.alignment));
    out += field("dialect", gguf_dialect_text(g.bitnet));
    out += field("architecture", g.architecture ? name_text(*g.architecture) : "not given");
  }
  if (r.size_known && r.splits.empty()) out += field("size", bytes_text(r.file_size));
  if (!r.splits.empty()) {
    // A split GGUF model (llama.cpp's gguf-split): one model in several files.
    uint64_t total = 0;
    bool sized = true;
    for (const SplitRow& sp : r.splits) {
      if (sp.size) total += *sp.size;
      sized = sized && sp.size;
    }
    out += field("splits", std::to_string(r.splits.size()) + (sized ? ", " + bytes_text(total) : std::string()));
  }
  if (r.header_ready) {
    out += field("data offset", std::to_string(r.data_start) + (r.splits.empty() ? "" : " (first split)"));
    out += field("tensors", std::to_string(r.tensors.size()) + ", " +
                                bytes_text(r.data_size) + " of data");
    out += field("key-values", std::to_string(r.metadata.size()) + (r.splits.empty() ? "" : " (the first split's)"));
    if (!r.metadata.empty()) out += "\n" + gguf_kv_table_text(r.metadata);
    if (!r.splits.empty()) out += "\n" + split_table_text(r);
    if (!r.tensors.empty()) out += "\n" + tensor_table_text(r);
  }
  if (r.model_facts) out += "\n" + model_facts_text(*r.model_facts);
  out += "\n" + field("verdict", verdict_text(r.valid, r.problem));
  return out;
}

}  // namespace

std::string inspect_text(const FileReport& r) {
  if (r.format == ws::Format::Gguf) return gguf_text(r);
  std::string out;
  out += field("file", display_text(r.path));
  out += field("format", r.format != ws::Format::Unknown ? ws::format_name(r.format)
                                                          : "not recognised");
  if (r.size_known)
    out += field("size", bytes_text(r.file_size));
  if (r.header_ready) {
    if (r.header_size)
      out += field("header", std::to_string(*r.header_size) + " bytes; data starts at byte " +
                                 std::to_string(r.data_start));
    out += field("tensors", std::to_string(r.tensors.size()) + ", " +
                                bytes_text(r.data_size) + " of data");
  } else if (r.header_size) {
    out += field("header", "declared as " + std::to_string(*r.header_size) + " bytes");
  }

  if (!r.tensors.empty()) out += "\n" + tensor_table_text(r);

  if (r.header_ready) {
    out += "\n";
    if (!r.has_metadata) {
      out += field("metadata", "none");
    } else {
      out += field("metadata", std::to_string(r.metadata.size()) +
                                   (r.metadata.size() == 1 ? " entry" : " entries"));
      for (const MetadataRow& m : r.metadata)
        out += "  " + display_text(m.key) + " = " + metadata_value_text(m.value) + "\n";
    }
  }
  if (r.model_facts) out += "\n" + model_facts_text(*r.model_facts);
  if (r.logical) out += "\n" + logical_text(*r.logical);
  out += "\n" + field("verdict", verdict_text(r.valid, r.problem));
  return out;
}

namespace {

// An Ollama manifest: its blobs (tensor layers) as an index's shards, with the layer names.
std::string manifest_text(const ShardedReport& r) {
  std::string out = field("manifest", display_text(r.path));
  if (r.index_ok) {
    out += field("format", "Ollama manifest, " + std::to_string(r.shards.size()) +
                               (r.shards.size() == 1 ? " tensor blob" : " tensor blobs") + " (safetensors)");
    if (!r.blobs_dir.empty()) out += field("blobs", display_text(r.blobs_dir));
    out += field("tensors", std::to_string(r.tensor_count));
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < r.shards.size(); ++i) {
      const ShardRow& s = r.shards[i];
      rows.push_back({std::to_string(i), std::to_string(s.index_tensors), s.scanned ? std::to_string(s.tensor_bytes) : "-",
                      display_text(s.file), name_text(s.layer)});
    }
    out += "\n" + table_text({"#", "tensors", "bytes", "blob", "layer"}, rows, {true, true, true, false, false});
  }
  if (r.logical) out += "\n" + logical_text(*r.logical);
  out += "\n" + field("verdict", verdict_text(r.valid, r.problem));
  return out;
}

}  // namespace

std::string inspect_json(const ShardedReport& r) {
  JsonWriter w;
  w.begin_object();
  w.key("file").string(r.path);
  w.key("format");
  if (r.index_ok)
    w.string(ws::format_name(ws::Format::Safetensors));
  else
    w.null();
  w.key("valid").boolean(r.valid);
  w.key("tensors").number(r.tensor_count);
  // Manifests only (an index's object keeps exactly its documented keys): where the blobs are.
  if (r.manifest) {
    w.key("manifest").boolean(true);
    w.key("blobs").string(r.blobs_dir);
  }
  w.key("total_size");
  if (r.total_size)
    w.number(*r.total_size);
  else
    w.null();
  w.key("shards").begin_array();
  for (const ShardRow& s : r.shards) {
    w.begin_object();
    w.key("file").string(s.file);
    if (r.manifest) w.key("layer").string(s.layer);
    w.key("tensors").number(s.index_tensors);
    w.key("bytes");
    if (s.scanned)
      w.number(s.tensor_bytes);
    else
      w.null();
    w.end_object();
  }
  w.end_array();
  if (r.logical) {
    w.key("logical");
    write_logical_json(&w, *r.logical);
  }
  w.key("error");
  if (r.problem)
    write_problem_json(&w, *r.problem, true);
  else
    w.null();
  write_warnings_json(&w, r.warnings);
  w.end_object();
  return w.str() + "\n";
}

std::string inspect_text(const ShardedReport& r) {
  std::string out;
  if (r.manifest) return manifest_text(r);
  out += field("index", display_text(r.path));
  if (r.index_ok) {
    out += field("format", "safetensors, " + std::to_string(r.shards.size()) +
                               (r.shards.size() == 1 ? " shard" : " shards"));
    out += field("tensors", std::to_string(r.tensor_count));
    std::string total = r.total_size ? bytes_text(*r.total_size) + " per the index"
                                     : "not given by the index";
    out += field("total size", total);

    std::vector<std::vector<std::string>> rows;
    uint64_t sum = 0;
    bool all_scanned = true;
    for (size_t i = 0; i < r.shards.size(); ++i) {
      const ShardRow& s = r.shards[i];
      rows.push_back({std::to_string(i), std::to_string(s.index_tensors),
                      s.scanned ? std::to_string(s.tensor_bytes) : "-", display_text(s.file)});
      sum += s.tensor_bytes;
      all_scanned = all_scanned && s.scanned;
    }
    out += "\n" + table_text({"#", "tensors", "bytes", "shard"}, rows, {true, true, true, false});
    if (all_scanned && !r.shards.empty())
      out += "\n" + field("shards hold", bytes_text(sum) + " of tensor data");
  }
  if (r.logical) out += "\n" + logical_text(*r.logical);
  out += "\n" + field("verdict", verdict_text(r.valid, r.problem));
  return out;
}

int run_inspect(const CliOptions& cli) {
  const std::string& path = cli.files.front();
  // A model at a URL: its headers only, each request no larger than the loader asks (a digest to
  // check needs whole files: then every byte, as for a local file).
  CliOptions options = cli;
  if (is_url(path) && options.scan.sha256.empty()) {
    options.scan.headers_only = true;
    options.scan.http.read_ahead = false;
  }
  std::string out;
  bool valid;
  std::optional<Problem> problem;
  std::vector<WarningRow> warnings;
  if (is_index_path(path)) {
    std::optional<LogicalSummary> logical;
    ShardedReport r = scan_model_index(path, options.scan, &logical);
    r.logical = logical;
    out = options.json ? inspect_json(r) : inspect_text(r);
    valid = r.valid;
    problem = r.problem;
    warnings = r.warnings;
  } else if (is_manifest_path(path)) {
    std::optional<LogicalSummary> logical;
    ShardedReport r = scan_model_manifest(path, options.scan, &logical);
    r.logical = logical;
    out = options.json ? inspect_json(r) : inspect_text(r);
    valid = r.valid;
    problem = r.problem;
    warnings = r.warnings;
  } else {
    // One load of the file as a model: its header, its verdict and (MLX, Ollama) its logical
    // weights with the load plan.
    std::optional<LogicalSummary> logical;
    FileReport r = scan_model_file(path, options.scan, &logical);
    r.canonical = options.canonical;
    // A safetensors model's architecture lives in the config.json beside it.
    if (r.format == ws::Format::Safetensors && r.header_ready) r.model_facts = config_facts_beside(path, options.scan.http);
    r.logical = logical;
    out = options.json ? inspect_json(r) : inspect_text(r);
    valid = r.valid;
    problem = r.problem;
    warnings = r.warnings;
  }
  fwrite(out.data(), 1, out.size(), stdout);
  fflush(stdout);
  print_warnings(path, warnings);
  if (valid) return 0;
  return problem && problem->io ? 2 : 1;
}

}  // namespace wscli

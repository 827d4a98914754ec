// weightstream CLI — Ollama manifests and their blobs (see manifest_blobs.h).
#include "manifest_blobs.h"

#include "json_doc_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error_text.h"
#include "scan_sharded.h"
#include "text_format.h"
#include "weightstream/manifest_blobs.h"

namespace wscli {
namespace {

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string with_slash(const std::string& d) { return d.empty() || d.back() == '/' ? d : d + "/"; }

// The nearest ancestor of the manifest with a blobs/ directory (the manifest's own directory
// first: a copied model keeps manifest and blobs/ side by side).
std::string find_blobs_dir(const std::string& manifest_path) {
  char real[PATH_MAX];
  if (!realpath(manifest_path.c_str(), real)) return std::string();
  std::string dir = real;
  for (;;) {
    const size_t slash = dir.find_last_of('/');
    if (slash == std::string::npos) return std::string();
    dir.resize(slash);
    if (is_dir(dir + "/blobs")) return dir + "/blobs/";
    if (dir.empty()) return std::string();
  }
}

Problem blob_problem(const std::string& code, const ManifestBlob& b, uint64_t offset, const std::string& message) {
  Problem p;
  p.code = code;
  p.offset = offset;
  p.tensor = b.name;
  p.shard = b.file;
  p.message = message;
  return p;
}

}  // namespace

bool is_manifest_path(const std::string& path) {
  if (path == "-" || is_index_path(path)) return false;
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return false;
  char buf[4096];
  const size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  size_t i = 0;
  while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')) ++i;
  if (i == n || buf[i] != '{') return false;
  const std::string head(buf + i, n - i);
  return head.find("\"schemaVersion\"") != std::string::npos || head.find("\"layers\"") != std::string::npos;
}

std::string blobs_dir_for(const std::string& path, const ScanOptions& options, std::optional<Problem>* problem) {
  if (!options.blobs_dir.empty()) {
    // --blobs names the blobs directory itself, or the models root that holds it.
    const std::string d = with_slash(options.blobs_dir);
    const std::string dir = is_dir(d + "blobs") ? d + "blobs/" : d;
    if (!is_dir(dir)) *problem = io_problem("cannot open the blobs directory " + options.blobs_dir, strerror(ENOTDIR), 0);
    return is_dir(dir) ? dir : std::string();
  }
  const std::string dir = find_blobs_dir(path);
  if (dir.empty()) {
    Problem p;
    p.code = "ManifestNoBlobs";
    p.io = true;
    p.message = "no blobs/ directory beside the manifest or above it (Ollama keeps manifests/ and blobs/ "
                "in one models directory): give the directory that holds the sha256-* blobs with --blobs DIR.";
    *problem = p;
  }
  return dir;
}

std::optional<Problem> read_manifest(const std::string& path, const ScanOptions& options, ManifestFiles* out) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return io_problem("cannot open " + path, strerror(errno), 0);
  const ws::Status s = read_json_doc(f, options.arena_size, &out->arena, &out->manifest);
  fclose(f);
  if (s != ws::Status::Ok) {
    ErrorFacts facts;
    facts.code = s;
    facts.arena_needed = out->manifest->arena_needed();
    return problem_from(out->manifest->error(), facts);
  }

  out->parsed = true;
  if (!options.blobs_dir.empty()) {
    // --blobs names the blobs directory itself, or the models root that holds it.
    const std::string d = with_slash(options.blobs_dir);
    out->blobs_dir = is_dir(d + "blobs") ? d + "blobs/" : d;
    if (!is_dir(out->blobs_dir)) return io_problem("cannot open the blobs directory " + options.blobs_dir, strerror(ENOTDIR), 0);
  } else {
    out->blobs_dir = find_blobs_dir(path);
    if (out->blobs_dir.empty()) {
      Problem p;
      p.code = "ManifestNoBlobs";
      p.io = true;
      p.message = "no blobs/ directory beside the manifest or above it (Ollama keeps manifests/ and blobs/ "
                  "in one models directory): give the directory that holds the sha256-* blobs with --blobs DIR.";
      return p;
    }
  }

  const ws::OllamaManifest& m = *out->manifest;
  for (uint32_t l = 0; l < m.layer_count(); ++l) {
    const ws::ManifestLayer layer = m.layer(l);
    if (!layer.is_tensor) continue;  // config, template, license, ...: not weights
    ManifestBlob b;
    b.layer = l;
    b.name = str(layer.name);
    b.file = str(layer.blob_file);  // "sha256-" + 64 hex digits: the parser checked, no path escapes
    b.path = out->blobs_dir + b.file;
    b.size = layer.size;
    struct stat st;
    if (stat(b.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      Problem p = blob_problem("ManifestBlobMissing", b, 0,
                               "the blob of layer " + quoted(b.name) + " is not in " + out->blobs_dir +
                                   ": pull the model again (ollama pull), or give the directory that holds it with "
                                   "--blobs DIR.");
      p.io = true;
      return p;
    }
    const uint64_t actual = uint64_t(st.st_size);
    ws::Error e;
    if (ws::check_manifest_blob_size(m, l, actual, &e) != ws::Status::Ok)
      return blob_problem(ws::status_name(e.code), b, e.offset,
                          "the blob of layer " + quoted(b.name) + " is " + std::to_string(actual) +
                              " bytes, the manifest says " + std::to_string(b.size) +
                              ": the blob is incomplete or belongs to another model; pull the model again.");
    out->blobs.push_back(b);
  }
  return std::nullopt;
}

std::optional<Problem> check_blob_tensors(const ManifestFiles& files, const ManifestBlob& blob,
                                          const ws::TensorTable& table) {
  // The rules are the library's (ws::check_manifest_blob_tensors, shared with the JS bindings);
  // the CLI only words the problem.
  const ws::OllamaManifest& m = *files.manifest;
  ws::Error e;
  const ws::Status s = ws::check_manifest_blob_tensors(m, blob.layer, table, &e);
  if (s == ws::Status::Ok) return std::nullopt;
  Problem p;
  p.code = ws::status_name(s);
  p.offset = e.offset;
  p.tensor = std::string(e.tensor_name ? e.tensor_name : "", e.tensor_name_size);
  p.shard = blob.file;
  if (s == ws::Status::ManifestTensorInOtherLayer) {
    const ws::ManifestLayer other = m.layer(uint32_t(e.found));
    p.message = "the blob of layer " + quoted(blob.name) + " holds a tensor that layer " + quoted(str(other.name)) +
                " (" + str(other.blob_file) +
                ") covers: the manifest and its blobs come from different models; pull the model again.";
  } else {
    p.message = "no tensor of the blob is named " + quoted(blob.name) + " or starts with " + quoted(blob.name + ".") +
                ": the layer's digest points at another blob; pull the model again.";
  }
  return p;
}

}  // namespace wscli

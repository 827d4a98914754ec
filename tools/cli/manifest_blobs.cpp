// weightstream CLI — Ollama manifests and their blobs (see manifest_blobs.h).
#include "manifest_blobs.h"


#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error_text.h"
#include "scan_sharded.h"
#include "text_format.h"
#include "weightstream/file_kind.h"

namespace wscli {
namespace {


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

}  // namespace

bool is_manifest_path(const std::string& path) {
  if (path == "-" || is_index_path(path)) return false;
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[4096];
  const size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  // The library's one rule for file kinds (weightstream/file_kind.h): a safetensors file whose
  // length prefix starts with '{' and whose header names "layers" stays a safetensors file.
  return ws::detect_file_kind(buf, n, uint64_t(st.st_size)) == ws::FileKind::OllamaManifest;
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

}  // namespace wscli

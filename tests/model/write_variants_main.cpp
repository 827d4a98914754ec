// ws-model-variants OUTDIR: writes every variant of model_variants() as a directory of files, for
// tests/model/make_goldens.py (which runs the CLI over them).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <string>

#include "model_variants.h"

static bool make_dirs(const std::string& path) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string d = path.substr(0, at);
    if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "ws-model-variants: cannot create %s: %s\n", d.c_str(), strerror(errno));
      return false;
    }
  }
  return true;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ws-model-variants OUTDIR\n");
    return 2;
  }
  bool ok = true;
  const modeltest::VariantDirs dirs = modeltest::model_variants(&ok);
  for (const auto& dir : dirs) {
    for (const auto& file : dir.second) {
      const std::string path = std::string(argv[1]) + "/" + dir.first + "/" + file.first;
      if (!make_dirs(path.substr(0, path.find_last_of('/')))) return 1;
      FILE* f = fopen(path.c_str(), "wb");
      if (!f || fwrite(file.second.data(), 1, file.second.size(), f) != file.second.size() || fclose(f) != 0) {
        fprintf(stderr, "ws-model-variants: cannot write %s\n", path.c_str());
        return 1;
      }
    }
  }
  return ok ? 0 : 1;
}

// ws-make-samples OUTDIR — writes the deterministic sample models (see sample_set.h) under OUTDIR,
// creating directories as needed. Same bytes on every run: the committed samples/ folder is checked
// against this output by a test.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <string>

#include "convention_fixtures.h"
#include "sample_set.h"

namespace {

// mkdir -p for the directories of a '/'-separated path.
bool make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      const std::string part = dir.substr(0, i);
      if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ws-make-samples: cannot create %s: %s\n", part.c_str(), strerror(errno));
        return false;
      }
    }
  }
  return true;
}

bool write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) {
    fprintf(stderr, "ws-make-samples: cannot write %s: %s\n", path.c_str(), strerror(errno));
    return false;
  }
  const bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (fclose(f) != 0 || !ok) {
    fprintf(stderr, "ws-make-samples: error writing %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // --conventions: the convention fixtures (tests/data/conventions) instead of samples/.
  const bool conventions = argc == 3 && strcmp(argv[1], "--conventions") == 0;
  if (!conventions && (argc != 2 || argv[1][0] == '-')) {
    fprintf(stderr,
            "usage: ws-make-samples OUTDIR\n"
            "       ws-make-samples --conventions OUTDIR\n"
            "Writes deterministic sample models (tiny-llama.safetensors, sharded/...) to OUTDIR, or\n"
            "with --conventions the MLX / Ollama / sharded-MLX fixtures of tests/data/conventions.\n");
    return argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) ? 0 : 2;
  }
  std::string out = argv[conventions ? 2 : 1];
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  const std::vector<samplegen::SampleFile> files =
      conventions ? samplegen::build_convention_fixtures() : samplegen::build_sample_set();
  for (const samplegen::SampleFile& f : files) {
    const std::string path = out + "/" + f.path;
    if (!make_dirs(path.substr(0, path.find_last_of('/')))) return 1;
    if (!write_file(path, f.bytes)) return 1;
    printf("%s (%zu bytes)\n", path.c_str(), f.bytes.size());
  }
  return 0;
}

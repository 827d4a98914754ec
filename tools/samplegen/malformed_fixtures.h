// ws-make-samples — the malformed neighbours of the upstream-convention fixtures (issue #14) and
// the issue #16 regression, committed under tests/data/conventions/malformed/ with an
// expected.json, so that the library's tests, the CLI's and the JS package's read the same bytes
// and must give the same verdict: code, the file the offset is in, the offset, the tensor and the
// found / expected values. Every expected value is computed here from the bytes written (the
// position of a tensor's header entry or data), never by running the library.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "sample_set.h"

namespace samplegen {

struct MalformedCase {
  std::string dir;          // under malformed/
  std::string kind;         // "mlx" (model.safetensors + config.json), "ollama" (manifest.json +
                            // blobs/), "uqff" (the directory's files)
  std::string open;         // the file a user names: model.safetensors, manifest.json, model-0.uqff
  std::string status;       // the ws::Status name
  std::string file;         // the file the offset is in (a blob's file name for Ollama)
  uint64_t offset = 0;
  std::string tensor;       // "" = none
  int64_t found = -1;       // -1: the error carries none
  int64_t expected = -1;
  std::string description;
  std::vector<SampleFile> files;  // paths relative to malformed/<dir>/
};

std::vector<MalformedCase> malformed_cases();

// malformed/<dir>/... for every case, and malformed/expected.json.
std::vector<SampleFile> build_malformed_fixtures();

}  // namespace samplegen

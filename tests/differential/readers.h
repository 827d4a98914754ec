// The two readings the differential test compares: weightstream's Reader and ggml's
// gguf_init_from_file, each reduced to the facts a loader acts on.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "ggml_baseline.h"
#include "weightstream/reader.h"

namespace wsdiff {

struct TensorFacts {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;  // relative to the data section
  uint64_t size = 0;
  bool operator==(const TensorFacts& o) const {
    return name == o.name && type == o.type && offset == o.offset && size == o.size;
  }
};

// What a reader says about a file: accepted or not and, when accepted, where everything is.
struct FileFacts {
  bool accepted = false;
  uint64_t tensors = 0, kvs = 0, alignment = 0, data_start = 0;
  std::vector<TensorFacts> tensor;
};

struct WsReading : FileFacts {
  ws::Status code = ws::Status::Ok;
  uint64_t offset = 0;           // the error's offset (the file size when accepted)
  std::string error_tensor;      // the error's tensor name, if any
  ws::GgmlDialect dialect = ws::GgmlDialect::Upstream;  // once the KVs were read
};

// Reads `bytes` as the CLI and the JS bindings do: the input size declared, the whole file in one
// piece, a 64 MiB arena.
WsReading read_with_weightstream(const std::string& bytes);

struct GgmlReading : FileFacts {
  bool crashed = false;  // the reading process died (signal) or timed out
  int signal = 0;
  std::string log;       // what ggml logged (its reason for rejecting a file)
};

// ggml's reader, run in a child process so that an abort or a crash inside ggml is a verdict, not
// the end of the campaign. The file must exist at `path`.
class GgmlReader {
 public:
  // Loads ggml from `lib` (bench/package.json); false with *err when it cannot.
  bool load(const std::string& lib, std::string* err);
  std::string version() const { return ggml_.version(); }
  GgmlReading read(const std::string& path) const;

 private:
  wsbench::GgmlBaseline ggml_;
};

}  // namespace wsdiff

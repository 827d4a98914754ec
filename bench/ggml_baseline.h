// The baseline: ggml's own GGUF reader, loaded at run time from a prebuilt libggml-base.so. Also
// the oracle of the differential test (tests/differential), which reads every tensor's facts.
//
// Nothing may be downloaded but Debian and npm packages, and Debian does not package ggml, so the
// library comes from node-llama-cpp's prebuilt binaries (bench/package.json; `npm ci --prefix
// bench`). It is dlopen'ed rather than linked so that the benchmark builds, and reports our own
// numbers, without it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace wsbench {

// Where `npm ci --prefix bench` puts the library, relative to the repository.
constexpr const char kGgmlDefaultRelPath[] =
    "bench/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";

struct GgmlInfo {
  bool ok = false;          // gguf_init_from_* returned a context
  int64_t kvs = 0;          // gguf_get_n_kv
  int64_t tensors = 0;      // gguf_get_n_tensors
  uint64_t data_offset = 0; // gguf_get_data_offset: where ggml thinks the data section starts
  uint64_t alignment = 0;   // gguf_get_alignment
};

// One tensor as ggml reads it.
struct GgmlTensor {
  const char* name = nullptr;  // gguf_get_tensor_name: a C string (ggml keeps at most 63 bytes)
  int32_t type = 0;            // gguf_get_tensor_type
  uint64_t offset = 0;         // gguf_get_tensor_offset: relative to the data section
  uint64_t size = 0;           // gguf_get_tensor_size: ggml_nbytes
};

class GgmlBaseline {
 public:
  GgmlBaseline() = default;
  ~GgmlBaseline();
  GgmlBaseline(const GgmlBaseline&) = delete;
  GgmlBaseline& operator=(const GgmlBaseline&) = delete;

  // dlopens `path` and resolves the gguf_* functions; false with *err set when it cannot.
  bool load(const std::string& path, std::string* err);
  bool loaded() const { return lib_ != nullptr; }
  std::string version() const;  // "ggml <version> (<commit>)"

  // Metadata only, as llama.cpp's tools read headers: no_alloc = true, ctx = nullptr (no ggml
  // context, no tensor data read). Both return the context; call free_context().
  void* init_file(const char* path) const;
  void* init_buffer(const void* data, size_t size) const;  // nullptr if the build lacks it
  void free_context(void* ctx) const;
  GgmlInfo info(void* ctx) const;  // facts of a context (ok = false for nullptr)
  GgmlTensor tensor(void* ctx, int64_t i) const;  // i < info(ctx).tensors
  bool has_init_buffer() const { return init_buffer_ != nullptr; }
  // Routes ggml's log (its reasons for rejecting a file) to `fn`; false if the build lacks it.
  using LogFn = void (*)(int level, const char* text, void* user);
  bool set_log(LogFn fn, void* user) const;

 private:
  // gguf.h: struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; };
  struct InitParams {
    bool no_alloc;
    void** ctx;
  };
  using InitFile = void* (*)(const char*, InitParams);
  using InitBuffer = void* (*)(const void*, size_t, InitParams);
  using Free = void (*)(void*);
  using Count = int64_t (*)(const void*);
  using Size = size_t (*)(const void*);
  using Str = const char* (*)();
  using TensorStr = const char* (*)(const void*, int64_t);
  using TensorInt = int32_t (*)(const void*, int64_t);
  using TensorSize = size_t (*)(const void*, int64_t);
  using LogSet = void (*)(LogFn, void*);

  void* lib_ = nullptr;
  InitFile init_file_ = nullptr;
  InitBuffer init_buffer_ = nullptr;
  Free free_ = nullptr;
  Count n_kv_ = nullptr, n_tensors_ = nullptr;
  Size data_offset_ = nullptr, alignment_ = nullptr;
  TensorStr tensor_name_ = nullptr;
  TensorInt tensor_type_ = nullptr;
  TensorSize tensor_offset_ = nullptr, tensor_size_ = nullptr;
  LogSet log_set_ = nullptr;
  Str version_ = nullptr, commit_ = nullptr;
};

}  // namespace wsbench

// Implements ggml_baseline.h with dlopen/dlsym.
#include "ggml_baseline.h"

#include <dlfcn.h>

namespace wsbench {

namespace {

template <typename F>
bool resolve(void* lib, const char* name, F* out, std::string* err) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out && err) *err = std::string("symbol ") + name + " not found";
  return *out != nullptr;
}

}  // namespace

GgmlBaseline::~GgmlBaseline() {
  if (lib_) dlclose(lib_);
}

bool GgmlBaseline::load(const std::string& path, std::string* err) {
  // RTLD_LOCAL: ggml's symbols must not interpose anything of ours (both define no common names,
  // but a later ggml could).
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *err = dlerror();
    return false;
  }
  if (!resolve(lib, "gguf_init_from_file", &init_file_, err) || !resolve(lib, "gguf_free", &free_, err) ||
      !resolve(lib, "gguf_get_n_kv", &n_kv_, err) || !resolve(lib, "gguf_get_n_tensors", &n_tensors_, err) ||
      !resolve(lib, "gguf_get_data_offset", &data_offset_, err) ||
      !resolve(lib, "gguf_get_alignment", &alignment_, err) ||
      !resolve(lib, "gguf_get_tensor_name", &tensor_name_, err) ||
      !resolve(lib, "gguf_get_tensor_type", &tensor_type_, err) ||
      !resolve(lib, "gguf_get_tensor_offset", &tensor_offset_, err) ||
      !resolve(lib, "gguf_get_tensor_size", &tensor_size_, err)) {
    dlclose(lib);
    return false;
  }
  // Optional: older builds have no in-memory reader and no version functions.
  resolve(lib, "gguf_init_from_buffer", &init_buffer_, nullptr);
  resolve(lib, "ggml_version", &version_, nullptr);
  resolve(lib, "ggml_commit", &commit_, nullptr);
  resolve(lib, "ggml_log_set", &log_set_, nullptr);
  lib_ = lib;
  return true;
}

std::string GgmlBaseline::version() const {
  std::string v = "ggml ";
  v += version_ ? version_() : "(version unknown)";
  if (commit_) v += std::string(" (") + commit_() + ")";
  return v;
}

void* GgmlBaseline::init_file(const char* path) const {
  InitParams p{true, nullptr};
  return init_file_(path, p);
}

void* GgmlBaseline::init_buffer(const void* data, size_t size) const {
  if (!init_buffer_) return nullptr;
  InitParams p{true, nullptr};
  return init_buffer_(data, size, p);
}

void GgmlBaseline::free_context(void* ctx) const {
  if (ctx) free_(ctx);
}

GgmlInfo GgmlBaseline::info(void* ctx) const {
  GgmlInfo i;
  if (!ctx) return i;
  i.ok = true;
  i.kvs = n_kv_(ctx);
  i.tensors = n_tensors_(ctx);
  i.data_offset = data_offset_(ctx);
  i.alignment = alignment_(ctx);
  return i;
}

GgmlTensor GgmlBaseline::tensor(void* ctx, int64_t i) const {
  GgmlTensor t;
  t.name = tensor_name_(ctx, i);
  t.type = tensor_type_(ctx, i);
  t.offset = tensor_offset_(ctx, i);
  t.size = tensor_size_(ctx, i);
  return t;
}

bool GgmlBaseline::set_log(LogFn fn, void* user) const {
  if (!log_set_) return false;
  log_set_(fn, user);
  return true;
}

}  // namespace wsbench

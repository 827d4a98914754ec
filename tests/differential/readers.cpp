// Implements readers.h.
#include "readers.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace wsdiff {

WsReading read_with_weightstream(const std::string& bytes) {
  static std::vector<uint64_t> arena(8u << 20);  // 64 MiB
  ws::Reader r(arena.data(), arena.size() * 8);
  r.set_input_size(bytes.size());
  WsReading w;
  bool fed = false;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (!fed) r.feed(bytes.data(), bytes.size()), fed = true;
      else r.finish();
    } else if (e.type == ws::EventType::HeaderReady) {
      w.tensors = r.tensor_count();
      w.kvs = r.gguf_kv_count();
      w.alignment = r.gguf_alignment();
      w.data_start = r.data_start();
      for (uint32_t i = 0; i < r.tensor_count(); ++i) {
        ws::TensorInfo t = r.tensor(i);
        TensorFacts f;
        f.name.assign(t.name.data, t.name.size);
        f.type = t.type;
        f.offset = t.begin;
        f.size = t.end - t.begin;
        w.tensor.push_back(f);
      }
    } else if (e.type == ws::EventType::End || e.type == ws::EventType::Error) {
      break;
    }
  }
  const ws::Error& err = r.error();
  w.accepted = err.code == ws::Status::Ok;
  w.code = err.code;
  w.offset = w.accepted ? r.position() : err.offset;
  if (err.tensor_name) w.error_tensor.assign(err.tensor_name, err.tensor_name_size);
  w.dialect = r.gguf_dialect();
  if (r.format() != ws::Format::Gguf) w.accepted = false;  // (a safetensors mutant is not a GGUF file)
  return w;
}

namespace {

// The child writes its reading here: a shared anonymous mapping made once, before any fork.
struct Shared {
  uint32_t done, accepted;
  uint64_t tensors, kvs, alignment, data_start;
  uint32_t log_len, tensor_bytes;
  char log[64 << 10];
  uint8_t tensor[8 << 20];  // per tensor: u32 name length, name, u32 type, u64 offset, u64 size
};
// One mapping per process that reads (the campaign's workers each get their own).
Shared* g_shared = nullptr;
pid_t g_shared_owner = 0;

bool map_shared() {
  if (g_shared && g_shared_owner == getpid()) return true;
  void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  g_shared = static_cast<Shared*>(p);
  g_shared_owner = getpid();
  return true;
}

void log_to_shared(int, const char* text, void*) {
  size_t n = strlen(text), room = sizeof g_shared->log - g_shared->log_len;
  if (n > room) n = room;
  memcpy(g_shared->log + g_shared->log_len, text, n);
  g_shared->log_len += uint32_t(n);
}

bool put(Shared* s, const void* p, size_t n) {
  if (n > sizeof s->tensor - s->tensor_bytes) return false;
  memcpy(s->tensor + s->tensor_bytes, p, n);
  s->tensor_bytes += uint32_t(n);
  return true;
}

}  // namespace

bool GgmlReader::load(const std::string& lib, std::string* err) {
  if (!ggml_.load(lib, err)) return false;
  ggml_.set_log(log_to_shared, nullptr);
  return true;
}

GgmlReading GgmlReader::read(const std::string& path) const {
  GgmlReading g;
  if (!map_shared()) {
    g.crashed = true;
    return g;
  }
  Shared* s = g_shared;
  s->done = s->accepted = 0;
  s->log_len = s->tensor_bytes = 0;
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);  // a hang is a verdict too
    void* ctx = ggml_.init_file(path.c_str());
    if (ctx) {
      wsbench::GgmlInfo info = ggml_.info(ctx);
      s->accepted = 1;
      s->tensors = uint64_t(info.tensors);
      s->kvs = uint64_t(info.kvs);
      s->alignment = info.alignment;
      s->data_start = info.data_offset;
      for (int64_t i = 0; i < info.tensors; ++i) {
        wsbench::GgmlTensor t = ggml_.tensor(ctx, i);
        uint32_t n = uint32_t(strlen(t.name)), type = uint32_t(t.type);
        if (!put(s, &n, 4) || !put(s, t.name, n) || !put(s, &type, 4) || !put(s, &t.offset, 8) ||
            !put(s, &t.size, 8))
          _exit(3);
      }
      ggml_.free_context(ctx);
    }
    s->done = 1;
    _exit(0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    g.crashed = true;
    return g;
  }
  g.log.assign(s->log, s->log_len);
  if (WIFSIGNALED(status) || !s->done || WEXITSTATUS(status) != 0) {
    g.crashed = true;
    g.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return g;
  }
  g.accepted = s->accepted != 0;
  g.tensors = s->tensors;
  g.kvs = s->kvs;
  g.alignment = s->alignment;
  g.data_start = s->data_start;
  const uint8_t* p = s->tensor;
  for (uint64_t i = 0; g.accepted && i < g.tensors; ++i) {
    TensorFacts t;
    uint32_t n;
    memcpy(&n, p, 4);
    t.name.assign(reinterpret_cast<const char*>(p + 4), n);
    p += 4 + n;
    memcpy(&t.type, p, 4);
    memcpy(&t.offset, p + 4, 8);
    memcpy(&t.size, p + 12, 8);
    p += 20;
    g.tensor.push_back(t);
  }
  return g;
}

}  // namespace wsdiff

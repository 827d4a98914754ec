// ws-make-split-gguf OUTDIR [--ggml libggml-base.so] [--llama libllama.so]
//
// Writes the split GGUF fixtures of tests/data/split-gguf with ggml's own GGUF writer: the
// libggml-base of the npm package @node-llama-cpp/linux-x64 (`npm ci --prefix bench`), dlopened.
// A model is built the way llama.cpp's converters do (gguf_init_empty, gguf_set_*,
// gguf_add_tensor, gguf_set_tensor_data) and split the way tools/gguf-split/gguf-split.cpp does:
// one gguf_context per split, the first with every key-value of the model (gguf_set_kv), each
// with split.no (u16), a split.count placeholder and split.tensors.count (i32), the tensors
// `--split-max-tensors N` puts there (or none in the first with --no-tensor-first-split), then
// split.count set on every split; each written with gguf_write_to_file. File names come from
// llama.cpp's own llama_split_path when libllama is found beside libggml-base.
//
// The malformed variants break one rule each (ggml's setters again, on the split contexts before
// writing: another split.no, a key removed or of another type, a renamed tensor, ...). For every
// case, expected.json says what the loader must report: the status, the split file, the byte
// offset and the values — offsets computed here by walking the written bytes (an independent
// reading of the GGUF layout, not weightstream's), and whether ggml itself reads each file.
//
// Not a part of lib/ and never linked with it: fixtures made by the code under test would prove
// nothing about it.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

// --- ggml's API, as gguf.h / ggml.h declare it -------------------------------------------------

struct ggml_context;
struct ggml_tensor;
struct gguf_context;
struct GgmlInitParams {
  size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};
struct GgufInitParams {
  bool no_alloc;
  ggml_context** ctx;
};
enum : int { kTypeF32 = 0, kTypeF16 = 1, kTypeQ4_0 = 2, kTypeQ8_0 = 8 };
enum : int { kGgufU16 = 2, kGgufU32 = 4, kGgufI32 = 5 };

struct Ggml {
  ggml_context* (*init)(GgmlInitParams);
  void (*free_ctx)(ggml_context*);
  ggml_tensor* (*new_tensor)(ggml_context*, int, int, const int64_t*);
  ggml_tensor* (*set_name)(ggml_tensor*, const char*);
  size_t (*nbytes)(const ggml_tensor*);
  gguf_context* (*gguf_empty)();
  gguf_context* (*gguf_from_file)(const char*, GgufInitParams);
  void (*gguf_free)(gguf_context*);
  void (*set_u16)(gguf_context*, const char*, uint16_t);
  void (*set_u32)(gguf_context*, const char*, uint32_t);
  void (*set_i32)(gguf_context*, const char*, int32_t);
  void (*set_f32)(gguf_context*, const char*, float);
  void (*set_str)(gguf_context*, const char*, const char*);
  void (*set_arr_str)(gguf_context*, const char*, const char**, size_t);
  void (*set_kv)(gguf_context*, const gguf_context*);
  int64_t (*remove_key)(gguf_context*, const char*);
  void (*add_tensor)(gguf_context*, const ggml_tensor*);
  void (*set_tensor_data)(gguf_context*, const char*, const void*);
  bool (*write)(const gguf_context*, const char*, bool);
  int64_t (*n_tensors)(const gguf_context*);
  const char* (*version)();
  const char* (*commit)();
  int (*split_path)(char*, size_t, const char*, int, int);  // libllama, optional
  void (*log_set)(void (*)(int, const char*, void*), void*);
};

void quiet(int, const char*, void*) {}  // ggml's log (its reader's complaint about the non-GGUF split)

template <typename F>
bool sym(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out) fprintf(stderr, "ws-make-split-gguf: %s not found\n", name);
  return *out != nullptr;
}

bool load_ggml(const std::string& path, const std::string& llama, Ggml* g) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "ws-make-split-gguf: %s\n  (npm ci --prefix bench installs it, or pass --ggml PATH)\n", dlerror());
    return false;
  }
  bool ok = sym(lib, "ggml_init", &g->init) && sym(lib, "ggml_free", &g->free_ctx) &&
            sym(lib, "ggml_new_tensor", &g->new_tensor) && sym(lib, "ggml_set_name", &g->set_name) &&
            sym(lib, "ggml_nbytes", &g->nbytes) && sym(lib, "gguf_init_empty", &g->gguf_empty) &&
            sym(lib, "gguf_init_from_file", &g->gguf_from_file) && sym(lib, "gguf_free", &g->gguf_free) &&
            sym(lib, "gguf_set_val_u16", &g->set_u16) && sym(lib, "gguf_set_val_u32", &g->set_u32) &&
            sym(lib, "gguf_set_val_i32", &g->set_i32) && sym(lib, "gguf_set_val_f32", &g->set_f32) &&
            sym(lib, "gguf_set_val_str", &g->set_str) && sym(lib, "gguf_set_arr_str", &g->set_arr_str) &&
            sym(lib, "gguf_set_kv", &g->set_kv) && sym(lib, "gguf_remove_key", &g->remove_key) &&
            sym(lib, "gguf_add_tensor", &g->add_tensor) && sym(lib, "gguf_set_tensor_data", &g->set_tensor_data) &&
            sym(lib, "gguf_write_to_file", &g->write) && sym(lib, "gguf_get_n_tensors", &g->n_tensors) &&
            sym(lib, "ggml_version", &g->version) && sym(lib, "ggml_commit", &g->commit);
  g->split_path = nullptr;
  if (ok && sym(lib, "ggml_log_set", &g->log_set)) g->log_set(&quiet, nullptr);
  if (ok && !llama.empty()) {
    if (void* l = dlopen(llama.c_str(), RTLD_NOW | RTLD_LOCAL))
      g->split_path = reinterpret_cast<int (*)(char*, size_t, const char*, int, int)>(dlsym(l, "llama_split_path"));
  }
  return ok;
}

// --- The model ---------------------------------------------------------------------------------

uint32_t g_seed = 0x9e3779b9u;
uint32_t rnd() {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 17;
  g_seed ^= g_seed << 5;
  return g_seed;
}

struct TensorSpec {
  std::string name;
  int type;
  std::vector<int64_t> ne;
  std::vector<uint8_t> data;
};

// Finite data of every type: fp16 values and block scales in [0.0625, 2) with either sign.
uint16_t finite_half() { return uint16_t(0x2C00 + rnd() % 0x1000) | uint16_t((rnd() & 1) << 15); }

std::vector<uint8_t> make_data(int type, int64_t elements) {
  std::vector<uint8_t> d;
  auto put16 = [&](uint16_t v) {
    d.push_back(uint8_t(v));
    d.push_back(uint8_t(v >> 8));
  };
  switch (type) {
    case kTypeF32:
      for (int64_t i = 0; i < elements; ++i) {
        const float f = float(int(rnd() % 2001) - 1000) / 256.0f;
        uint8_t b[4];
        memcpy(b, &f, 4);
        d.insert(d.end(), b, b + 4);
      }
      break;
    case kTypeF16:
      for (int64_t i = 0; i < elements; ++i) put16(finite_half());
      break;
    case kTypeQ8_0:  // {fp16 d; int8 qs[32]}
      for (int64_t b = 0; b < elements / 32; ++b) {
        put16(finite_half());
        for (int i = 0; i < 32; ++i) d.push_back(uint8_t(rnd()));
      }
      break;
    case kTypeQ4_0:  // {fp16 d; uint8 qs[16]}
      for (int64_t b = 0; b < elements / 32; ++b) {
        put16(finite_half());
        for (int i = 0; i < 16; ++i) d.push_back(uint8_t(rnd()));
      }
      break;
  }
  return d;
}

std::vector<TensorSpec> model_tensors() {
  std::vector<TensorSpec> t = {
      {"token_embd.weight", kTypeF16, {64, 8}, {}},   {"blk.0.attn_q.weight", kTypeQ8_0, {64, 64}, {}},
      {"blk.0.ffn_up.weight", kTypeQ4_0, {64, 32}, {}}, {"blk.1.attn_q.weight", kTypeQ8_0, {64, 64}, {}},
      {"blk.1.ffn_up.weight", kTypeQ4_0, {64, 32}, {}}, {"output_norm.weight", kTypeF32, {64}, {}},
  };
  for (TensorSpec& s : t) {
    int64_t n = 1;
    for (int64_t e : s.ne) n *= e;
    s.data = make_data(s.type, n);
  }
  return t;
}

// The model's key-values, as a converter sets them.
void set_model_kvs(const Ggml& g, gguf_context* ctx) {
  g.set_str(ctx, "general.architecture", "llama");
  g.set_str(ctx, "general.name", "weightstream split fixture");
  g.set_u32(ctx, "llama.block_count", 2);
  g.set_u32(ctx, "llama.context_length", 256);
  g.set_u32(ctx, "llama.embedding_length", 64);
  g.set_u32(ctx, "llama.feed_forward_length", 32);
  g.set_u32(ctx, "llama.attention.head_count", 4);
  g.set_f32(ctx, "llama.rope.freq_base", 10000.0f);
  const char* tokens[] = {"<unk>", "<s>", "</s>", "a", "b", "c"};
  g.set_arr_str(ctx, "tokenizer.ggml.tokens", tokens, 6);
  g.set_u32(ctx, "general.file_type", 7);
}

// A ggml context holding the tensors (no data: gguf_set_tensor_data points at ours).
struct Tensors {
  ggml_context* ctx = nullptr;
  std::map<std::string, ggml_tensor*> by_name;
};

Tensors make_tensors(const Ggml& g, const std::vector<TensorSpec>& specs) {
  Tensors t;
  t.ctx = g.init(GgmlInitParams{size_t(1) << 20, nullptr, true});
  for (const TensorSpec& s : specs) {
    ggml_tensor* x = g.new_tensor(t.ctx, s.type, int(s.ne.size()), s.ne.data());
    g.set_name(x, s.name.c_str());
    t.by_name[s.name] = x;
  }
  return t;
}

// --- Splitting as gguf-split does --------------------------------------------------------------

struct Split {
  gguf_context* ctx;
  std::vector<size_t> tensors;  // indices into the specs
};

// `max_tensors` per split (--split-max-tensors), `no_tensor_first` (--no-tensor-first-split).
std::vector<Split> split_model(const Ggml& g, gguf_context* model, const std::vector<TensorSpec>& specs,
                               const Tensors& t, int max_tensors, bool no_tensor_first) {
  std::vector<Split> out;
  const int n = int(specs.size());
  auto new_split = [&]() {
    Split s;
    s.ctx = g.gguf_empty();
    if (out.empty()) g.set_kv(s.ctx, model);  // every key-value of the model in the first split only
    g.set_u16(s.ctx, "split.no", uint16_t(out.size()));
    g.set_u16(s.ctx, "split.count", 0);  // placeholder
    g.set_i32(s.ctx, "split.tensors.count", n);
    out.push_back(s);
  };
  new_split();
  if (no_tensor_first) new_split();
  for (int i = 0; i < n; ++i) {
    if (i > 0 && i < n && i % max_tensors == 0) new_split();
    g.add_tensor(out.back().ctx, t.by_name.at(specs[size_t(i)].name));
    out.back().tensors.push_back(size_t(i));
  }
  for (Split& s : out) g.set_u16(s.ctx, "split.count", uint16_t(out.size()));
  return out;
}

std::string split_name(const Ggml& g, const std::string& prefix, int no, int count) {
  char b[4096];
  if (g.split_path) {
    const int n = g.split_path(b, sizeof b, prefix.c_str(), no, count);
    return std::string(b, size_t(n));
  }
  snprintf(b, sizeof b, "%s-%05d-of-%05d.gguf", prefix.c_str(), no + 1, count);
  return b;
}

// Points each split's tensors at the data and writes it.
bool write_split(const Ggml& g, const Split& s, const std::vector<TensorSpec>& specs, const std::string& path,
                 const std::map<std::string, std::string>& renamed = {}) {
  for (size_t i : s.tensors) {
    std::string name = specs[i].name;
    const auto r = renamed.find(name);
    g.set_tensor_data(s.ctx, r == renamed.end() ? name.c_str() : r->second.c_str(), specs[i].data.data());
  }
  if (!g.write(s.ctx, path.c_str(), false)) {
    fprintf(stderr, "ws-make-split-gguf: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

// --- An independent walk of a written file: where each key-value and tensor info starts --------

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> b;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return b;
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
  fclose(f);
  return b;
}

struct Layout {
  std::map<std::string, uint64_t> kv;      // key -> offset of its key-length field
  uint64_t kv_end = 0;                      // where the tensor infos begin
  std::map<std::string, uint64_t> tensor;  // name -> offset of its info
  std::map<std::string, uint64_t> tensor_index;
};

Layout walk(const std::vector<uint8_t>& b) {
  Layout l;
  size_t p = 8;
  auto u32 = [&](size_t at) { uint32_t v; memcpy(&v, b.data() + at, 4); return v; };
  auto u64 = [&](size_t at) { uint64_t v; memcpy(&v, b.data() + at, 8); return v; };
  const uint64_t n_tensors = u64(p), n_kv = u64(p + 8);
  p += 16;
  static const size_t kSize[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t at = p;
    const uint64_t klen = u64(p);
    const std::string key(reinterpret_cast<const char*>(b.data() + p + 8), size_t(klen));
    p += 8 + size_t(klen);
    const uint32_t type = u32(p);
    p += 4;
    if (type == 8) {
      p += 8 + size_t(u64(p));
    } else if (type == 9) {
      const uint32_t et = u32(p);
      const uint64_t count = u64(p + 4);
      p += 12;
      for (uint64_t k = 0; k < count; ++k) p += et == 8 ? 8 + size_t(u64(p)) : kSize[et];
    } else {
      p += kSize[type];
    }
    l.kv[key] = at;
  }
  l.kv_end = p;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const uint64_t at = p;
    const uint64_t nlen = u64(p);
    const std::string name(reinterpret_cast<const char*>(b.data() + p + 8), size_t(nlen));
    p += 8 + size_t(nlen);
    const uint32_t dims = u32(p);
    p += 4 + 8 * size_t(dims) + 4 + 8;
    l.tensor[name] = at;
    l.tensor_index[name] = i;
  }
  return l;
}

// --- Output ------------------------------------------------------------------------------------

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

struct Case {
  std::string name;         // directory under malformed/ (or "." for the valid models)
  std::string entry;        // the file the loader is opened with
  std::vector<std::string> files;  // every file written
  bool valid = false;
  std::string code, file, tensor;
  uint64_t offset = 0;
  bool has_found = false, has_expected = false;
  int64_t found = 0, expected = 0;
  int64_t tensor_index = -1;
  std::string detail;
  std::string same_as;      // valid: the unsplit file with the same tensors
  std::string foreign_file;  // valid: a split holding a key-value other than split.*
  uint64_t foreign_kvs = 0, foreign_offset = 0;
  std::string why;
};

bool ggml_reads(const Ggml& g, const std::string& path) {
  ggml_context* meta = nullptr;
  gguf_context* c = g.gguf_from_file(path.c_str(), GgufInitParams{true, &meta});
  if (c) g.gguf_free(c);
  if (meta) g.free_ctx(meta);
  return c != nullptr;
}

void usage() {
  fprintf(stderr, "usage: ws-make-split-gguf OUTDIR [--ggml libggml-base.so] [--llama libllama.so]\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, ggml_path, llama_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ggml" && i + 1 < argc) ggml_path = argv[++i];
    else if (a == "--llama" && i + 1 < argc) llama_path = argv[++i];
    else if (out.empty() && a[0] != '-') out = a;
    else return usage(), 2;
  }
  if (out.empty()) return usage(), 2;
  const std::string bins = std::string(WS_SOURCE_DIR) + "/bench/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/";
  if (ggml_path.empty()) ggml_path = bins + "libggml-base.so";
  if (llama_path.empty()) llama_path = bins + "libllama.v0.5.0.so";
  Ggml g;
  if (!load_ggml(ggml_path, llama_path, &g)) return 1;
  mkdir(out.c_str(), 0755);
  mkdir((out + "/malformed").c_str(), 0755);

  const std::vector<TensorSpec> specs = model_tensors();
  const Tensors tensors = make_tensors(g, specs);
  gguf_context* model = g.gguf_empty();
  set_model_kvs(g, model);
  for (const TensorSpec& s : specs) g.add_tensor(model, tensors.by_name.at(s.name));
  std::vector<Case> cases;

  // The whole model in one file, then split three ways as gguf-split splits it.
  {
    for (const TensorSpec& s : specs) g.set_tensor_data(model, s.name.c_str(), s.data.data());
    if (!g.write(model, (out + "/tiny.gguf").c_str(), false)) return 1;
    Case c;
    c.name = "tiny";
    c.entry = "tiny.gguf";
    c.files = {"tiny.gguf"};
    c.valid = true;
    c.why = "the unsplit model (the source the splits are cut from)";
    cases.push_back(c);
  }
  struct Way {
    const char* prefix;
    int max_tensors;
    bool no_tensor_first;
    const char* why;
  };
  const Way ways[] = {
      {"tiny", 2, false, "gguf-split --split-max-tensors 2: three splits of two tensors"},
      {"meta-first", 2, true, "gguf-split --split-max-tensors 2 --no-tensor-first-split: a metadata-only first split, then three"},
      {"whole", 8, false, "gguf-split --split-max-tensors 8: one split (split.count 1 is one whole model)"},
  };
  for (const Way& w : ways) {
    std::vector<Split> splits = split_model(g, model, specs, tensors, w.max_tensors, w.no_tensor_first);
    Case c;
    c.name = w.prefix;
    c.valid = true;
    c.same_as = "tiny.gguf";
    c.why = w.why;
    for (size_t i = 0; i < splits.size(); ++i) {
      const std::string name = split_name(g, w.prefix, int(i), int(splits.size()));
      if (!write_split(g, splits[i], specs, out + "/" + name)) return 1;
      c.files.push_back(name);
      g.gguf_free(splits[i].ctx);
    }
    c.entry = c.files[0];
    cases.push_back(c);
    if (splits.size() > 1) {  // any split is an entry too: the last one names the others
      Case d = c;
      d.name = std::string(w.prefix) + " (from its last split)";
      d.entry = c.files.back();
      d.why = "the same model opened at its last split";
      cases.push_back(d);
    }
  }

  // Malformed: the three-split model with one rule broken. `edit` changes the split contexts
  // before they are written; `after` may change the written files.
  struct Bad {
    const char* name = nullptr;
    const char* code = nullptr;
    int file = 0;  // the split the error is in (0-based)
    const char* why = nullptr;
    std::function<void(std::vector<Split>&)> edit;
    std::map<std::string, std::string> renamed;  // tensor renames (for the data lookup)
    const char* key = nullptr;        // the offset: this key-value of `file`
    const char* tensor = nullptr;     // ... or this tensor's info
    bool at_kv_end = false;           // ... or where its key-values end
    bool has_found = false, has_expected = false;
    int64_t found = 0, expected = 0;
    std::string entry_name;           // the first split's file name, when renamed
    int name_count = 0;               // name the files -of-<this> instead
    int drop = -1;                    // a split left out
    int not_gguf = -1;                // a split that is no GGUF file
    const char* detail = nullptr;
  };
  std::vector<Bad> bad;
  // One rule broken: the case's name, status, split, why; then what is changed and where the
  // offset points (a key-value of that split, a tensor's info, or the end of its key-values).
  auto add = [&](const char* name, const char* code, int file, const char* why,
                 std::function<void(std::vector<Split>&)> edit) -> Bad& {
    Bad b;
    b.name = name;
    b.code = code;
    b.file = file;
    b.why = why;
    b.edit = std::move(edit);
    bad.push_back(b);
    return bad.back();
  };
  auto values = [](Bad& b, const char* key, int64_t found, int64_t expected) {
    b.key = key;
    b.has_found = b.has_expected = true;
    b.found = found;
    b.expected = expected;
  };
  values(add("first-not-zero", "GgufSplitFirstNotZero", 0,
             "the file named -00001-of-00003 says split.no 1 (llama.cpp: \"illegal split file idx: 1 ..., model must be "
             "loaded with the first split\")",
             [&](std::vector<Split>& s) { g.set_u16(s[0].ctx, "split.no", 1); }),
         "split.no", 1, 0);
  values(add("no-mismatch", "GgufSplitNoMismatch", 1,
             "the second split says split.no 2 (llama.cpp: \"invalid split file idx: 2 (file: ...), expected 1\")",
             [&](std::vector<Split>& s) { g.set_u16(s[1].ctx, "split.no", 2); }),
         "split.no", 2, 1);
  add("no-missing", "GgufSplitNoMissing", 2,
      "the third split has no split.no (llama.cpp: \"missing key split.no in GGUF split ...\")",
      [&](std::vector<Split>& s) { g.remove_key(s[2].ctx, "split.no"); })
      .at_kv_end = true;
  values(add("no-type", "GgufSplitKeyType", 1,
             "the second split's split.no is a u32 (llama.cpp reads it with gguf_get_val_u16, which asserts the type)",
             [&](std::vector<Split>& s) {
               g.remove_key(s[1].ctx, "split.no");
               g.set_u32(s[1].ctx, "split.no", 1);
             }),
         "split.no", kGgufU32, kGgufU16);
  values(add("count-type", "GgufSplitKeyType", 0,
             "the splits' split.count is an i32 (llama.cpp's get_key<uint16_t>: \"key split.count has wrong type\")",
             [&](std::vector<Split>& s) {
               for (Split& x : s) {
                 g.remove_key(x.ctx, "split.count");
                 g.set_i32(x.ctx, "split.count", 3);
               }
             }),
         "split.count", kGgufI32, kGgufU16);
  values(add("count-differs", "GgufSplitCountMismatch", 1,
             "the second split says split.count 4 (a split of another split set; llama.cpp does not read it there)",
             [&](std::vector<Split>& s) { g.set_u16(s[1].ctx, "split.count", 4); }),
         "split.count", 4, 3);
  values(add("tensors-count", "GgufSplitTensorCountMismatch", 0,
             "split.tensors.count says 7 in every split, they hold 6 tensors (llama.cpp: \"corrupted model: 7 tensors "
             "expected but 6 found\")",
             [&](std::vector<Split>& s) {
               for (Split& x : s) g.set_i32(x.ctx, "split.tensors.count", 7);
             }),
         "split.tensors.count", 6, 7);
  add("tensors-count-missing", "GgufSplitTensorCountMissing", 0,
      "the first split has no split.tensors.count (llama.cpp: \"key not found in model: split.tensors.count\")",
      [&](std::vector<Split>& s) { g.remove_key(s[0].ctx, "split.tensors.count"); })
      .at_kv_end = true;
  values(add("tensors-count-differs", "GgufSplitTensorCountMismatch", 2,
             "the third split says split.tensors.count 5 (another split set's total; llama.cpp reads the first's only)",
             [&](std::vector<Split>& s) { g.set_i32(s[2].ctx, "split.tensors.count", 5); }),
         "split.tensors.count", 5, 6);
  {
    Bad& b = add("duplicate-tensor", "GgufSplitDuplicateTensor", 2,
                 "the third split's first tensor is named token_embd.weight, which the first split holds (llama.cpp: "
                 "\"invalid model: tensor 'token_embd.weight' is duplicated\")",
                 nullptr);
    b.renamed = {{"blk.1.ffn_up.weight", "token_embd.weight"}};
    b.tensor = "token_embd.weight";
  }
  {
    Bad& b = add("name-mismatch", "GgufSplitNameMismatch", 0,
                 "the first split renamed model.gguf: llama.cpp finds the other splits from -00001-of-00003.gguf "
                 "(\"invalid split file name\")",
                 nullptr);
    b.entry_name = "model.gguf";
    b.detail = "-00001-of-00003.gguf";
  }
  {
    Bad& b = add("name-count", "GgufSplitNameMismatch", 0,
                 "the files are named -of-00004 and split.count says 3 (llama_split_prefix fails)", nullptr);
    b.name_count = 4;
    b.detail = "-00001-of-00003.gguf";
  }
  add("missing", "GgufSplitMissing", 2, "the third split is not there (llama.cpp: \"failed to load GGUF split\")", nullptr)
      .drop = 2;
  add("not-gguf", "GgufSplitNotGguf", 1, "the second split is a safetensors file", nullptr).not_gguf = 1;

  for (const Bad& b : bad) {
    std::vector<Split> splits = split_model(g, model, specs, tensors, 2, false);
    for (const auto& r : b.renamed) {
      // Rebuild the split that holds the tensor with the other name (ggml names a tensor by its
      // ggml_tensor: a second tensor object under the new name).
      for (Split& s : splits) {
        for (size_t i : s.tensors) {
          if (specs[i].name != r.first) continue;
          gguf_context* c = g.gguf_empty();
          g.set_u16(c, "split.no", uint16_t(&s - &splits[0]));
          g.set_u16(c, "split.count", uint16_t(splits.size()));
          g.set_i32(c, "split.tensors.count", int32_t(specs.size()));
          for (size_t j : s.tensors) {
            ggml_tensor* x = tensors.by_name.at(specs[j].name);
            if (specs[j].name == r.first) {
              x = g.new_tensor(tensors.ctx, specs[j].type, int(specs[j].ne.size()), specs[j].ne.data());
              g.set_name(x, r.second.c_str());
            }
            g.add_tensor(c, x);
          }
          g.gguf_free(s.ctx);
          s.ctx = c;
          break;
        }
      }
    }
    if (b.edit) b.edit(splits);
    const std::string dir = out + "/malformed/" + b.name;
    mkdir(dir.c_str(), 0755);
    Case c;
    c.name = std::string("malformed/") + b.name;
    c.code = b.code;
    c.why = b.why;
    std::vector<std::string> names;
    const int count = int(splits.size());
    for (int i = 0; i < count; ++i)
      names.push_back(i == 0 && !b.entry_name.empty() ? b.entry_name : split_name(g, "model", i, b.name_count ? b.name_count : count));
    for (int i = 0; i < count; ++i) {
      if (i == b.drop) {
        g.gguf_free(splits[size_t(i)].ctx);
        continue;
      }
      const std::string path = dir + "/" + names[size_t(i)];
      if (i == b.not_gguf) {
        // A safetensors file (8-byte header length, "{}" padded) where the split should be.
        FILE* f = fopen(path.c_str(), "wb");
        const uint8_t st[16] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
        fwrite(st, 1, sizeof st, f);
        fclose(f);
      } else {
        if (!write_split(g, splits[size_t(i)], specs, path, b.renamed)) return 1;
      }
      c.files.push_back(names[size_t(i)]);
      g.gguf_free(splits[size_t(i)].ctx);
    }
    c.entry = names[0];
    c.file = names[size_t(b.file)];
    if (b.key || b.tensor || b.at_kv_end) {
      const Layout l = walk(read_file(dir + "/" + c.file));
      if (b.key) c.offset = l.kv.at(b.key);
      if (b.at_kv_end) c.offset = l.kv_end;
      if (b.tensor) {
        c.offset = l.tensor.at(b.tensor);
        c.tensor = b.tensor;
        c.tensor_index = int64_t(l.tensor_index.at(b.tensor));
      }
    }
    c.has_found = b.has_found;
    c.has_expected = b.has_expected;
    c.found = b.found;
    c.expected = b.expected;
    if (b.detail) c.detail = b.detail;
    cases.push_back(c);
  }

  // Valid, with a fact to report: a later split holding a key-value other than split.* (llama.cpp
  // reads only the first split's; weightstream hands it on as that file's and counts it).
  {
    std::vector<Split> splits = split_model(g, model, specs, tensors, 2, false);
    g.set_str(splits[1].ctx, "general.name", "a name in the second split");
    const std::string dir = out + "/malformed/foreign-kv";
    mkdir(dir.c_str(), 0755);
    Case c;
    c.name = "malformed/foreign-kv";
    c.valid = true;
    c.same_as = "tiny.gguf";
    c.why = "the second split also holds general.name: reported (split_foreign_kvs), not merged, not an error";
    for (size_t i = 0; i < splits.size(); ++i) {
      const std::string name = split_name(g, "model", int(i), int(splits.size()));
      if (!write_split(g, splits[i], specs, dir + "/" + name)) return 1;
      c.files.push_back(name);
      g.gguf_free(splits[i].ctx);
    }
    c.entry = c.files[0];
    c.foreign_file = c.files[1];
    c.foreign_kvs = 1;
    c.foreign_offset = walk(read_file(dir + "/" + c.files[1])).kv.at("general.name");
    cases.push_back(c);
  }

  // expected.json
  std::string j = "{\n  \"generator\": \"ws-make-split-gguf (tools/ggml-fixtures/make_split_gguf.cpp)\",\n";
  j += "  \"ggml\": " + json_str(std::string(g.version()) + " (" + g.commit() + ")") + ",\n";
  j += "  \"names_by\": " + json_str(g.split_path ? "llama_split_path (libllama)" : "\"%s-%05d-of-%05d.gguf\"") + ",\n";
  j += "  \"cases\": [\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string dir = c.name.rfind("malformed/", 0) == 0 ? c.name : ".";
    j += "    {\"case\": " + json_str(c.name) + ", \"dir\": " + json_str(dir) + ", \"entry\": " + json_str(c.entry) +
         ", \"files\": [";
    for (size_t k = 0; k < c.files.size(); ++k) {
      j += (k ? ", " : "") + json_str(c.files[k]);
    }
    j += "], \"ggml_reads\": [";
    for (size_t k = 0; k < c.files.size(); ++k) j += std::string(k ? ", " : "") + (ggml_reads(g, out + "/" + dir + "/" + c.files[k]) ? "true" : "false");
    j += "],\n     \"valid\": " + std::string(c.valid ? "true" : "false");
    if (c.valid) {
      j += ", \"tensors\": " + std::to_string(specs.size());
      if (!c.same_as.empty()) j += ", \"same_as\": " + json_str(c.same_as);
      if (!c.foreign_file.empty())
        j += ", \"foreign_file\": " + json_str(c.foreign_file) + ", \"foreign_kvs\": " + std::to_string(c.foreign_kvs) +
             ", \"foreign_offset\": " + std::to_string(c.foreign_offset);
    } else {
      j += ", \"code\": " + json_str(c.code) + ", \"file\": " + json_str(c.file) + ", \"offset\": " + std::to_string(c.offset);
      if (!c.tensor.empty()) j += ", \"tensor\": " + json_str(c.tensor) + ", \"tensor_index\": " + std::to_string(c.tensor_index);
      if (c.has_found) j += ", \"found\": " + std::to_string(c.found);
      if (c.has_expected) j += ", \"expected\": " + std::to_string(c.expected);
      if (!c.detail.empty()) j += ", \"detail\": " + json_str(c.detail);
    }
    j += ",\n     \"why\": " + json_str(c.why) + "}" + (i + 1 < cases.size() ? "," : "") + "\n";
  }
  j += "  ]\n}\n";
  FILE* f = fopen((out + "/expected.json").c_str(), "wb");
  if (!f) return 1;
  fwrite(j.data(), 1, j.size(), f);
  fclose(f);
  g.gguf_free(model);
  g.free_ctx(tensors.ctx);
  printf("ws-make-split-gguf: %zu cases in %s (%s, names by %s)\n", cases.size(), out.c_str(), g.version(),
         g.split_path ? "llama_split_path" : "printf");
  return 0;
}

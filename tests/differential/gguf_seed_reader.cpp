// Implements gguf_seed_reader.h: a plain bounds-checked walk over the header.
#include "gguf_seed_reader.h"

#include <string.h>

namespace wsdiff {

namespace {

class Cursor {
 public:
  explicit Cursor(const std::string& b) : b_(b) {}
  bool u(uint32_t width, uint64_t* v) {
    if (b_.size() - at_ < width) return false;
    *v = 0;
    for (uint32_t i = 0; i < width; ++i) *v |= uint64_t(uint8_t(b_[at_ + i])) << (8 * i);
    at_ += width;
    return true;
  }
  bool str(std::string* s) {
    uint64_t n;
    if (!u(8, &n) || n > b_.size() - at_) return false;
    s->assign(b_, at_, n);
    at_ += n;
    return true;
  }
  uint64_t left() const { return b_.size() - at_; }

 private:
  const std::string& b_;
  uint64_t at_ = 0;
};

bool read_kv(Cursor& c, wsgguf::Kv* k) {
  uint64_t type;
  if (!c.str(&k->key) || !c.u(4, &type)) return false;
  k->type = uint32_t(type);
  if (type == wsgguf::kString) return c.str(&k->str);
  if (type != wsgguf::kArray) {
    uint32_t w = wsgguf::value_size(k->type);
    return w != 0 && c.u(w, &k->raw);
  }
  uint64_t elem, n;
  if (!c.u(4, &elem) || !c.u(8, &n)) return false;
  k->elem_type = uint32_t(elem);
  if (elem == wsgguf::kString) {
    if (n > c.left() / 8) return false;
    k->strs.resize(n);
    for (std::string& s : k->strs)
      if (!c.str(&s)) return false;
    return true;
  }
  uint32_t w = wsgguf::value_size(k->elem_type);
  if (w == 0 || n > c.left() / w) return false;
  k->elems.resize(n);
  for (uint64_t& e : k->elems)
    if (!c.u(w, &e)) return false;
  return true;
}

}  // namespace

bool read_seed(const std::string& bytes, wsgguf::Spec* spec) {
  Cursor c(bytes);
  uint64_t magic, version, n_tensors, n_kv;
  if (!c.u(4, &magic) || magic != 0x46554747 || !c.u(4, &version) || !c.u(8, &n_tensors) ||
      !c.u(8, &n_kv))
    return false;
  // Every KV takes at least 13 bytes and every tensor info 24: larger counts are malformed.
  if (n_kv > c.left() / 13 || n_tensors > c.left() / 24) return false;
  *spec = wsgguf::Spec();
  spec->version = uint32_t(version);
  spec->kvs.resize(n_kv);
  for (wsgguf::Kv& k : spec->kvs) {
    if (!read_kv(c, &k)) return false;
    if (k.key == "general.alignment" && k.type == wsgguf::kU32 && k.raw && !(k.raw & (k.raw - 1)))
      spec->alignment = uint32_t(k.raw);
    if (k.key == "general.architecture" && k.type == wsgguf::kString && k.str.compare(0, 6, "bitnet") == 0)
      spec->bitnet = true;
  }
  spec->tensors.resize(n_tensors);
  for (wsgguf::Tensor& t : spec->tensors) {
    uint64_t n_dims, type, offset;
    if (!c.str(&t.name) || !c.u(4, &n_dims) || n_dims > 16) return false;
    t.ne.resize(n_dims);
    for (uint64_t& d : t.ne)
      if (!c.u(8, &d)) return false;
    if (!c.u(4, &type) || !c.u(8, &offset)) return false;
    t.type = uint32_t(type);
  }
  return true;
}

}  // namespace wsdiff

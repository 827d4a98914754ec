// Implements gguf_mutator.h.
#include "gguf_mutator.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf_seed_reader.h"

namespace wsdiff {

namespace {

using wsgguf::Field;

constexpr uint64_t kMaxMutantBytes = 4u << 20;

// splitmix64: a mutant's random stream from (campaign seed, index).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(uint32_t percent) { return below(100) < percent; }
  template <typename T, size_t N>
  const T& pick(const T (&a)[N]) { return a[below(N)]; }

 private:
  uint64_t s_;
};

std::string printable(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '\\') o += char(c);
    else {
      char b[8];
      snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    }
  }
  return o;
}

std::string nul_str(const char* s, size_t n) { return std::string(s, n); }

// Spellings of the alignment key: ggml finds it with strcmp, so what follows a NUL is invisible to
// it; case and trailing bytes are not.
const std::string kAlignmentKeys[] = {
    "general.alignment",         "general.alignment",           nul_str("general.alignment\0", 18),
    nul_str("general.alignment\0\0", 19), nul_str("general.alignment\0x", 19), nul_str("\0general.alignment", 18),
    "general.alignmen",          "general.alignment ",          "General.alignment",
    "GENERAL.ALIGNMENT",         "general.alignment.x",
};
const uint64_t kAlignmentValues[] = {0, 1, 2, 3, 8, 16, 31, 32, 48, 64, 128, 256, 4096,
                                     1u << 20, 1u << 31, 0xFFFFFFFFu, 0x100000000ull};
const std::string kArchitectures[] = {
    "llama", "bitnet", "bitnet-b1.58", "bitnet-25", "BitNet", "bitnetx", "", "qwen2",
    nul_str("llama\0bitnet", 12), nul_str("bitnet\0", 7), nul_str("bit\0net", 7),
};
// Tensor type ids: upstream ones, the retired ones, BitNet's 36..39, unknown ones.
const uint32_t kTypeIds[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 20, 23, 24, 27, 28,
                             29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
                             64, 1000, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu};
const uint64_t kDims[] = {0, 1, 2, 3, 4, 16, 31, 32, 33, 48, 64, 128, 255, 256, 1024,
                          1ull << 31, 1ull << 32, (1ull << 32) + 1, 1ull << 40, 1ull << 62,
                          (1ull << 63) - 1, 1ull << 63, ~0ull, 3ull << 61};

void set_arch_flag(wsgguf::Spec* s, Rng& r) {
  s->bitnet = false;
  for (const wsgguf::Kv& k : s->kvs)
    if (k.key == "general.architecture" && k.type == wsgguf::kString && k.str.compare(0, 6, "bitnet") == 0)
      s->bitnet = true;
  if (r.chance(5)) s->bitnet = !s->bitnet;  // laid out with the other type table
}

// ---- structural mutations, on the description ----

std::string mutate_alignment(wsgguf::Spec* s, Rng& r) {
  const std::string& key = r.pick(kAlignmentKeys);
  uint64_t v = r.chance(60) ? r.pick(kAlignmentValues) : (uint64_t(1) << r.below(12));
  uint32_t types[] = {wsgguf::kU32, wsgguf::kU32, wsgguf::kU32, wsgguf::kU64, wsgguf::kI32,
                      wsgguf::kU16, wsgguf::kString, wsgguf::kArray};
  uint32_t type = r.pick(types);
  wsgguf::Kv k = wsgguf::kv_uint(key, wsgguf::kU32, v & 0xFFFFFFFFu);
  if (type == wsgguf::kString) k = wsgguf::kv_str(key, std::to_string(v));
  else if (type == wsgguf::kArray) k = wsgguf::kv_arr(key, wsgguf::kU32, {v & 0xFFFFFFFFu});
  else if (type != wsgguf::kU32) k = wsgguf::kv_uint(key, type, type == wsgguf::kU16 ? v & 0xFFFF : v);
  // Replace an alignment KV (any spelling) or insert one anywhere; now and then a second one.
  size_t at = r.below(s->kvs.size() + 1);
  bool replaced = false;
  for (size_t i = 0; i < s->kvs.size() && !replaced; ++i)
    if (s->kvs[i].key.find("lignment") != std::string::npos && r.chance(70)) s->kvs[i] = k, replaced = true;
  if (!replaced) s->kvs.insert(s->kvs.begin() + long(at), k);
  if (r.chance(15)) s->kvs.insert(s->kvs.begin() + long(r.below(s->kvs.size() + 1)),
                                  wsgguf::kv_uint(r.pick(kAlignmentKeys), wsgguf::kU32, uint64_t(1) << r.below(8)));
  // The layout: as a reader that took this value would lay the file out, or the default.
  uint64_t layout = 32;
  if (r.chance(60) && v && !(v & (v - 1)) && v <= 4096) layout = v;
  else if (r.chance(20)) layout = uint64_t(1) << r.below(8);
  s->alignment = uint32_t(layout);
  return "alignment-kv(" + printable(key) + "=" + std::to_string(v) + " type " + std::to_string(type) +
         ", layout " + std::to_string(layout) + ")";
}

// A string of the file that a reader compares or looks up: a key, a tensor name, a string value.
std::string* pick_string(wsgguf::Spec* s, Rng& r, std::string* what) {
  for (int tries = 0; tries < 8; ++tries) {
    switch (r.below(5)) {
      case 0:
        if (s->kvs.empty()) break;
        *what = "key";
        return &s->kvs[r.below(s->kvs.size())].key;
      case 1:
      case 2:
        if (s->tensors.empty()) break;
        *what = "name";
        return &s->tensors[r.below(s->tensors.size())].name;
      case 3:
        for (wsgguf::Kv& k : s->kvs)
          if (k.key == "general.architecture" && k.type == wsgguf::kString) {
            *what = "architecture";
            return &k.str;
          }
        break;
      default: {
        if (s->kvs.empty()) break;
        wsgguf::Kv& k = s->kvs[r.below(s->kvs.size())];
        if (k.type == wsgguf::kString) {
          *what = "value";
          return &k.str;
        }
        if (k.type == wsgguf::kArray && k.elem_type == wsgguf::kString && !k.strs.empty()) {
          *what = "array string";
          return &k.strs[r.below(k.strs.size())];
        }
        break;
      }
    }
  }
  return nullptr;
}

std::string mutate_nul(wsgguf::Spec* s, Rng& r) {
  std::string what;
  std::string* str = pick_string(s, r, &what);
  if (!str) return "";
  size_t at = r.below(str->size() + 1);
  switch (r.below(3)) {
    case 0: str->insert(at, 1, '\0'); break;
    case 1:
      if (at < str->size()) (*str)[at] = '\0';
      else str->push_back('\0');
      break;
    default: *str += nul_str("\0", 1) + std::string(1 + r.below(3), char('a' + r.below(26))); break;
  }
  return "nul-in-" + what + "@" + std::to_string(at);
}

std::string mutate_duplicate(wsgguf::Spec* s, Rng& r) {
  bool names = !s->tensors.empty() && (s->kvs.size() < 2 || r.chance(50));
  size_t n = names ? s->tensors.size() : s->kvs.size();
  if (n == 0) return "";
  size_t i = r.below(n), j = r.below(n);
  std::string& a = names ? s->tensors[i].name : s->kvs[i].key;
  std::string& b = names ? s->tensors[j].name : s->kvs[j].key;
  std::string how;
  switch (r.below(4)) {
    case 0: b = a; how = "same"; break;
    case 1: a += nul_str("\0x", 2); b = a.substr(0, a.size() - 1) + "y"; how = "equal-before-nul"; break;
    case 2:
      b = a;
      for (char& c : b) c = char(toupper(c));
      how = "other-case";
      break;
    default:
      if (names) s->tensors.push_back(s->tensors[i]);
      else s->kvs.push_back(s->kvs[i]);
      how = "copied";
      break;
  }
  return std::string(names ? "duplicate-name(" : "duplicate-key(") + how + ")";
}

std::string mutate_shape(wsgguf::Spec* s, Rng& r) {
  if (s->tensors.empty()) return "";
  wsgguf::Tensor& t = s->tensors[r.below(s->tensors.size())];
  switch (r.below(4)) {
    case 0: t.ne.resize(r.below(6), r.chance(50) ? 1 : r.pick(kDims)); break;
    case 1:
      if (!t.ne.empty()) t.ne[r.below(t.ne.size())] = r.pick(kDims);
      break;
    case 2: {  // a product that wraps in 64 bits: [2^32, 2^32], [2^40, 2^40, 0], ...
      uint64_t a = uint64_t(1) << (31 + r.below(3)), b = uint64_t(1) << (32 + r.below(3));
      t.ne = {a, b};
      if (r.chance(40)) t.ne.push_back(r.chance(50) ? 0 : 1);
      if (r.chance(30)) std::swap(t.ne[0], t.ne[1]);
      break;
    }
    default:
      if (!t.ne.empty()) t.ne[0] = t.ne[0] ? t.ne[0] + (r.chance(50) ? 1 : t.ne[0]) : 32;
      break;
  }
  return "shape(" + printable(t.name) + ", " + std::to_string(t.ne.size()) + " dims)";
}

std::string mutate_type(wsgguf::Spec* s, Rng& r) {
  if (s->tensors.empty()) return "";
  wsgguf::Tensor& t = s->tensors[r.below(s->tensors.size())];
  t.type = r.chance(80) ? r.pick(kTypeIds) : uint32_t(r.below(48));
  if (r.chance(50) && !t.ne.empty()) t.ne[0] = uint64_t(256) * (1 + r.below(4));  // whole blocks
  return "type(" + printable(t.name) + "=" + std::to_string(t.type) + ")";
}

std::string mutate_architecture(wsgguf::Spec* s, Rng& r) {
  const std::string& v = r.pick(kArchitectures);
  bool found = false;
  for (wsgguf::Kv& k : s->kvs)
    if (k.key == "general.architecture") k = wsgguf::kv_str(k.key, v), found = true;
  if (!found) s->kvs.insert(s->kvs.begin() + long(r.below(s->kvs.size() + 1)), wsgguf::kv_str("general.architecture", v));
  if (r.chance(40) && !s->tensors.empty()) {
    static const uint32_t bitnet_ids[] = {36, 37, 38, 39};
    s->tensors[r.below(s->tensors.size())].type = r.pick(bitnet_ids);
  }
  return "architecture(" + printable(v) + ")";
}

std::string mutate_kvs_and_tensors(wsgguf::Spec* s, Rng& r) {
  switch (r.below(6)) {
    case 0:
      if (s->kvs.empty()) return "";
      s->kvs.erase(s->kvs.begin() + long(r.below(s->kvs.size())));
      return "drop-kv";
    case 1:
      if (s->tensors.empty()) return "";
      s->tensors.erase(s->tensors.begin() + long(r.below(s->tensors.size())));
      return "drop-tensor";
    case 2:
      if (s->tensors.size() < 2) return "";
      std::swap(s->tensors[r.below(s->tensors.size())], s->tensors[r.below(s->tensors.size())]);
      return "swap-tensors";
    case 3: {  // a scalar KV read as another scalar type (the writer writes its raw bits wider/narrower)
      if (s->kvs.empty()) return "";
      wsgguf::Kv& k = s->kvs[r.below(s->kvs.size())];
      if (k.type == wsgguf::kString || k.type == wsgguf::kArray) return "";
      static const uint32_t scalars[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12};
      k.type = r.pick(scalars);
      return "kv-type(" + printable(k.key) + "=" + std::to_string(k.type) + ")";
    }
    case 4:
      s->version = r.chance(50) ? 2 : 3;
      s->tail_padding = r.chance(50);
      return "version-" + std::to_string(s->version) + (s->tail_padding ? "-tail-padding" : "");
    default: {  // a tensor that holds nothing
      if (s->tensors.empty()) return "";
      wsgguf::Tensor& t = s->tensors[r.below(s->tensors.size())];
      if (t.ne.empty()) t.ne.push_back(0);
      else t.ne[r.below(t.ne.size())] = 0;
      return "empty-tensor(" + printable(t.name) + ")";
    }
  }
}

std::string mutate_structure(wsgguf::Spec* s, Rng& r) {
  switch (r.below(9)) {
    case 0: case 1: return mutate_alignment(s, r);
    case 2: return mutate_nul(s, r);
    case 3: return mutate_duplicate(s, r);
    case 4: return mutate_shape(s, r);
    case 5: return mutate_type(s, r);
    case 6: return mutate_architecture(s, r);
    default: return mutate_kvs_and_tensors(s, r);
  }
}

// ---- byte-level mutations, on the written file ----

bool numeric_field(Field f) {
  switch (f) {
    case Field::Version: case Field::TensorCount: case Field::KvCount: case Field::KeyLen:
    case Field::ValueType: case Field::Scalar: case Field::StrLen: case Field::ArrType:
    case Field::ArrCount: case Field::NameLen: case Field::NDims: case Field::Dim: case Field::Type:
    case Field::Offset:
      return true;
    default:
      return false;
  }
}

void put_le(std::string* b, uint64_t at, uint64_t v, uint64_t width) {
  for (uint64_t i = 0; i < width && at + i < b->size(); ++i) (*b)[at + i] = char((v >> (8 * i)) & 0xFF);
}

// A count, length, type or offset set to a value at one of its boundaries.
std::string patch_field(wsgguf::Built* b, Rng& r) {
  std::vector<const wsgguf::FieldAt*> fields;
  for (const wsgguf::FieldAt& f : b->fields)
    if (numeric_field(f.kind)) fields.push_back(&f);
  if (fields.empty()) return "";
  const wsgguf::FieldAt& f = *fields[r.below(fields.size())];
  uint64_t width = f.end - f.begin, v = f.value, rest = b->bytes.size() - f.end;
  uint64_t mask = width >= 8 ? ~0ull : (uint64_t(1) << (8 * width)) - 1;
  const uint64_t candidates[] = {0, 1, 2, v - 1, v + 1, v * 2, rest, rest + 1, rest / 8, rest / 8 + 1,
                                 uint64_t(1) << 30, (uint64_t(1) << 30) + 1, 0xFFFFFFFFull, 1ull << 32,
                                 mask, mask >> 1, (mask >> 1) + 1, 9, 12, 13, 63, 64, 32};
  uint64_t nv = r.pick(candidates) & mask;
  put_le(&b->bytes, f.begin, nv, width);
  return std::string("field(") + wsgguf::field_name(f.kind) + "@" + std::to_string(f.begin) + "=" +
         std::to_string(nv) + ")";
}

// The end of the header, roughly: where the written data section starts (or the whole file).
uint64_t header_end(const wsgguf::Built* b, const std::string& bytes) {
  if (b && b->data_start) return std::min<uint64_t>(b->data_start + 32, bytes.size());
  return std::min<uint64_t>(bytes.size(), 4096);
}

std::string mutate_bytes(std::string* bytes, const wsgguf::Built* b, Rng& r) {
  if (bytes->empty()) return "";
  uint64_t head = std::max<uint64_t>(1, header_end(b, *bytes));
  switch (r.below(7)) {
    case 0: {  // flip bits
      uint64_t n = 1 + r.below(4);
      for (uint64_t i = 0; i < n; ++i) (*bytes)[r.below(head)] ^= char(1u << r.below(8));
      return "flip-bits(" + std::to_string(n) + ")";
    }
    case 1: {  // a byte set to a boundary value
      uint64_t at = r.below(head);
      static const uint8_t values[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, 0x09, 0x0D, 0x20, 0x40};
      (*bytes)[at] = char(r.pick(values));
      return "set-byte@" + std::to_string(at);
    }
    case 2: {  // truncate: anywhere, at a field boundary, or near the end
      uint64_t at = r.below(bytes->size());
      if (b && !b->fields.empty() && r.chance(50)) {
        const wsgguf::FieldAt& f = b->fields[r.below(b->fields.size())];
        at = r.chance(50) ? f.begin : f.end;
      } else if (r.chance(30)) {
        at = bytes->size() - std::min<uint64_t>(bytes->size(), 1 + r.below(64));
      }
      bytes->resize(std::min<uint64_t>(at, bytes->size()));
      return "truncate@" + std::to_string(bytes->size());
    }
    case 3: {  // bytes after the end
      uint64_t n = 1 + r.below(r.chance(50) ? 8 : 128);
      bool zeros = r.chance(60);
      for (uint64_t i = 0; i < n; ++i) bytes->push_back(zeros ? '\0' : char(r.below(256)));
      return "append(" + std::to_string(n) + ")";
    }
    case 4: {  // insert or delete bytes in the header
      uint64_t at = r.below(head), n = 1 + r.below(8);
      if (r.chance(50)) bytes->insert(at, std::string(n, r.chance(50) ? '\0' : char(r.below(256))));
      else bytes->erase(at, n);
      return "splice@" + std::to_string(at);
    }
    default: {  // an 8-byte-aligned word set to a boundary value (the fields of a seed not described)
      uint64_t at = r.below(head) & ~uint64_t(7);
      static const uint64_t words[] = {0, 1, ~0ull, 1ull << 63, 1ull << 32, 1ull << 30, 0x7FFFFFFFFFFFFFFFull};
      put_le(bytes, at, r.pick(words), 8);
      return "word@" + std::to_string(at);
    }
  }
}

}  // namespace

std::vector<Seed> load_seeds(const std::vector<std::string>& paths, std::string* err) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const fs::directory_entry& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".gguf") in_dir.push_back(e.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      *err = "no such seed file or directory: " + p;
      return {};
    }
  }
  std::vector<Seed> seeds;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    Seed s;
    s.name = f;
    s.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    s.described = read_seed(s.bytes, &s.spec);
    seeds.push_back(std::move(s));
  }
  if (seeds.empty()) *err = "no seed files";
  return seeds;
}

Mutant make_mutant(const std::vector<Seed>& seeds, uint64_t campaign_seed, uint64_t index) {
  Rng r(campaign_seed * 0x2545F4914F6CDD1Dull + index);
  const Seed& seed = seeds[r.below(seeds.size())];
  Mutant m;
  m.what = seed.name.substr(seed.name.rfind('/') + 1) + ":";
  wsgguf::Built built;
  bool have_built = false;
  if (seed.described && r.chance(85)) {
    wsgguf::Spec spec = seed.spec;
    uint64_t n = 1 + (r.chance(30) ? 1 : 0);
    for (uint64_t i = 0; i < n; ++i) {
      std::string w = mutate_structure(&spec, r);
      if (!w.empty()) m.what += " " + w;
    }
    set_arch_flag(&spec, r);
    if (spec.alignment == 0) spec.alignment = 32;
    built = wsgguf::build(spec);
    have_built = true;
    m.bytes = built.bytes;
    if (r.chance(25)) m.what += " " + patch_field(&built, r), m.bytes = built.bytes;
  } else {
    m.bytes = seed.bytes;
  }
  uint64_t byte_ops = have_built ? (r.chance(35) ? 1 : 0) : 1 + r.below(2);
  for (uint64_t i = 0; i < byte_ops; ++i) m.what += " " + mutate_bytes(&m.bytes, have_built ? &built : nullptr, r);
  if (m.bytes.size() > kMaxMutantBytes) {
    m.bytes.resize(kMaxMutantBytes);
    m.what += " cut-to-4MiB";
  }
  return m;
}

}  // namespace wsdiff

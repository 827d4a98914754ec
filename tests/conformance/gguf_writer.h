// A small GGUF writer for the tests: builds files from a description and records where every
// field went, so expected offsets come from the bytes written, never from the reader under test.
//
// Deliberately independent of the library (the corpus generator does not link it): it has its own
// GGML type table (FORMATS.md §5) and its own layout arithmetic. Malformed inputs are made by
// building a valid file and then patching a recorded field, cutting the bytes, or appending.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

namespace wsgguf {

// GGUF value types (FORMATS.md §5).
enum ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8,
  kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
// Bytes of one fixed-size value; 0 for strings and arrays.
uint32_t value_size(uint32_t type);
const char* value_type_name(uint32_t type);  // gguf-py's names: "UINT8" ... "FLOAT64"

// GGML tensor types as FORMATS.md §5 lists them. kind: 0 unknown, 1 retired, 2 blocks, 3 I2_S.
struct GgmlType {
  const char* name = "?";
  int kind = 0;
  uint64_t block_elems = 0, block_bytes = 0;
};
GgmlType ggml_type(uint32_t id, bool bitnet);
// Byte size of `elements` elements; false for unknown/retired types or on overflow. The caller
// checks elements % block_elems.
bool ggml_bytes(const GgmlType& t, uint64_t elements, uint64_t* out);

// One key-value. Scalars keep their raw little-endian bits in `raw`; arrays their elements in
// `elems` (numeric, raw bits) or `strs` (strings).
struct Kv {
  std::string key;
  uint32_t type = kU8;
  uint64_t raw = 0;
  std::string str;
  uint32_t elem_type = kU8;
  std::vector<uint64_t> elems;
  std::vector<std::string> strs;
};
Kv kv_uint(const std::string& key, uint32_t type, uint64_t v);  // U8/U16/U32/U64/Bool
Kv kv_int(const std::string& key, uint32_t type, int64_t v);    // I8/I16/I32/I64
Kv kv_f32(const std::string& key, float v);
Kv kv_f64(const std::string& key, double v);
Kv kv_str(const std::string& key, const std::string& v);
Kv kv_arr(const std::string& key, uint32_t elem_type, const std::vector<uint64_t>& raw_elems);
Kv kv_arr_str(const std::string& key, const std::vector<std::string>& v);

struct Tensor {
  std::string name;
  uint32_t type = 0;                // GGML type id
  std::vector<uint64_t> ne;         // ggml order, ne[0] first (raw u64: negative dims allowed)
  bool override_offset = false;     // write `offset` instead of the running padded sum
  uint64_t offset = 0;
  uint64_t data_bytes = 0;          // bytes of data written for it (set by the layout)
};

struct Spec {
  uint32_t version = 3;
  std::vector<Kv> kvs;
  std::vector<Tensor> tensors;
  uint32_t alignment = 32;     // layout alignment (say so in a general.alignment KV as well)
  bool bitnet = false;         // size 36..39 as the BitNet fork does
  bool tail_padding = false;   // pad the last tensor's data to the alignment too
  // Counts as written (default: the real ones).
  bool override_counts = false;
  uint64_t n_tensors = 0, n_kv = 0;
};

// Where each field of a built file is. `index` is the KV or tensor index (-1 for file fields),
// `elem` the array element for element fields.
enum class Field {
  Magic, Version, TensorCount, KvCount,
  KeyLen, Key, ValueType, Scalar, StrLen, StrBytes, ArrType, ArrCount, ArrElem,
  NameLen, Name, NDims, Dim, Type, Offset,
  DataPadding,  // between the tensor infos and the first tensor's data
  Gap,          // padding between two tensors' data (belongs to the next tensor)
  Data, TailPadding,
};
const char* field_name(Field f);

struct FieldAt {
  Field kind;
  uint64_t begin, end;  // [begin, end) in the file
  int index = -1;
  int64_t elem = -1;
  uint64_t value = 0;       // the field's value (lengths, counts, types, ...)
  uint32_t elem_type = 0;   // ArrCount: the array's element type
};

struct Built {
  std::string bytes;
  std::vector<FieldAt> fields;  // file order
  std::vector<uint64_t> kv_offsets, ti_offsets;
  std::vector<uint64_t> tensor_begin, tensor_bytes;  // relative to data_start
  uint64_t infos_end = 0, data_start = 0, data_end = 0;  // data_end: the last tensor's end

  // The n-th (0-based) field of `kind` for KV/tensor `index` (-1: any index); aborts if absent.
  const FieldAt& field(Field kind, int index = -1, int64_t elem = -1) const;
  // Overwrites the field's bytes with `v` (little-endian, the field's width) and its value.
  void patch(Field kind, int index, uint64_t v, int64_t elem = -1);
};

// Lays out and writes `spec`: tensor data is a deterministic pattern, padding is zeros.
Built build(const Spec& spec);

// Deterministic non-constant bytes (tensor data), different per tensor.
std::string pattern(uint64_t n, uint32_t salt);

}  // namespace wsgguf

// weightstream — logical weights: a packed tensor and its companions, seen as one weight.
//
//   ws::LogicalWeight storage[256];
//   ws::LogicalModel m(storage, 256);
//   m.add_table(&reader.tensors(), reader.data_start());   // one per shard or blob
//   if (m.build_mlx(&config) != ws::Status::Ok) ... m.error() names the weight
//   for (uint32_t i = 0; i < m.weight_count(); ++i) {
//     const ws::LogicalWeight& w = m.weight(i);          // name, mode, bits, group, shape
//     ws::DequantSpec spec = w.spec();                    // fill spec.scales / .biases, decode
//   }
//
// MLX (FORMATS.md §2): `<p>.weight` U32 + `<p>.scales` (+ `<p>.biases` for affine); params from
// config.json (MlxQuantConfig), else from `__metadata__` keys "bits"/"group_size"/"mode", else from
// the shapes when exactly one (mode, bits, group) fits. Ollama (§3): `{name}` + `{name}.scale`
// (+ `.bias`, `.global_scale`), params from `__metadata__` quant_type / group_size, per tensor or
// per blob. Every other tensor (a linear's `.bias`, norms, embeddings) is a plain weight. Tables
// may come from several shards or blobs: companions are looked up across all of them, so a model
// split anywhere is one logical model. Nothing allocates: weights live in the caller's storage.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/mlx_config.h"
#include "weightstream/quant_params.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

enum class Convention : uint8_t { Plain, Mlx, Ollama };
const char* convention_name(Convention c);

// A tensor of one of the model's tables.
struct TensorRef {
  uint32_t table = kNoTensor;
  uint32_t index = kNoTensor;
  bool present() const { return table != kNoTensor; }
};

enum class PieceRole : uint8_t { Packed, Scales, Biases, GlobalScale };
constexpr uint32_t kPieceRoles = 4;
const char* piece_role_name(PieceRole r);

constexpr uint32_t kMaxLogicalRank = 4;

struct LogicalWeight {
  StrView name;                 // the packed (or plain) tensor's name
  Convention convention = Convention::Plain;
  QuantParams params;           // mode None for a plain tensor
  QuantFormat format = QuantFormat::F32;
  bool decodable = false;       // plain tensors of integer dtypes have no decoder
  DType scale_dtype = DType::BF16;
  TensorRef piece[kPieceRoles];  // by PieceRole; absent ones are !present()
  uint32_t rank = 0;
  uint64_t shape[kMaxLogicalRank] = {};  // logical (unpacked) shape
  uint64_t elements = 0;
  bool global_scale_is_ollama = false;

  const TensorRef& ref(PieceRole r) const { return piece[uint32_t(r)]; }
  // A ready spec; the caller sets scales/biases (and global_scale from the F32 scalar's bytes,
  // with has_global_scale) from the companion bytes it kept, and input_offset if it wants
  // absolute error offsets.
  DequantSpec spec() const;
};

class LogicalModel {
 public:
  static constexpr uint32_t kMaxTables = 64;

  LogicalModel(LogicalWeight* storage, uint32_t capacity);
  // Adds one validated table (a shard or a blob); it must outlive the model. `data_start` is the
  // absolute offset of its data section (Reader::data_start()), used by load plans.
  Status add_table(const TensorTable* table, uint64_t data_start);

  // Groups every table's tensors into logical weights. `config` may be null.
  Status build_mlx(const MlxQuantConfig* config);
  Status build_ollama();
  // Every tensor a plain weight (a sharded HF model).
  Status build_plain();

  const Error& error() const { return error_; }
  uint32_t weight_count() const { return count_; }
  const LogicalWeight& weight(uint32_t i) const { return weights_[i]; }
  uint32_t find(const char* name, size_t n) const;  // kNoTensor when absent

  uint32_t table_count() const { return table_count_; }
  const TensorTable& table(uint32_t t) const { return *tables_[t]; }
  uint64_t data_start(uint32_t t) const { return data_start_[t]; }
  TensorInfo tensor(TensorRef r) const { return tables_[r.table]->get(r.index); }
  // Absolute file offsets [begin, end) of a piece in its table's file.
  uint64_t piece_begin(TensorRef r) const { return data_start_[r.table] + tensor(r).begin; }
  uint64_t piece_end(TensorRef r) const { return data_start_[r.table] + tensor(r).end; }

 private:
  Status fail(Status s, TensorRef at, const StrView& name);
  TensorRef find_tensor(const char* name, size_t n) const;
  Status add_weight(const LogicalWeight& w);
  Status finish_quantized(LogicalWeight* w);
  Status plain_weight(TensorRef r, LogicalWeight* w) const;

  LogicalWeight* weights_;
  uint32_t capacity_;
  uint32_t count_ = 0;
  const TensorTable* tables_[kMaxTables] = {};
  uint64_t data_start_[kMaxTables] = {};
  uint32_t table_count_ = 0;
  Error error_;
};

}  // namespace ws

// ConvertPlan (convert_plan.h): convert's per-weight rules put together for a loaded model, in
// the caller's arena, so hosts (the CLI, the wasm package) only execute the plan.
#include <string.h>

#include "weightstream/convert_plan.h"
#include "weightstream/model_loader.h"
#include "weightstream/reader.h"

namespace ws {
namespace {

size_t round8(size_t n) { return (n + 7) & ~size_t(7); }

// Carves 8-byte aligned blocks from the arena; counts past its end (then hands out nullptr) so a
// single pass gives the size that suffices.
struct Carver {
  uint8_t* base;
  size_t size;
  size_t used = 0;
  template <typename T>
  T* take(size_t count) {
    const size_t n = round8(count * sizeof(T));
    T* p = used + n <= size && base ? reinterpret_cast<T*>(base + used) : nullptr;
    used += n;
    return p;
  }
};

}  // namespace

Status ConvertPlan::build(const ModelLoader& L, const ConvertOptions& options, ConvertFilter filter,
                          void* filter_ctx, void* arena, size_t arena_size) {
  *this = ConvertPlan();
  to_ = options.to;
  const bool gguf = L.format() == Format::Gguf;
  const GgmlDialect dialect = gguf ? L.file_reader(L.table_file(0))->gguf_dialect() : GgmlDialect::Upstream;
  const uint32_t W = L.weight_count();
  auto decide = [&](uint32_t i, bool* taken) {
    const LogicalWeight& w = L.weight(i);
    *taken = !filter || filter(filter_ctx, w.name.data, w.name.size);
    const TensorRef packed = w.ref(PieceRole::Packed);
    return convert_decide(w, L.tensor(packed).type, gguf, dialect, L.piece_end(packed) - L.piece_begin(packed),
                          options);
  };
  // Pass 1: the counts that size the arena's blocks.
  uint32_t n = 0, skipped = 0, max_rows = 0, rows_in_shard = 0, last_shard = 0;
  ShardAssigner count_assign(options.max_shard_size);
  for (uint32_t i = 0; i < W; ++i) {
    bool taken = false;
    const ConvertDecision d = decide(i, &taken);
    if (!taken) continue;
    if (d.action == ConvertAction::Skip) {
      ++skipped;
      continue;
    }
    const uint32_t s = count_assign.add(d.bytes);
    rows_in_shard = s == last_shard ? rows_in_shard + 1 : 1;
    last_shard = s;
    if (rows_in_shard > max_rows) max_rows = rows_in_shard;
    ++n;
  }
  const uint32_t shards = count_assign.count();
  const TensorTable* input = gguf ? nullptr : &L.file_reader(L.table_file(0))->tensors();
  const uint32_t meta_cap = (input ? input->metadata_count() : 0) + 3;
  size_t scratch = SafetensorsWriter::scratch_bytes(max_rows > meta_cap ? max_rows : meta_cap);
  if (scratch < (size_t(n) + 1) * 4) scratch = (size_t(n) + 1) * 4;

  Carver c{static_cast<uint8_t*>(arena), arena_size};
  ConvertEntry* entries = c.take<ConvertEntry>(n);
  WriterTensor* rows = c.take<WriterTensor>(n);
  ConvertIndexEntry* index = c.take<ConvertIndexEntry>(n);
  uint32_t* of_weight = c.take<uint32_t>(W);
  uint32_t* skipped_list = c.take<uint32_t>(skipped);
  ConvertShard* shard_list = c.take<ConvertShard>(shards);
  WriterMetadata* meta = c.take<WriterMetadata>(meta_cap);
  uint32_t* scratch_block = c.take<uint32_t>(scratch / 4 + 1);
  arena_needed_ = c.used;
  if (c.used > arena_size || !arena || (reinterpret_cast<uintptr_t>(arena) & 7) != 0) {
    error_.code = Status::ArenaExhausted;
    error_.set_found(arena_size);
    error_.set_expected(c.used);
    return Status::ArenaExhausted;
  }
  entries_ = entries;
  rows_ = rows;
  index_ = index;
  entry_of_weight_ = of_weight;
  skipped_ = skipped_list;
  shards_ = shard_list;
  meta_ = meta;
  scratch_ = scratch_block;
  scratch_size_ = (scratch / 4 + 1) * 4;
  weight_count_ = W;
  shard_count_ = shards;

  // Pass 2: the entries, their rows and shards.
  ShardAssigner assign(options.max_shard_size);
  for (uint32_t s = 0; s < shards; ++s) {
    shards_[s] = ConvertShard();
    convert_shard_name(s, shards, shards_[s].name, sizeof shards_[s].name);
  }
  for (uint32_t i = 0; i < W; ++i) {
    entry_of_weight_[i] = kNotConverted;
    bool taken = false;
    const ConvertDecision d = decide(i, &taken);
    if (!taken) continue;
    if (d.action == ConvertAction::Skip) {
      skipped_[skipped_count_++] = i;
      continue;
    }
    const LogicalWeight& w = L.weight(i);
    const uint32_t k = entry_count_++;
    ConvertEntry& e = entries_[k];
    e = ConvertEntry();
    e.weight = i;
    e.decision = d;
    e.shard = assign.add(d.bytes);
    ConvertShard& sh = shards_[e.shard];
    if (sh.count == 0) sh.first = k;
    e.row = sh.count++;
    sh.data_size += d.bytes;
    WriterTensor& t = rows_[k];
    t = WriterTensor();
    t.name = w.name.data;
    t.name_size = w.name.size;
    t.dtype = d.dtype;
    t.shape = w.shape;  // the loader's: stable while it lives
    t.rank = w.rank;
    t.byte_size = d.bytes;
    index_[k] = ConvertIndexEntry{t.name, t.name_size, e.shard};
    entry_of_weight_[i] = k;
    total_size_ += d.bytes;
  }
  from_ = gguf ? "gguf" : convention_name(L.convention());
  writes_config_ = L.format() == Format::Safetensors;
  meta_count_ = convert_metadata(input, from_, to_, meta_, meta_cap);
  // Every file's header, so the sizes are known (and a table the writer refuses fails here).
  for (uint32_t s = 0; s < shards; ++s) {
    SafetensorsWriter w;
    const Status st = init_writer(s, &w);
    if (st != Status::Ok) {
      error_ = w.error();
      failed_shard_ = s;
      return st;
    }
    shards_[s].header_size = w.header_size();
    shards_[s].file_size = w.file_size();
  }
  return Status::Ok;
}

Status ConvertPlan::init_writer(uint32_t s, SafetensorsWriter* writer) const {
  if (s >= shard_count_) return Status::UsageError;
  const ConvertShard& sh = shards_[s];
  // has_metadata: the marks are always there, so the object is never empty.
  return writer->init(rows_ + sh.first, sh.count, meta_, meta_count_, true, scratch_, scratch_size_);
}

Status ConvertPlan::write_index(ByteSink sink, void* ctx) const {
  return write_convert_index(index_, entry_count_, shard_count_, total_size_, scratch_, sink, ctx);
}

}  // namespace ws

// weightstream wasm — the word layouts of abi.h written from library objects: a reader's events
// and facts (a session's or a model loader's file), tensors, metadata, logical weights. One writer
// for every handle, so JS reads them all the same way.
#include <string.h>

#include "abi.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"
#include "weightstream/reader.h"

namespace wsabi {

void put_event(EventOut* out, const ws::Event& e) {
  uint32_t* w = out->w;
  w[0] = static_cast<uint32_t>(e.type);
  w[1] = e.tensor;
  w[2] = ptr32(e.data);
  w[3] = static_cast<uint32_t>(e.size);
  put_u64(w + 4, e.offset);
  if (e.type >= ws::EventType::KvBegin && e.type <= ws::EventType::KvEnd) {
    w[6] = e.kv;
    w[7] = ptr32(e.key.data);
    w[8] = static_cast<uint32_t>(e.key.size);
    w[9] = static_cast<uint32_t>(e.value_type);
    w[10] = static_cast<uint32_t>(e.elem_type);
    put_u64(w + 11, e.count);
    put_u64(w + 13, e.index);
    w[15] = e.first;
    w[16] = e.last;
    put_u64(w + 17, e.u);
    put_u64(w + 19, static_cast<uint64_t>(e.i));
    out->f = e.f;
  }
}

void put_info(InfoOut* out, const ws::Reader& r, size_t arena_size) {
  uint32_t* w = out->w;
  w[0] = static_cast<uint32_t>(r.format());
  put_u64(w + 1, r.position());
  put_u64(w + 3, r.header_size());
  put_u64(w + 5, r.data_start());
  put_u64(w + 7, r.data_size());
  w[9] = r.tensor_count();
  w[10] = static_cast<uint32_t>(r.arena_used());
  w[11] = static_cast<uint32_t>(r.arena_peak());
  w[12] = static_cast<uint32_t>(r.arena_needed());
  w[13] = r.gguf_version();
  w[14] = r.gguf_alignment();
  put_u64(w + 15, r.gguf_kv_count());
  w[17] = static_cast<uint32_t>(r.gguf_dialect());
  const ws::StrView arch = r.gguf_architecture();
  w[18] = ptr32(arch.data);
  w[19] = static_cast<uint32_t>(arch.size);
  put_u64(w + 20, r.gguf_tensor_infos_offset());
  w[22] = r.tensors().metadata_count();
  w[23] = r.tensors().has_metadata();
  w[24] = static_cast<uint32_t>(arena_size);
  put_error(&out->error, r.error());
}

void put_tensor(uint32_t* w, const ws::TensorInfo& t) {
  w[0] = ptr32(t.name.data);
  w[1] = static_cast<uint32_t>(t.name.size);
  w[2] = t.type;
  w[3] = t.rank;
  put_u64(w + 4, t.begin);
  put_u64(w + 6, t.end);
  put_u64(w + 8, t.entry_offset);
  put_u64(w + 10, t.packed_shape ? t.element_count() : 0);
}

uint32_t put_dims(uint32_t* out, uint32_t max, const ws::TensorInfo& t) {
  uint32_t k = 0;
  for (ws::ShapeIter it = t.shape(); k < max && !it.done(); ++k) put_u64(out + 2 * k, it.next());
  return t.rank;
}

void put_tensors(const ws::TensorTable& t, uint32_t* io) {
  uint32_t i = io[0];
  uint32_t* rec = reinterpret_cast<uint32_t*>(static_cast<uintptr_t>(io[1]));
  uint8_t* names = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(io[3]));
  const uint32_t cap_words = io[2], cap_names = io[4];
  uint32_t words = 0, bytes = 0, n = 0;
  for (; i < t.count(); ++i, ++n) {
    const ws::TensorInfo x = t.get(i);
    const uint64_t need = kTableRecordWords + 2 * uint64_t(x.rank);
    if (need > cap_words - words || x.name.size > cap_names - bytes) break;
    uint32_t* w = rec + words;
    put_tensor(w, x);  // words 0-1 (name ptr, length) are then the name's place in `names`
    w[0] = bytes;
    memcpy(names + bytes, x.name.data, x.name.size);
    bytes += static_cast<uint32_t>(x.name.size);
    put_dims(w + kTableRecordWords, x.rank, x);
    words += static_cast<uint32_t>(need);
  }
  io[5] = n;
  io[6] = words;
  io[7] = bytes;
}

bool put_metadata_next(uint32_t* item, const ws::TensorTable& t, uint32_t* cursor, uint32_t* index) {
  if (*index >= t.metadata_count()) return false;
  const ws::MetadataEntry m = t.metadata_at(cursor);
  ++*index;
  item[0] = ptr32(m.key.data);
  item[1] = static_cast<uint32_t>(m.key.size);
  item[2] = ptr32(m.value.data);
  item[3] = static_cast<uint32_t>(m.value.size);
  return true;
}

void put_weight(uint32_t* o, const ws::LogicalWeight& w, const ws::LoadPlan& p) {
  memset(o, 0, kWeightWords * sizeof(uint32_t));
  o[0] = ptr32(w.name.data);
  o[1] = static_cast<uint32_t>(w.name.size);
  o[2] = w.convention.id;
  o[3] = static_cast<uint32_t>(w.params.mode);
  o[4] = w.params.bits;
  o[5] = w.params.group;
  o[6] = static_cast<uint32_t>(w.format);
  o[7] = w.decodable;
  o[8] = static_cast<uint32_t>(w.scale_dtype);
  o[9] = w.rank;
  for (uint32_t d = 0; d < w.rank && d < ws::kMaxLogicalRank; ++d) put_u64(o + 10 + 2 * d, w.shape[d]);
  put_u64(o + 18, w.elements);
  // The global scale's rule: 0 MLX's (/ 2688) or none, 1 Ollama's, 2 ModelOpt's (as stored),
  // 3 compressed-tensors' (it divides the block scale).
  const ws::DequantSpec spec = w.spec();
  o[20] = spec.global_scale_is_ollama ? 1u : spec.global_scale_is_modelopt ? 2u : spec.global_scale_divides ? 3u : 0u;
  o[21] = w.uqff_type;
  for (uint32_t r = 0; r < ws::kPieceRoles; ++r) {
    o[22 + 2 * r] = w.piece[r].present() ? w.piece[r].table : 0xFFFFFFFFu;
    o[23 + 2 * r] = w.piece[r].present() ? w.piece[r].index : 0xFFFFFFFFu;
  }
  o[42] = p.packed_before_companion;
  put_u64(o + 43, p.companion_bytes);
  put_u64(o + 45, p.sequential_scratch);
  put_u64(o + 47, p.seekable_scratch);
}

}  // namespace wsabi

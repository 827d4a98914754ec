// Load plans (sequential vs seekable scratch) and GPU buffer layouts for logical weights.
#include "weightstream/load_plan.h"

namespace ws {

LoadPlan plan_weight(const LogicalModel& m, uint32_t weight, uint64_t chunk) {
  LoadPlan p;
  const LogicalWeight& w = m.weight(weight);
  for (uint32_t r = 0; r < kPieceRoles; ++r) {
    if (!w.piece[r].present()) continue;
    LoadPiece piece;
    piece.role = PieceRole(r);
    piece.begin = m.piece_begin(w.piece[r]);
    piece.end = m.piece_end(w.piece[r]);
    // Insertion into file order (at most four pieces). Pieces in other shards sort by table
    // first: shards are streamed one after another.
    uint32_t at = p.piece_count++;
    while (at > 0) {
      const LoadPiece& q = p.pieces[at - 1];
      const TensorRef& qr = w.piece[uint32_t(q.role)];
      bool after = qr.table < w.piece[r].table || (qr.table == w.piece[r].table && q.begin <= piece.begin);
      if (after) break;
      p.pieces[at] = q;
      --at;
    }
    p.pieces[at] = piece;
    if (PieceRole(r) != PieceRole::Packed) p.companion_bytes += piece.end - piece.begin;
  }
  const uint64_t packed = m.piece_end(w.piece[0]) - m.piece_begin(w.piece[0]);
  // Sequential: the packed piece must wait in memory if any companion comes after it.
  p.packed_before_companion = p.piece_count > 1 && p.pieces[p.piece_count - 1].role != PieceRole::Packed;
  p.sequential_scratch = p.companion_bytes + (p.packed_before_companion ? packed : 0);
  p.seekable_scratch = p.companion_bytes + (packed < chunk ? packed : chunk);
  if (w.decodable && w.gptq_transposed()) {  // held whole, decoded down its columns
    p.sequential_scratch = p.companion_bytes + packed + kTransposeScratchBytes;
    p.seekable_scratch = p.companion_bytes + packed + kTransposeScratchBytes;
  }
  for (uint32_t i = 0; i < p.piece_count; ++i)
    if (p.pieces[i].role != PieceRole::Packed) p.schedule[p.schedule_count++] = p.pieces[i];
  for (uint32_t i = 0; i < p.piece_count; ++i)
    if (p.pieces[i].role == PieceRole::Packed) p.schedule[p.schedule_count++] = p.pieces[i];
  // A plain weight streams through: nothing held in sequential mode either.
  if (p.piece_count == 1) p.sequential_scratch = 0;
  return p;
}

// Sweep of each table's tensors in file order: a piece that must be held joins the held set when
// it arrives; the weight's bytes are released when its last piece has arrived (the last piece,
// if packed, streams through and is never held).
ModelPlan plan_model(const LogicalModel& m, uint64_t chunk) {
  ModelPlan out;
  // Weights of one piece each (a plain model) stream through and hold nothing: both peaks are 0.
  // Said without the sweep, whose hashed lookup per tensor cost a plain DeepSeek-V3 table (92k
  // tensors) more under wasm than building the model.
  if (m.single_pieces()) return out;
  bool pieces = false;
  for (uint32_t w = 0; w < m.weight_count() && !pieces; ++w)
    for (uint32_t r = 1; r < kPieceRoles && !pieces; ++r) pieces = m.weight(w).piece[r].present();
  if (!pieces) return out;
  uint64_t held = 0;
  for (uint32_t t = 0; t < m.table_count(); ++t) {
    const TensorTable& tab = m.table(t);
    for (uint32_t i = 0; i < tab.count(); ++i) {  // tables are indexed in data-offset order
      // The weight this tensor belongs to: a hashed lookup by name (LogicalModel::owner), so the
      // sweep stays linear in the tensor count.
      PieceRole owner_role = PieceRole::Packed;
      const uint32_t wi = m.owner(TensorRef{t, i}, &owner_role);
      if (wi == kNoTensor) continue;
      const LogicalWeight& w = m.weight(wi);
      const uint32_t role = uint32_t(owner_role);
      LoadPlan p = plan_weight(m, wi, chunk);
      if (p.seekable_scratch > out.seekable_peak && p.piece_count > 1) out.seekable_peak = p.seekable_scratch;
      if (p.piece_count == 1) continue;
      const LoadPiece& last = p.pieces[p.piece_count - 1];
      const bool is_last = last.role == PieceRole(role);
      const uint64_t size = m.piece_end(w.piece[role]) - m.piece_begin(w.piece[role]);
      if (!is_last) {
        held += size;  // a companion, or a packed piece that must wait for one
        if (held > out.sequential_peak) out.sequential_peak = held;
      } else {
        const bool transposed = w.decodable && w.gptq_transposed();
        const uint64_t with_last =
            held + (PieceRole(role) == PieceRole::Packed && !transposed ? 0 : size) + (transposed ? kTransposeScratchBytes : 0);
        if (with_last > out.sequential_peak) out.sequential_peak = with_last;
        uint64_t total = 0;
        for (uint32_t k = 0; k < p.piece_count; ++k) total += p.pieces[k].size();
        held -= total - size;  // every earlier piece of this weight was held
      }
    }
  }
  return out;
}

static uint64_t align_up(uint64_t v, uint32_t a) { return (v + a - 1) & ~uint64_t(a - 1); }

static uint64_t part_size(const LogicalModel& m, const LogicalWeight& w, uint32_t r) {
  return w.piece[r].present() ? m.piece_end(w.piece[r]) - m.piece_begin(w.piece[r]) : 0;
}

GpuLayout gpu_layout(const LogicalModel& m, uint32_t weight, uint32_t align) {
  GpuLayout g;
  gpu_fused_layout(m, &weight, 1, align, &g);
  return g;
}

uint64_t gpu_fused_layout(const LogicalModel& m, const uint32_t* weights, uint32_t n, uint32_t align,
                          GpuLayout* out) {
  if (align == 0) align = 1;
  uint64_t at = 0;
  for (uint32_t part = 0; part < 3; ++part) {
    for (uint32_t i = 0; i < n; ++i) {
      at = align_up(at, align);
      out[i].offset[part] = at;
      out[i].size[part] = part_size(m, m.weight(weights[i]), part);
      at += out[i].size[part];
    }
  }
  at = align_up(at, align);
  for (uint32_t i = 0; i < n; ++i) out[i].total = at;
  return at;
}

}  // namespace ws

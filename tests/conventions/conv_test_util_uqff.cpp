#include "conv_test_util_uqff.h"

#include <string>

namespace uqfftest {

namespace {

Outcome fail_with(const ws::Error& e, const ws::LogicalModel* m) {
  Outcome o;
  o.status = e.code;
  o.error = e;
  o.name.assign(e.tensor_name ? e.tensor_name : "", e.tensor_name ? e.tensor_name_size : 0);
  if (m) o.detail.assign(m->error_detail().data ? m->error_detail().data : "", m->error_detail().size);
  return o;
}

}  // namespace

Outcome read_uqff(std::vector<FileStream>* files, convtest::Split split, ws::LogicalModel* model) {
  uint32_t seed = 3;
  for (FileStream& f : *files) {
    f.reader.reset(new ws::Reader(f.arena.data(), f.arena.size()));
    f.reader->set_input_size(f.bytes.size());
    f.cuts = convtest::pieces(f.bytes.size(), split, seed++);
    f.cut = f.at = 0;
    for (;;) {
      ws::Event e = f.next();
      if (e.type == ws::EventType::HeaderReady) break;
      if (e.type == ws::EventType::Error) return fail_with(f.reader->error(), nullptr);
    }
    f.tensor_bytes.assign(f.reader->tensor_count(), {});
    model->add_table(&f.reader->tensors(), f.reader->data_start());
  }
  if (model->build_uqff() != ws::Status::Ok) return fail_with(model->error(), model);
  HeldTracker h;
  h.held.assign(model->weight_count(), 0);
  h.arrived.assign(model->weight_count(), 0);
  // Which weight and role each tensor is (a map built here, independently of the model's hash).
  for (uint32_t t = 0; t < files->size(); ++t) {
    FileStream& f = (*files)[t];
    std::vector<std::pair<uint32_t, uint32_t>> owner(f.reader->tensor_count(), {ws::kNoTensor, 0});
    for (uint32_t w = 0; w < model->weight_count(); ++w)
      for (uint32_t r = 0; r < ws::kPieceRoles; ++r)
        if (model->weight(w).piece[r].present() && model->weight(w).piece[r].table == t)
          owner[model->weight(w).piece[r].index] = {w, r};
    for (;;) {
      ws::Event e = f.next();
      if (e.type == ws::EventType::End) break;
      if (e.type == ws::EventType::Error) return fail_with(f.reader->error(), nullptr);
      if (e.type == ws::EventType::TensorBytes) {
        f.tensor_bytes[e.tensor].insert(f.tensor_bytes[e.tensor].end(), e.data, e.data + e.size);
        if (model->feed_uqff(t, e.tensor, e.offset, e.data, e.size) != ws::Status::Ok)
          return fail_with(model->error(), model);
        const uint32_t w = owner[e.tensor].first, role = owner[e.tensor].second;
        if (w == ws::kNoTensor) continue;
        uint32_t pieces = 0;
        for (uint32_t r = 0; r < ws::kPieceRoles; ++r) pieces += model->weight(w).piece[r].present();
        if (pieces == 1) continue;
        const bool streams = role == 0 && h.arrived[w] == pieces - 1;
        if (!streams) {
          h.held[w] += e.size;
          h.now += e.size;
        }
        if (h.now > h.peak) h.peak = h.now;
      }
      if (e.type == ws::EventType::TensorEnd) {
        const uint32_t w = owner[e.tensor].first;
        if (w == ws::kNoTensor) continue;
        uint32_t pieces = 0;
        for (uint32_t r = 0; r < ws::kPieceRoles; ++r) pieces += model->weight(w).piece[r].present();
        if (pieces > 1 && ++h.arrived[w] == pieces) {
          h.now -= h.held[w];
          h.held[w] = 0;
        }
      }
    }
  }
  if (model->resolve_uqff() != ws::Status::Ok) return fail_with(model->error(), model);
  Outcome o;
  o.measured_sequential_peak = h.peak;
  return o;
}

}  // namespace uqfftest

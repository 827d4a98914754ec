#include "conv_test_util.h"

#include "weightstream/load_plan.h"

namespace convtest {

std::vector<size_t> pieces(size_t size, Split split, uint32_t seed) {
  std::vector<size_t> out;
  if (split == Split::Whole) {
    out.push_back(size);
    return out;
  }
  uint32_t x = seed * 2654435761u + 1;
  for (size_t at = 0; at < size;) {
    size_t n = 1;
    if (split == Split::Random) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      n = 1 + x % 37;
    }
    if (n > size - at) n = size - at;
    out.push_back(n);
    at += n;
  }
  return out;
}

void parse(const std::vector<uint8_t>& file, Split split, uint32_t seed, bool declare_size, Parsed* p) {
  p->reader.reset(new ws::Reader(p->arena.data(), p->arena.size()));
  if (declare_size) p->reader->set_input_size(file.size());
  std::vector<size_t> cuts = pieces(file.size(), split, seed);
  size_t cut = 0, at = 0;
  for (;;) {
    ws::Event e = p->reader->next();
    if (e.type == ws::EventType::NeedInput) {
      if (cut < cuts.size()) {
        p->reader->feed(file.data() + at, cuts[cut]);
        at += cuts[cut++];
      } else {
        p->reader->finish();
      }
    } else if (e.type == ws::EventType::HeaderReady) {
      p->bytes.assign(p->reader->tensor_count(), {});
    } else if (e.type == ws::EventType::TensorBytes) {
      p->bytes[e.tensor].insert(p->bytes[e.tensor].end(), e.data, e.data + e.size);
    } else if (e.type == ws::EventType::End) {
      return;
    } else if (e.type == ws::EventType::Error) {
      p->status = p->reader->error().code;
      return;
    }
  }
}

uint64_t measured_seekable_peak(const ws::LogicalModel& m, uint64_t chunk) {
  uint64_t peak = 0;
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LoadPlan lp = ws::plan_weight(m, i, chunk);
    if (lp.piece_count == 1) continue;
    uint64_t held = 0;
    for (uint32_t s = 0; s < lp.schedule_count; ++s) {
      const ws::LoadPiece& pc = lp.schedule[s];
      if (pc.role != ws::PieceRole::Packed) {
        held += pc.size();
        if (held > peak) peak = held;
      } else {
        for (uint64_t b = 0; b < pc.size(); b += chunk) {
          const uint64_t n = pc.size() - b < chunk ? pc.size() - b : chunk;
          if (held + n > peak) peak = held + n;
        }
      }
    }
  }
  return peak;
}

}  // namespace convtest

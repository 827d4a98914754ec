#include "conv_test_util.h"

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

}  // namespace convtest

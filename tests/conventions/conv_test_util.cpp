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

}  // namespace convtest

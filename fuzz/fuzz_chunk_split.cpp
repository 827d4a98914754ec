// libFuzzer target: the chunk-split differential. Input = 8 bytes of chunking choices + a file
// (safetensors or GGUF). The file is fed through two fuzzer-chosen chunkings; both must give
// identical events, bytes, status, offset and position — with the input size unknown, and again
// with it declared up front (Reader::set_input_size), where the two runs must also agree.
#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t a, b;
  memcpy(&a, data, 4);
  memcpy(&b, data + 4, 4);
  data += 8;
  size -= 8;
  // Low two bits pick the mode (whole, bytewise, fixed, random), the next 12 the fixed size;
  // the rest seeds the random sizes.
  const uint64_t seed_a = uint64_t(a) | uint64_t(a) * 0x9E3779B900000000ull;
  const uint64_t seed_b = uint64_t(b) | uint64_t(b) * 0x9E3779B900000000ull;
  for (bool declare : {false, true}) {
    wsfuzz::RunConfig ca, cb;
    ca.chunk_seed = seed_a;
    cb.chunk_seed = seed_b;
    ca.declare_size = cb.declare_size = declare;
    wsfuzz::Run ra = wsfuzz::run_checked(data, size, ca);
    wsfuzz::Run rb = wsfuzz::run_checked(data, size, cb);
    if (!(ra == rb) && !wsfuzz::tolerated_chunking_difference(data, size)) {
      fprintf(stderr, "chunkings %08x / %08x, declared size: %d\n", a, b, int(declare));
      wsfuzz::describe_difference(ra, rb);
      abort();
    }
  }
  return 0;
}

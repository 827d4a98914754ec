// A program another project writes against an installed weightstream (tests/consumers): it streams
// a safetensors or GGUF file through ws::Reader and prints the tensor table and an FNV-1a checksum
// of every tensor's bytes, so the install stage can compare its output with exact values. Built
// with find_package(weightstream) (natively and for the Cortex-M4F) and with pkg-config.
#include <stdio.h>

#include <weightstream/version.h>
#include <weightstream/weightstream.h>

namespace {

alignas(8) uint8_t arena[64 * 1024];
uint8_t buf[4096];

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  // What the program was built against: the version header and the package's build options.
  printf("weightstream %s (simd128 %d, safetensors fast path %d)\n", WEIGHTSTREAM_VERSION,
         WEIGHTSTREAM_KERNELS_SIMD128, WEIGHTSTREAM_SAFETENSORS_FAST_PATH);
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  ws::Reader r(arena, sizeof arena);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (;;) {
    const ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      const size_t n = fread(buf, 1, sizeof buf, f);
      if (n)
        r.feed(buf, n);
      else
        r.finish();
    } else if (e.type == ws::EventType::HeaderReady) {
      printf("%s, %u tensors\n", ws::format_name(r.format()), unsigned(r.tensor_count()));
      for (uint32_t i = 0; i < r.tensor_count(); ++i) {
        const ws::TensorInfo t = r.tensor(i);
        printf("%.*s %s [", int(t.name.size), t.name.data,
               r.format() == ws::Format::Safetensors ? ws::dtype_name(t.dtype()) : "ggml");
        ws::ShapeIter s = t.shape();
        for (bool first = true; !s.done(); first = false) printf("%s%llu", first ? "" : ", ", (unsigned long long)s.next());
        printf("] %llu bytes\n", (unsigned long long)t.byte_size());
      }
    } else if (e.type == ws::EventType::TensorBytes) {
      for (size_t i = 0; i < e.size; ++i) hash = (hash ^ e.data[i]) * 0x100000001b3ull;
    } else if (e.type == ws::EventType::End) {
      printf("valid, fnv1a64 %016llx\n", (unsigned long long)hash);
      fclose(f);
      return 0;
    } else if (e.type == ws::EventType::Error) {
      printf("invalid: %s at byte %llu\n", ws::status_name(r.error().code), (unsigned long long)r.error().offset);
      fclose(f);
      return 1;
    }
  }
}

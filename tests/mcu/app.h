// The firmware's work, shared by the Cortex-M image and the host checker: stream a model out of
// "flash" in 256-byte reads, validate it with ws::Reader, checksum every tensor's raw bytes and
// dequantize one tensor into a static buffer. Both builds print the same "ck ..." lines; the test
// compares them.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace mcu {

// Output sink: semihosting on the MCU, stdout on the host.
void put(const char* s);

struct Model {
  const char* label;
  const uint8_t* flash;  // the image, as a "flash chip" seen through flash_read()
  size_t size;
  const char* dequant_tensor;  // name of the tensor to dequantize (nullptr: none)
};

constexpr size_t kReadPiece = 256;  // bytes per flash read

// Runs one model through the reader with `arena`; returns 0 on success. `dequant` selects the
// dequantization path compiled in (the size configurations): 0 none, 1 Dequantizer (all kernels
// through the format table), 2 the Q4_0 reference kernel called directly.
int run_model(const Model& m, void* arena, size_t arena_size);

// The arena the reader needs for `m`, from its own report (a run with an empty arena).
size_t arena_needed(const Model& m);

// A model of several files, each a "flash" region named as the model's documents name it.
struct FlashFile {
  const char* name;
  const uint8_t* flash;
  size_t size;
  const uint8_t* sha256 = nullptr;  // its expected SHA-256 (the loader verifies it), or none
};

// The model-loader configurations (WS_MCU_DEQUANT == 3; 4 with SHA-256 digests): the model whose
// entry is `files[0]` (a sharded index) loaded by ws::ModelLoader from flash in 256-byte reads,
// every weight decoded to f32 in 1 KiB pieces; prints "ck <label> ..." lines for the model and
// each weight's checksum, and (files with a sha256) how many files were verified. A file's digest
// makes the loader read it forward in full and check it before its last weight ends.
int run_loader(const char* label, const FlashFile* files, size_t count, void* arena, size_t arena_size);
// The convert configuration (in the loader image, issue #29): the same model's weights decoded to
// bf16 and written as one safetensors file (ws::ConvertPlan, ws::SafetensorsWriter) into a sink
// that checksums it, as a device would write it to flash or a card; prints "ck <label> convert
// ..." with the file's name, weights, bytes and FNV-1a. Its plan takes a 1 KiB static arena.
int run_convert(const char* label, const FlashFile* files, size_t count, void* arena, size_t arena_size);
// The same without output: true when it ran to Done; else `*needed` is the loader's ask.
bool run_loader_quiet(const FlashFile* files, size_t count, void* arena, size_t arena_size, size_t* needed);

}  // namespace mcu

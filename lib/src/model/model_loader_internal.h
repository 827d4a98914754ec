// ws::ModelLoader internals shared by its source files (model_loader.cpp: the entry, headers,
// config and model; model_stream.cpp: weights by range and the forward stream).
#pragma once

#include <stdint.h>

#include "weightstream/model_loader.h"

namespace ws {

struct ModelLoader::FileSlot {
  const char* name = nullptr;
  uint32_t name_size = 0;
  ModelFileKind kind = ModelFileKind::File;
  bool opened = false;      // its first request was answered
  bool missing = false;
  bool ended = false;       // end of file seen
  bool size_known = false;
  uint64_t size = 0;        // when size_known
  uint64_t pos = 0;         // bytes received in file order (where a forward read continues)
  uint64_t header_end = 0;  // safetensors: 8 + the header length, once the prefix is in
  Reader* reader = nullptr;
  uint8_t* region_lo = nullptr;  // the free middle the reader was placed in
  uint8_t* region_hi = nullptr;
  uint32_t table = kNoTensor;
  uint32_t layer = kNoTensor;  // Blob: the manifest layer
  uint64_t number = 0;         // UqffPart: the number before ".uqff" (ordering only)
  uint8_t prefix[8] = {};
  uint8_t prefix_have = 0;
};

struct ModelLoader::HeldBlock {
  uint32_t weight;  // kNoTensor: freed (removed at the next compaction or from the top)
  uint32_t pad;
  uint64_t off;
  uint64_t size;
};

enum class ModelLoader::Phase : uint8_t {
  Idle,         // before open()
  EntryDoc,     // index.json / manifest
  Headers,      // every data file's header, one Reader each
  Config,       // config.json beside an MLX / plain model
  UqffScalars,  // seekable UQFF: the scalar tensors by range
  Ready,        // ModelReady returned; the next call starts the data phase
  Seek,         // selected weights by range
  Stream,       // every file forward through its Reader
  Done,
  Failed,
};

// The pieces of one weight that loading needs (packed, scales, biases, global scale; not UQFF's
// scalars, which the model already holds), in file order, and where they go.
struct ModelLoader::WeightPieces {
  uint32_t n = 0;
  PieceRole role[4] = {};
  uint32_t table[4] = {};
  uint32_t index[4] = {};
  uint64_t begin[4] = {};
  uint64_t end[4] = {};
  uint32_t packed = 0;        // which of them is the packed piece
  bool i2s = false;           // BitNet I2_S: the f32 scale is in the packed piece's tail
  uint64_t input_bytes = 0;   // packed bytes the decoder takes (I2_S: not the 32-byte tail)
  // Sequential: the weight's block holds every companion and, when it cannot stream through
  // (a companion comes after it, or I2_S), the packed piece; off[k] is piece k's place in it.
  bool packed_held = false;
  uint64_t off[4] = {};
  uint64_t block = 0;
  // Seekable decode: the companions' scratch (I2_S: its 4-byte scale) and their places in it.
  uint64_t companions = 0;
  uint64_t scratch_off[4] = {};
  uint32_t first() const { return 0; }
  uint32_t last() const { return n - 1; }
  int find(uint32_t t, uint32_t i) const {
    for (uint32_t k = 0; k < n; ++k)
      if (table[k] == t && index[k] == i) return int(k);
    return -1;
  }
};

}  // namespace ws

// ws::ModelLoader internals shared by its source files (model_loader.cpp: the entry, headers,
// config and model; model_stream.cpp: weights by range and the forward stream; held_region.h:
// the forward stream's held blocks).
#pragma once

#include <stdint.h>

#include "held_region.h"
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
  bool header_done = false;    // HeaderReady came
  // GGUF: the split keys as the header's key-values passed (trusted only at HeaderReady), by
  // SplitKey: the type found (kNoKey: absent), the value, the key-value's offset; how many other
  // keys the file holds (a split after the first should hold none) and the first one's offset.
  uint8_t split_type[3] = {kNoKey, kNoKey, kNoKey};
  uint8_t kv_now = kNoKey;     // the key-value streaming past: a SplitKey, kForeignKey or kNoKey
  int64_t split_value[3] = {};
  uint64_t split_offset[3] = {};
  uint32_t foreign_kvs = 0;
  uint64_t foreign_offset = 0;
  uint32_t split_pos = 0;      // Split: its position in the model (0-based)
  uint32_t first_weight = 0;   // GGUF, as_stored: the model-wide number of its first tensor
  // A sequential split's bytes past its header, kept for its data phase (Reader::release_input).
  uint8_t* tail = nullptr;
  uint32_t tail_size = 0;
  FileDigest* digest = nullptr;  // its expected SHA-256 and the hash so far (model_digest.cpp)

  static constexpr uint8_t kNoKey = 0xFF;
  static constexpr uint8_t kForeignKey = 0xFE;
};

// A file's SHA-256: given by name before open() (then on the list digests_ until a file of that
// name appears), by set_file_sha256(), or from a blob's name. Bytes are hashed as they arrive at
// the offset hashed so far (a piece that starts before it is hashed from there on; one that starts
// after it leaves the file unverifiable: never, reading forward); the file's size (set_file_size,
// end of file) finishes it.
struct ModelLoader::FileDigest {
  uint8_t expected[kSha256Bytes] = {};
  uint8_t actual[kSha256Bytes] = {};
  uint64_t hashed = 0;
  DigestState state = DigestState::Pending;
  bool used = false;            // by-name records: a file of the model had the name
  const char* name = nullptr;   // by-name records
  uint32_t name_size = 0;
  FileDigest* next = nullptr;   // the by-name list
  bool started = false;         // the hash state is initialised (at the file's first byte)
  // The hash state: a ws::Sha256, or the host's engine's (set_sha256_engine).
  alignas(8) uint8_t hstate[kSha256EngineState] = {};
};
static_assert(sizeof(Sha256) <= kSha256EngineState, "ws::Sha256 fits the engine state");

// The loader's calls into model_digest.cpp, through a pointer the digest API sets: a program that
// gives no digest links no SHA-256 code (the microcontroller build measures it).
struct ModelLoader::DigestOps {
  void (*feed)(ModelLoader& L, uint32_t f, uint64_t offset, const uint8_t* data, size_t n);
  void (*end)(ModelLoader& L, uint32_t f, uint64_t size);  // the file ends at `size`
  void (*attach)(ModelLoader& L, uint32_t f);              // file f joins the model: a by-name record for it?
  bool (*blobs)(ModelLoader& L);                           // a manifest's blobs (after the manifest)
};

// The three split keys (gguf_split.h), as FileSlot indexes them.
enum SplitKey : uint8_t { kSplitNo = 0, kSplitCount = 1, kSplitTensors = 2 };


enum class ModelLoader::Phase : uint8_t {
  Idle,         // before open()
  EntryDoc,     // index.json / manifest
  Headers,      // every data file's header, one Reader each
  Config,       // config.json beside an MLX / plain model
  ConventionData,  // seekable: the tensors a convention's data phase wants, by range
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
  // Sequential, a weight resolved as the stream passes (ModelLoader::weight_stream()): the data
  // tensor its decode waits for (bitsandbytes' quant_state JSON) comes after its last piece, so
  // its packed piece is held too and the weight starts decoding at that tensor's end. The packed
  // piece and the pieces after it then have a block of their own (packed_block bytes, the held
  // region's key weight_count() + w; off[k] in it), taken when the packed piece arrives: its
  // companions that come long before it (safetensors places every F32 tensor first: absmax, the
  // nested ones) do not reserve those bytes from the file's start.
  bool wait = false;
  uint32_t wait_table = 0, wait_index = 0;
  uint64_t packed_block = 0;
  bool i2s = false;           // BitNet I2_S: the f32 scale is in the packed piece's tail
  uint64_t input_bytes = 0;   // packed bytes the decoder takes (I2_S: not the 32-byte tail)
  // Sequential: the weight's block holds every companion and, when it cannot stream through
  // (a companion comes after it, or I2_S), the packed piece; off[k] is piece k's place in it.
  bool packed_held = false;
  // GptqPacked, decoding: the packed piece is held whole (sequential: in the block; seekable: in
  // the scratch, after the companions) and handed to the decoder down its columns (transpose_*).
  bool transposed = false;
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

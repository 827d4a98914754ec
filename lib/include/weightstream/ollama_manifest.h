// weightstream — an Ollama model manifest, streamed.
//
//   {"schemaVersion": 2, "mediaType": "...", "config": {...},
//    "layers": [{"mediaType": "application/vnd.ollama.image.tensor",
//                "digest": "sha256:<64 hex>", "size": 1234, "name": "model.layers.0..."}]}
//
// Each layer names a blob file, blobs/sha256-<hex> (FORMATS.md §3). Layers live in the caller's
// arena. A tensor layer's name is a tensor key of its blob, or, for an expert group, the prefix
// of the tensors the blob holds (enumerate the blob's header then).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/arena.h"
#include "weightstream/detail/json_document.h"
#include "weightstream/limits.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

struct ManifestLayer {
  StrView media_type;
  StrView blob_file;  // "sha256-<hex>", the file name under blobs/
  StrView name;       // empty when the layer has no name (config, template, ...)
  uint64_t size = 0;
  bool is_tensor = false;  // media type application/vnd.ollama.image.tensor
};

class OllamaManifest {
 public:
  OllamaManifest(void* arena, size_t arena_size, const Limits& limits = Limits());
  Status feed(const void* data, size_t size);
  Status finish();
  const Error& error() const { return doc_.error; }
  size_t arena_needed() const { return arena_.peak_needed(); }
  // After finish() returned Ok: the bytes it keeps at the arena's start and end (see
  // Reader::arena_low); lookups use no others.
  size_t arena_low() const { return arena_.low(); }
  size_t arena_high() const { return arena_.high(); }

  // Valid after finish() returned Ok; layers in manifest order.
  uint32_t layer_count() const { return layer_count_; }
  ManifestLayer layer(uint32_t i) const;
  // The tensor layer whose name equals `tensor` or is a prefix of it followed by '.'
  // (an expert group); kNoTensor when none.
  uint32_t find_layer_for_tensor(const char* tensor, size_t n) const;

 private:
  struct Layer {
    uint32_t media, digest, name;  // arena offsets of [u32 len][bytes]; 0xFFFFFFFF = absent
    uint32_t pos;                  // offset of the layer object in the JSON (diagnostics)
    uint64_t size;
    uint8_t has_size;
    uint8_t pad[7];
  };
  Status handle(detail::JsonLexer::Token t);
  Status end_layer();
  StrView blob_str(uint32_t off) const;

  detail::Arena arena_;
  detail::JsonDocument doc_;  // lexer, first error, finished
  Limits limits_;
  uint8_t ctx_ = 0, skip_return_ = 0, key_kind_ = 0;
  char small_[16] = {};
  uint32_t small_size_ = 0;
  bool small_overflow_ = false;
  uint32_t str_off_ = 0;
  uint64_t str_size_ = 0;
  uint64_t str_pos_ = 0;
  uint32_t digest_len_ = 0;
  bool digest_ok_ = true;
  bool seen_layers_ = false;
  Layer cur_{};
  uint32_t layer_count_ = 0;
  const Layer* layers_ = nullptr;
};

}  // namespace ws

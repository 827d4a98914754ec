// weightstream — what kind of model file some bytes are, from their first bytes and the file's size.
//
// The one place where a file's kind is told from its content: the model loader's Auto entry, the
// CLI and the JS package (through the C ABI) all ask this, so a file is the same kind to every host.
//
// The rule, in order:
//   1. "GGUF" as the first 4 bytes: a GGUF file.
//   2. The first 8 bytes as a little-endian u64 n at most kMaxSafetensorsHeader (the reference
//      crate's limit): a binary length prefix — never JSON text, which has no NUL bytes while such
//      an n has four. A safetensors file when n is a plausible header length for the size (8 + n
//      ≤ size, when the size is known) and the first byte after the prefix that is not JSON
//      whitespace (space, tab, LF, CR) is '{' — or no such byte is among the bytes given, within
//      the header's n bytes (8 bytes given: the prefix decides). Otherwise Unknown: a length past
//      the end of the file, or a header that does not start an object (the reader says which).
//   3. Otherwise JSON when the first byte that is not whitespace is '{': a sharded model's index
//      when the bytes given hold the key "weight_map", an Ollama manifest when they hold
//      "schemaVersion" or "layers", other JSON (a config.json, or too few bytes given) otherwise.
//   4. Anything else: Unknown.
// So a safetensors file whose length's low byte is '{' (123, 379, …) and whose header names a
// tensor or metadata key "layers" is a safetensors file (issue #26: the CLI took it for a
// manifest), and a manifest is recognised only where no safetensors file can be.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {

enum class FileKind : uint8_t {
  Unknown,         // none of the below
  Safetensors,
  Gguf,
  OllamaManifest,  // JSON naming "schemaVersion" or "layers" in the bytes given
  ShardIndex,      // JSON naming "weight_map" in the bytes given (model.safetensors.index.json)
  Json,            // other JSON: a config.json, or JSON whose bytes given name none of those keys
};

// The kinds of rule 3: JSON that is no safetensors file.
inline bool file_kind_is_json(FileKind k) {
  return k == FileKind::OllamaManifest || k == FileKind::ShardIndex || k == FileKind::Json;
}

// "unknown", "safetensors", "gguf", "ollama-manifest", "shard-index", "json".
const char* file_kind_name(FileKind k);

// The kind of a file whose first `n` bytes are `head`; `size` is the file's size in bytes, or
// kUnknownFileSize when it is not known (a stream). Give the first 4 KiB or so: rule 3's keys are
// looked for in the bytes given only (8 bytes are enough for rules 1, 2 and 4).
constexpr uint64_t kUnknownFileSize = ~uint64_t(0);
FileKind detect_file_kind(const void* head, size_t n, uint64_t size);

}  // namespace ws

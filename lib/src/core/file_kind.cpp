// File kinds from first bytes and size: the rule of file_kind.h.
#include "weightstream/file_kind.h"

#include <string.h>

#include "weightstream/limits.h"

namespace ws {

namespace {

bool is_blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The first byte at or after `from` that is not JSON whitespace, within [0, end); -1 if none.
long first_non_blank(const uint8_t* p, size_t from, size_t end) {
  for (size_t i = from; i < end; ++i)
    if (!is_blank(p[i])) return long(i);
  return -1;
}

bool holds(const uint8_t* p, size_t n, const char* key) {
  const size_t k = strlen(key);
  for (size_t i = 0; i + k <= n; ++i)
    if (memcmp(p + i, key, k) == 0) return true;
  return false;
}

}  // namespace

const char* file_kind_name(FileKind k) {
  switch (k) {
    case FileKind::Safetensors: return "safetensors";
    case FileKind::Gguf: return "gguf";
    case FileKind::OllamaManifest: return "ollama-manifest";
    case FileKind::ShardIndex: return "shard-index";
    case FileKind::Json: return "json";
    default: return "unknown";
  }
}

FileKind detect_file_kind(const void* head, size_t n, uint64_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(head);
  if (n >= 4 && memcmp(p, "GGUF", 4) == 0) return FileKind::Gguf;
  if (n >= 8) {
    uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = len << 8 | p[i];
    if (len <= kMaxSafetensorsHeader) {
      if (size != kUnknownFileSize && (size < 8 || len > size - 8)) return FileKind::Unknown;
      const size_t end = n - 8 < len ? n : size_t(8 + len);
      const long at = first_non_blank(p, 8, end);
      return at < 0 || p[at] == '{' ? FileKind::Safetensors : FileKind::Unknown;
    }
  }
  const long at = first_non_blank(p, 0, n);
  if (at < 0 || p[at] != '{') return FileKind::Unknown;
  if (holds(p, n, "\"weight_map\"")) return FileKind::ShardIndex;
  if (holds(p, n, "\"schemaVersion\"") || holds(p, n, "\"layers\"")) return FileKind::OllamaManifest;
  return FileKind::Json;
}

}  // namespace ws

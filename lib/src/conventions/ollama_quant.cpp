// Ollama's quant_type names and its shape rule (see ollama_quant.h).
#include "weightstream/ollama_quant.h"

#include <string.h>

namespace ws {

namespace {

// Bytes of a Unicode White_Space code point starting at p (0: none). UTF-8 from the JSON reader.
size_t space_at(const uint8_t* p, size_t n) {
  if (n >= 1 && (p[0] == ' ' || (p[0] >= 0x09 && p[0] <= 0x0D))) return 1;
  if (n >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0)) return 2;  // U+0085, U+00A0
  if (n >= 3) {
    if (p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80) return 3;  // U+1680
    if (p[0] == 0xE2 && p[1] == 0x80 &&
        ((p[2] >= 0x80 && p[2] <= 0x8A) || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF))
      return 3;  // U+2000..U+200A, U+2028, U+2029, U+202F
    if (p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F) return 3;  // U+205F
    if (p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) return 3;  // U+3000
  }
  return 0;
}

// Bytes of a White_Space code point ending at p + n (0: none).
size_t space_before(const uint8_t* p, size_t n) {
  for (size_t len = 1; len <= 3 && len <= n; ++len)
    if (space_at(p + n - len, len) == len) return len;
  return 0;
}

}  // namespace

OllamaQuantType ollama_quant_type(const char* s, size_t n) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s);
  for (size_t k; n > 0 && (k = space_at(p, n)) != 0;) p += k, n -= k;
  for (size_t k; n > 0 && (k = space_before(p, n)) != 0;) n -= k;
  // Upper-cased into a small buffer: every name is at most 5 letters, so a longer result is no
  // name.
  char up[8];
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (m == sizeof up) return OllamaQuantType::Unknown;
    const uint8_t c = p[i];
    if (c >= 'a' && c <= 'z') {
      up[m++] = char(c - 'a' + 'A');
    } else if (c == 0xC4 && i + 1 < n && p[i + 1] == 0xB1) {  // U+0131 dotless i
      up[m++] = 'I';
      ++i;
    } else if (c == 0xC5 && i + 1 < n && p[i + 1] == 0xBF) {  // U+017F long s
      up[m++] = 'S';
      ++i;
    } else {
      up[m++] = char(c);
    }
  }
  struct Row {
    const char* name;
    OllamaQuantType type;
  };
  static const Row kRows[] = {
      {"NVFP4", OllamaQuantType::Nvfp4}, {"MXFP4", OllamaQuantType::Mxfp4}, {"MXFP8", OllamaQuantType::Mxfp8},
      {"INT4", OllamaQuantType::Int4},   {"FP4", OllamaQuantType::Int4},    {"Q4", OllamaQuantType::Int4},
      {"INT8", OllamaQuantType::Int8},   {"FP8", OllamaQuantType::Int8},    {"Q8", OllamaQuantType::Int8},
  };
  for (const Row& r : kRows)
    if (strlen(r.name) == m && memcmp(r.name, up, m) == 0) return r.type;
  return OllamaQuantType::Unknown;
}

const char* ollama_quant_type_name(OllamaQuantType t) {
  switch (t) {
    case OllamaQuantType::Int4: return "int4";
    case OllamaQuantType::Int8: return "int8";
    case OllamaQuantType::Nvfp4: return "nvfp4";
    case OllamaQuantType::Mxfp4: return "mxfp4";
    case OllamaQuantType::Mxfp8: return "mxfp8";
    case OllamaQuantType::Unknown: break;
  }
  return "unknown";
}

QuantParams ollama_quant_params(OllamaQuantType t) {
  switch (t) {
    case OllamaQuantType::Int4: return QuantParams{QuantMode::Affine, 4, 64};
    case OllamaQuantType::Int8: return QuantParams{QuantMode::Affine, 8, 64};
    case OllamaQuantType::Nvfp4: return QuantParams{QuantMode::Nvfp4, 4, 16};
    case OllamaQuantType::Mxfp4: return QuantParams{QuantMode::Mxfp4, 4, 32};
    case OllamaQuantType::Mxfp8: return QuantParams{QuantMode::Mxfp8, 8, 32};
    case OllamaQuantType::Unknown: break;
  }
  return QuantParams();
}

OllamaInferred ollama_infer_from_shapes(uint64_t weight_cols, uint64_t scale_cols, const char* hint, size_t hint_n) {
  OllamaInferred out;
  constexpr uint64_t kMax = uint64_t(1) << 60;
  if (weight_cols == 0 || scale_cols == 0 || weight_cols > kMax || scale_cols > kMax) return out;
  const uint64_t g4 = weight_cols * 8 / scale_cols, g8 = weight_cols * 4 / scale_cols;
  auto is_common = [](uint64_t g) { return g == 16 || g == 32 || g == 64 || g == 128; };
  auto set = [&](OllamaQuantType t, uint64_t g) {
    out.type = t;
    out.group = uint32_t(g);
    return out;
  };
  if (g4 == 32) return set(OllamaQuantType::Int4, 32);
  if (g8 == 64) return set(OllamaQuantType::Int8, 64);
  if (g4 == 64 && g8 == 32) {
    // strings.Contains(strings.ToUpper(hint), "8" / "4"): digits are not case-mapped.
    if (hint_n && memchr(hint, '8', hint_n)) return set(OllamaQuantType::Int8, 32);
    if (hint_n && memchr(hint, '4', hint_n)) return set(OllamaQuantType::Int4, 64);
  }
  if (is_common(g4) && !is_common(g8)) return set(OllamaQuantType::Int4, g4);
  if (is_common(g8) && !is_common(g4)) return set(OllamaQuantType::Int8, g8);
  return out;
}

}  // namespace ws

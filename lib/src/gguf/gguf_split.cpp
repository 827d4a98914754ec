// Split GGUF names (see gguf_split.h): llama.cpp's llama_split_path / llama_split_prefix, written
// without printf (a microcontroller build counts every byte of it).
#include "weightstream/gguf_split.h"

#include <string.h>

namespace ws {

namespace {

void put5(char* p, uint32_t v) {
  for (int i = 4; i >= 0; --i) {
    p[i] = char('0' + v % 10);
    v /= 10;
  }
}

bool get5(const char* p, uint32_t* v) {
  uint32_t x = 0;
  for (int i = 0; i < 5; ++i) {
    if (p[i] < '0' || p[i] > '9') return false;
    x = x * 10 + uint32_t(p[i] - '0');
  }
  *v = x;
  return true;
}

}  // namespace

size_t gguf_split_name(const char* prefix, size_t prefix_len, uint32_t no, uint32_t count, char* out, size_t cap) {
  if (no >= count || count > 65535 || cap < prefix_len + kGgufSplitSuffixChars + 1) return 0;
  if (prefix_len) memcpy(out, prefix, prefix_len);
  char* s = out + prefix_len;
  s[0] = '-';
  put5(s + 1, no + 1);
  memcpy(s + 6, "-of-", 4);
  put5(s + 10, count);
  memcpy(s + 15, ".gguf", 5);
  s[20] = '\0';
  return prefix_len + kGgufSplitSuffixChars;
}

bool gguf_split_parse(const char* name, size_t n, uint32_t count, size_t* prefix_len, uint32_t* no) {
  if (name == nullptr || n <= kGgufSplitSuffixChars || count == 0 || count > 65535) return false;
  const char* s = name + n - kGgufSplitSuffixChars;
  uint32_t number = 0, of = 0;
  if (s[0] != '-' || !get5(s + 1, &number) || memcmp(s + 6, "-of-", 4) != 0 || !get5(s + 10, &of) ||
      memcmp(s + 15, ".gguf", 5) != 0)
    return false;
  if (of != count || number == 0 || number > count) return false;
  *prefix_len = n - kGgufSplitSuffixChars;
  *no = number - 1;
  return true;
}

}  // namespace ws

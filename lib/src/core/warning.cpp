// Warning names, descriptions, fixes and messages, generated from the one list in warning.h.
#include "weightstream/warning.h"

#include <string.h>

namespace ws {

namespace {
const char* const kNames[] = {
#define WS_WARNING_NAME(name, desc, fix) #name,
    WS_WARNING_LIST(WS_WARNING_NAME)
#undef WS_WARNING_NAME
};
const char* const kDescriptions[] = {
#define WS_WARNING_DESC(name, desc, fix) desc,
    WS_WARNING_LIST(WS_WARNING_DESC)
#undef WS_WARNING_DESC
};
const char* const kFixes[] = {
#define WS_WARNING_FIX(name, desc, fix) fix,
    WS_WARNING_LIST(WS_WARNING_FIX)
#undef WS_WARNING_FIX
};
constexpr uint32_t kCount = static_cast<uint32_t>(WarningCode::Count_);

// Appends text to out[0, cap) at *n (counting what does not fit).
void put(char* out, size_t cap, size_t* n, const char* text, size_t len) {
  if (*n + 1 < cap) {
    const size_t room = cap - 1 - *n;
    memcpy(out + *n, text, len < room ? len : room);
  }
  *n += len;
}
}  // namespace

const char* warning_name(WarningCode c) {
  const uint32_t i = static_cast<uint32_t>(c);
  return i < kCount ? kNames[i] : "Unknown";
}

const char* warning_description(WarningCode c) {
  const uint32_t i = static_cast<uint32_t>(c);
  return i < kCount ? kDescriptions[i] : "unknown warning";
}

const char* warning_fix(WarningCode c) {
  const uint32_t i = static_cast<uint32_t>(c);
  return i < kCount ? kFixes[i] : "";
}

bool warning_from_name(const char* name, WarningCode* out) {
  for (uint32_t i = 0; i < kCount; ++i) {
    if (strcmp(kNames[i], name) == 0) {
      *out = static_cast<WarningCode>(i);
      return true;
    }
  }
  return false;
}

size_t warning_message(const Warning& w, char* out, size_t cap) {
  size_t n = 0;
  const char* d = warning_description(w.code);
  put(out, cap, &n, d, strlen(d));
  // The count in decimal (no printf: the library links none).
  char digits[24];
  size_t k = 0;
  uint64_t v = w.count;
  do {
    digits[sizeof digits - 1 - k++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  put(out, cap, &n, ": ", 2);
  put(out, cap, &n, digits + sizeof digits - k, k);
  put(out, cap, &n, " in this tensor.", 16);
  const char* f = warning_fix(w.code);
  if (*f) {
    put(out, cap, &n, " ", 1);
    put(out, cap, &n, f, strlen(f));
  }
  if (cap) out[n < cap ? n : cap - 1] = '\0';
  return n;
}

}  // namespace ws

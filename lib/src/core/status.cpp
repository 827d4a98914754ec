// Status names and descriptions, generated from the one list in status.h.
#include "weightstream/status.h"

#include <string.h>

namespace ws {

namespace {
const char* const kNames[] = {
#define WS_STATUS_NAME(name, desc) #name,
    WS_STATUS_LIST(WS_STATUS_NAME)
#undef WS_STATUS_NAME
};
const char* const kDescriptions[] = {
#define WS_STATUS_DESC(name, desc) desc,
    WS_STATUS_LIST(WS_STATUS_DESC)
#undef WS_STATUS_DESC
};
constexpr uint32_t kCount = static_cast<uint32_t>(Status::Count_);
}  // namespace

const char* status_name(Status s) {
  uint32_t i = static_cast<uint32_t>(s);
  return i < kCount ? kNames[i] : "Unknown";
}

const char* status_description(Status s) {
  uint32_t i = static_cast<uint32_t>(s);
  return i < kCount ? kDescriptions[i] : "unknown status";
}

bool status_from_name(const char* name, Status* out) {
  for (uint32_t i = 0; i < kCount; ++i) {
    if (strcmp(kNames[i], name) == 0) {
      *out = static_cast<Status>(i);
      return true;
    }
  }
  return false;
}

}  // namespace ws

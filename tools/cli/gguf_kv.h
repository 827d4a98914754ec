// weightstream CLI — GGUF key-values gathered from the reader's Kv* events.
//
// The reader stores no GGUF values (a vocabulary can be megabytes): it hands them out as they
// stream past. The CLI keeps what a person or a script inspecting the file wants to see — scalars,
// strings up to 1 MiB, and for arrays the element type, the count and the first elements.
#pragma once

#include <vector>

#include "report.h"
#include "weightstream/event.h"

namespace wscli {

class GgufKvCollector {
 public:
  // Feed every KvBegin/KvScalar/KvBytes/KvEnd event, in order.
  void on_event(const ws::Event& e);
  std::vector<MetadataRow> take() { return std::move(rows_); }
  void clear() { rows_.clear(); }

 private:
  void on_bytes(const ws::Event& e);
  std::vector<MetadataRow> rows_;
};

}  // namespace wscli

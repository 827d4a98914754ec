// weightstream CLI — GGUF key-values gathered from the reader's Kv* events.
//
// The reader stores no GGUF values (a vocabulary can be megabytes): it hands them out as they
// stream past. The CLI keeps what a person or a script inspecting the file wants to see — scalars,
// strings up to 1 MiB, and for arrays the element type, the count, the first elements, the last
// one and the strings' total length. Pieces of the elements in between are looked at (to count
// their bytes) and dropped, so memory does not grow with the array.
#pragma once

#include <vector>

#include "report.h"
#include "weightstream/event.h"

namespace wscli {

class GgufKvCollector {
 public:
  // Feed every KvBegin/KvScalar/KvBytes/KvEnd event, in order.
  // `string_bytes`: ModelLoader::kv_string_bytes() (a string array's bytes so far, the
  // preview's skipped elements included).
  void on_event(const ws::Event& e, uint64_t string_bytes = 0);
  std::vector<MetadataRow> take() { return std::move(rows_); }
  // What was collected so far (error messages name keys from it).
  const std::vector<MetadataRow>& rows() const { return rows_; }
  void clear() { rows_.clear(); }

 private:
  void on_bytes(const ws::Event& e, uint64_t string_bytes);
  void on_string_element(const ws::Event& e, uint64_t string_bytes, MetaValue* array);
  void on_numeric_elements(const ws::Event& e, MetaValue* array);
  std::vector<MetadataRow> rows_;
};

}  // namespace wscli

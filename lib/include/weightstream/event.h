// weightstream — the events the reader hands out.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/gguf.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"

namespace ws {

enum class EventType : uint8_t {
  NeedInput,    // feed() more bytes, or finish() at end of input
  // GGUF metadata, as it streams past (nothing of it is stored). A later header error voids what
  // was seen: trust nothing before HeaderReady.
  KvBegin,      // kv, key, value_type; arrays: elem_type, count
  KvScalar,     // the value of a scalar KV (u, i, f); numeric arrays come as KvBytes instead
  KvBytes,      // data/size: a piece of a string value or of string element `index`
                // (first/last mark its ends), or whole numeric elements from element `index`
  KvEnd,        // kv complete
  HeaderReady,  // the header is complete and validated; the tensor table can be read
  TensorBegin,  // tensor `tensor` starts (tensors come in file order: index 0, 1, 2, ...)
  TensorBytes,  // data/size: the next bytes of tensor `tensor`, a view into the fed input
  TensorEnd,    // tensor `tensor` is complete
  End,          // the whole input was read and is valid
  Error,        // see Reader::error(); every later next() returns Error again
};

const char* event_type_name(EventType t);

struct Event {
  EventType type = EventType::NeedInput;
  uint32_t tensor = kNoTensor;   // TensorBegin/TensorBytes/TensorEnd
  const uint8_t* data = nullptr; // TensorBytes
  size_t size = 0;               // TensorBytes
  uint64_t offset = 0;           // absolute file offset of data[0] (TensorBytes, KvBytes) or of
                                 // the tensor's first byte (TensorBegin/End) or the KV (KvBegin)
  // GGUF key-value events.
  uint32_t kv = 0;
  StrView key;                   // KvBegin (a view into the arena)
  GgufType value_type = GgufType::U8;
  GgufType elem_type = GgufType::U8;  // arrays
  uint64_t count = 0;            // arrays: element count
  uint64_t index = 0;            // arrays: element index of the piece / first element
  bool first = false, last = false;   // KvBytes of strings: first / last piece
  uint64_t u = 0;                // KvScalar: unsigned or bool value, or raw bits of floats
  int64_t i = 0;                 // KvScalar: signed value (sign-extended)
  double f = 0;                  // KvScalar: float value
};

}  // namespace ws

// weightstream — the model loader's scan of tensor data for a convention's warnings (internal;
// ConventionDataWarning in ../conventions/convention_descriptor.h, the codes in warning.h).
//
// One piece at a time: the loader starts the scan at a piece's first byte (the stream's
// TensorBegin, or the first range it reads of it), feeds every byte in file order and pieces of
// any size, and ends it at the piece's end. Units split across two feeds are joined in a small
// carry. Nothing allocates; the state lives in the loader's opaque storage.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/conventions.h"
#include "weightstream/warning.h"

namespace ws {

struct ConventionDataWarning;

class DataWarningScan {
 public:
  // Starts on tensor (table, index), piece `role` of weight `w` (lw), when lw's convention scans
  // it; false (and nothing started) otherwise.
  bool begin(const LogicalWeight& lw, uint32_t w, PieceRole role, uint32_t table, uint32_t index);
  bool on(uint32_t table, uint32_t index) const { return active_ && table_ == table && index_ == index; }
  // The piece's bytes at absolute file offset `offset`, in order.
  void feed(uint64_t offset, const uint8_t* data, size_t size);
  // Ends the scan. True when it found instances: code, offset (the first instance's unit), weight
  // and count into *out (the loader adds the file and the tensor's name).
  bool end(Warning* out);

 private:
  void unit(const uint8_t* p, uint64_t offset);

  const ConventionDataWarning* dw_ = nullptr;
  const LogicalWeight* lw_ = nullptr;
  uint64_t first_ = 0, count_ = 0, carry_at_ = 0;
  uint32_t w_ = 0, table_ = 0, index_ = 0, unit_ = 0, carried_ = 0;
  bool active_ = false;
  uint8_t carry_[16] = {};
};

}  // namespace ws

// weightstream — load plans and GPU packing for logical weights.
//
// A quantized weight arrives as up to four pieces (packed, scales, biases, global scale), each a
// byte range of its file, in file order. Decoding needs every companion whole before the packed
// bytes pass, so:
//   - sequential (a stream that cannot seek): if the packed piece comes before its last companion
//     it must be buffered whole; scratch = companions + (that case ? packed : 0).
//   - seekable (files, HTTP Range): read the companions first, then the packed piece one chunk at
//     a time; scratch = companions + min(chunk, packed).
// plan_model() sweeps a whole file in order and gives each mode's peak (weights that overlap in
// the stream are held at the same time).
//
// GPU packing: one buffer per weight laid out [packed | scales | biases] (each part aligned), or
// several weights fused with all packed parts first, then all scales, then all biases. Pieces are
// written at their offsets as they arrive, in any order.
#pragma once

#include <stdint.h>

#include "weightstream/conventions.h"

namespace ws {

// GPTQ (QuantFormat::GptqPacked): the packed qweight is stored [in * bits / 32, out] and decoded
// as [out, in], down its columns, so both modes hold it whole (its stored bytes; never a decoded
// copy), and the words pass to the decoder through a buffer of this many bytes.
constexpr uint64_t kTransposeScratchBytes = 4096;

struct LoadPiece {
  PieceRole role = PieceRole::Packed;
  uint64_t begin = 0, end = 0;  // absolute offsets in the piece's file, [begin, end)
  uint64_t size() const { return end - begin; }
};

struct LoadPlan {
  uint32_t piece_count = 0;
  LoadPiece pieces[kPieceRoles];  // in file order
  bool packed_before_companion = false;  // the sequential case that buffers the packed piece
  uint64_t companion_bytes = 0;
  uint64_t sequential_scratch = 0;
  uint64_t seekable_scratch = 0;
  // Seekable: the ranges to request, companions first, then the packed piece (the caller reads it
  // in chunks of the planned size).
  uint32_t schedule_count = 0;
  LoadPiece schedule[kPieceRoles];
};

// Plan of one logical weight; `chunk` is the caller's read size for seekable mode (> 0).
LoadPlan plan_weight(const LogicalModel& m, uint32_t weight, uint64_t chunk);

struct ModelPlan {
  uint64_t sequential_peak = 0;  // most bytes held at once streaming every table in file order
  uint64_t seekable_peak = 0;    // the largest single weight's seekable scratch
};
ModelPlan plan_model(const LogicalModel& m, uint64_t chunk);

struct GpuLayout {
  uint64_t offset[3] = {};  // packed, scales, biases: byte offsets in the buffer
  uint64_t size[3] = {};
  uint64_t total = 0;
  // Where a piece's byte `at` (relative to the piece) goes; GlobalScale is not packed (a uniform).
  uint64_t dest(PieceRole r, uint64_t at) const { return offset[uint32_t(r)] + at; }
};

// One weight: [packed | scales | biases], each part starting at a multiple of `align`
// (a power of two; WebGPU writeBuffer needs 4).
GpuLayout gpu_layout(const LogicalModel& m, uint32_t weight, uint32_t align);
// Fused: all packed parts (in the given order), then all scales, then all biases; out[i] holds
// weight i's offsets in the shared buffer. Returns the buffer size.
uint64_t gpu_fused_layout(const LogicalModel& m, const uint32_t* weights, uint32_t n, uint32_t align,
                          GpuLayout* out);

}  // namespace ws

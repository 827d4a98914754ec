// The conventions tests' oracle for a logical weight: its values computed from its pieces' bytes
// with the formulas of FORMATS.md §2/§3 (tests/support/quant_oracle.h), independent of lib/'s
// kernels.
#pragma once

#include <stdint.h>

#include <vector>

#include "weightstream/conventions.h"
#include "weightstream/dtype.h"

namespace convtest {

// Tensor bytes of a model by [table][tensor] (one table per file).
using Bytes = std::vector<std::vector<std::vector<uint8_t>>>;

// The bytes of `w`'s piece in role `r`, whichever table (file) it is in.
const std::vector<uint8_t>& piece(const Bytes& b, const ws::LogicalWeight& w, ws::PieceRole r);

// Element i of a little-endian BF16, F16 or F32 array (any other dtype is read as F32).
float float_at(ws::DType d, const uint8_t* p, uint64_t i);

// Every value of `w` as f32: quantized weights (affine, MXFP4, MXFP8, NVFP4) from their packed
// codes and companions, an unquantized weight from its packed piece read as `plain_dtype`.
std::vector<float> oracle_values(const ws::LogicalWeight& w, const Bytes& b, ws::DType plain_dtype);

}  // namespace convtest

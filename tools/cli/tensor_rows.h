// weightstream CLI — dequant's rows for a file's tensors as the file stores them (a plain or
// GGUF file, a split GGUF model's splits, a companion asked for by name): each with its decoding,
// or why it has none (a type without a decoder, a kernel this build lacks, a size that is not
// whole blocks), checked before any byte is read.
#pragma once

#include <vector>

#include "dequant_output.h"
#include "weightstream/reader.h"

namespace wscli {

std::vector<DequantTensor> plan_tensors(const ws::Reader& reader, bool f16);

}  // namespace wscli

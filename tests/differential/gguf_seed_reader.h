// Reads a GGUF file into the tests' GGUF writer's description (wsgguf::Spec), so that the mutator
// can change it field by field and write it again. The tests' own reading of the format (FORMATS.md
// §5, ggml's grammar), not the library's: the differential test must not mutate through the code
// it tests.
#pragma once

#include <string>

#include "gguf_writer.h"

namespace wsdiff {

// Fills *spec from `bytes`: version, every KV (typed values), every tensor info (name, type, ne;
// offsets are left to the writer's layout), the layout alignment (general.alignment when it is a
// u32 power of two, else 32) and the BitNet flag (general.architecture starting with "bitnet").
// False when the header is not complete and well-formed enough to be described (a malformed seed:
// the mutator then only changes its bytes).
bool read_seed(const std::string& bytes, wsgguf::Spec* spec);

}  // namespace wsdiff

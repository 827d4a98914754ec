// weightstream — plain: every tensor a weight of its own, as stored (a safetensors model without a
// quantization convention, GGUF's self-contained blocks, any model loaded as_stored).
//
// What no other convention claims. A config.json beside it is read, since its quantization section
// would make the model MLX's.
#include "convention_descriptor.h"

namespace ws {

namespace {

Status plain_build(LogicalModel& m, const MlxQuantConfig*) { return m.build_plain(); }

}  // namespace

const ConventionDescriptor kPlainConvention = {
    "plain", Convention::Plain, true, /*rank*/ 255, kNoEntry, nullptr, ConfigRole::MaySignalOther,
    /*data_phase*/ nullptr, nullptr, 0, plain_build, nullptr, nullptr};

}  // namespace ws

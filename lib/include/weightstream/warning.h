// weightstream — warnings: what the library reads and decodes, but a reader of the model may read
// otherwise. A warning never stops a load; the model loader hands each one out as a
// ModelEventType::Warning event (model_loader.h: ModelLoader::warning()), and hosts show it beside
// the verdict with its code, file, tensor and byte offset.
//
// Codes are stable API, like statuses (status.h): their spelling is what the CLI, its JSON output
// and the JS package print. Each has a one-sentence description and a fix, here, once.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ws {

// X(name, description, fix).
//
// GptqZeroSpill (issue #28): a GPTQ checkpoint_format "gptq" (v1) stores each zero point minus one
// (AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py QuantLinear.pack: `zeros -= 1`, then
// `zeros.numpy().astype(np.uint32)` OR-ed into int32 lanes). An asymmetric (sym: false) group whose
// zero point is 0 stores -1: an all-ones lane whose ones are OR-ed into every lane above it in the
// word (GPTQModel's export, gptqmodel/utils/model.py convert_gptq_v2_to_v1_format_module, subtracts
// 0x11..1 from the word instead: the -1 borrows from the lane above). Readers disagree on it: vLLM
// (csrc/quantization/gptq/q_gemm.cu, zero + 1 per lane, `zero_offset` 1 unless gptq_v2) reads
// such a lane as 2^bits; GPTQModel's v1 -> v2 conversion (convert_gptq_v1_to_v2_format_module,
// qzeros += 0x11..1 over the whole word, carries included), which transformers / optimum load
// through (hf_convert_gptq_v1_to_v2_format), reads it as 0, and the lanes above it differently
// too. Symmetric models (zero point 2^(bits-1)) and gptq_v2 never store it.
#define WS_WARNING_LIST(X)                                                                               \
  X(None, "no warning", "")                                                                               \
  X(GptqZeroSpill,                                                                                        \
    "a GPTQ v1 (checkpoint_format gptq) zero point is stored as -1 (an all-ones lane): a zero point of 0 " \
    "whose ones spill into the lanes above it; decoded as vLLM reads it (2^bits), where GPTQModel's v1 "  \
    "to v2 conversion (transformers, optimum) reads 0 and the lanes above it otherwise",                   \
    "Its values for these groups depend on the runtime: requantize with sym=True, or export as "          \
    "checkpoint_format gptq_v2 (GPTQModel), which stores a zero point of 0 as 0")

enum class WarningCode : uint16_t {
#define WS_WARNING_ENUM(name, desc, fix) name,
  WS_WARNING_LIST(WS_WARNING_ENUM)
#undef WS_WARNING_ENUM
      Count_
};

// "GptqZeroSpill"; "Unknown" outside the enum.
const char* warning_name(WarningCode c);
// One sentence saying what was found.
const char* warning_description(WarningCode c);
// What to do about it ("" for None).
const char* warning_fix(WarningCode c);
// Parses a name back (bindings, tests). False if unknown.
bool warning_from_name(const char* name, WarningCode* out);

// One warning, as the model loader hands it out (ModelLoader::warning()).
struct Warning {
  WarningCode code = WarningCode::None;
  uint32_t file = 0xFFFFFFFFu;     // the loader's file number (ModelLoader::file_name())
  uint64_t offset = 0;             // absolute offset in that file of the first instance
  uint32_t weight = 0xFFFFFFFFu;   // the logical weight it concerns
  const char* tensor_name = nullptr;  // the stored tensor it was found in (a view into the arena)
  uint64_t tensor_name_size = 0;
  uint64_t count = 0;              // instances in that tensor (GptqZeroSpill: all-ones lanes)
};

// The warning as one line for people, written to out (cap bytes, NUL-terminated, cut to fit):
// "<description>: <count> in this tensor. <fix>". Returns the length it needed (without the NUL),
// so a return >= cap means it was cut. Hosts print this instead of composing their own.
size_t warning_message(const Warning& w, char* out, size_t cap);

}  // namespace ws

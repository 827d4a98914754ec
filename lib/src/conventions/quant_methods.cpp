// weightstream — quantization schemes this reader recognises but does not decode: refused by name.
//
// Most quantized models on the Hugging Face Hub are plain safetensors whose meaning is in
// config.json's `quantization_config` (its `quant_method`) and in companion tensors beside each
// weight. Read as plain tensors they give wrong numbers (an FP8 weight without its block scale);
// read as MLX they are blamed for companions MLX does not have (GPTQ's `scales`). So a model whose
// config.json names a quant_method, or whose tensor names are a known scheme's, is refused with
// QuantizationUnsupported, the method and a tensor of it named, before any convention builds it.
//
// Sources: the methods transformers knows are its utils/quantization_config.py QuantizationMethod
// values (huggingface/transformers); "modelopt" is vLLM's and NVIDIA ModelOpt's
// (hf_quant_config.json). The companion names are those the Hub's own parser lists
// (huggingface.js packages/hub/src/lib/parse-safetensors-metadata.ts,
// QUANTIZATION_AUXILIARY_SUFFIXES / BITSANDBYTES_AUXILIARY_SUFFIXES) and the writers': DeepSeek-V3
// inference/fp8_cast_bf16.py (`weight_scale_inv`), vllm-project/compressed-tensors
// compressors/quantized_compressors/pack_quantized.py (`weight_packed`, `weight_shape`), AutoGPTQ
// nn_modules/qlinear/qlinear_cuda_old.py and AutoAWQ awq/modules/linear/gemm.py (`qweight`,
// `qzeros`), transformers integrations/mxfp4.py (gpt-oss
// `<p>_blocks`, `<p>_scales`).
#include <string.h>

#include "convention_descriptor.h"
#include "name_match.h"
#include "weightstream/mlx_config.h"

namespace ws {

using namespace conv;

namespace {

// transformers' QuantizationMethod values (utils/quantization_config.py), plus ModelOpt's.
const char* const kKnownMethods[] = {
    "bitsandbytes", "gptq", "awq", "aqlm", "vptq", "quanto", "eetq", "higgs", "hqq",
    "compressed-tensors", "fbgemm_fp8", "torchao", "bitnet", "spqr", "fp8", "quark", "fp_quant",
    "auto-round", "mxfp4", "metal", "fouroversix", "sinq", "modelopt"};

// A scheme told by its tensor names: a tensor ending in `first` (the one the error names) and,
// when `second` is set, one ending in (or, `infix`, containing) `second` anywhere in the model.
struct NamedScheme {
  const char* method;  // what the error says
  const char* first;
  const char* second;
  bool infix;
};

// In order of precedence (the first whose names are all present wins). bitsandbytes' names
// (`.absmax` + `.quant_state.bitsandbytes__*`, `.SCB`) are its row's claim (bnb_convention.cpp).
const NamedScheme kNamedSchemes[] = {
    {"fp8, by its companion names (.weight_scale_inv)", ".weight_scale_inv", nullptr, false},
    {"gptq or awq, by their companion names (.qweight + .qzeros)", ".qweight", ".qzeros", false},
    {"mxfp4 (gpt-oss), by its companion names (_blocks + _scales)", "_blocks", "_scales", false},
    {"fp8, compressed-tensors or modelopt, by its companion name (.weight_scale)", ".weight_scale", nullptr,
     false},
};
constexpr uint32_t kSchemeCount = sizeof kNamedSchemes / sizeof kNamedSchemes[0];

bool contains(const StrView& s, const char* text) {
  const size_t n = strlen(text);
  for (size_t p = 0; p + n <= s.size; ++p)
    if (memcmp(s.data + p, text, n) == 0) return true;
  return false;
}

bool matches(const StrView& name, const char* text, bool infix) {
  size_t base = 0;
  return infix ? contains(name, text) : ends_with(name, text, &base);
}

// One pass over every tensor name: which scheme names are present, and the first tensor of each
// scheme's `first` name.
struct NameScan {
  bool first_seen[kSchemeCount] = {};
  bool second_seen[kSchemeCount] = {};
  TensorRef first_at[kSchemeCount];
};

void scan_names(const LogicalModel& m, NameScan* scan) {
  for (uint32_t t = 0; t < m.table_count(); ++t) {
    const TensorTable& tab = m.table(t);
    for (uint32_t i = 0; i < tab.count(); ++i) {
      const StrView name = tab.get(i).name;
      for (uint32_t k = 0; k < kSchemeCount; ++k) {
        const NamedScheme& s = kNamedSchemes[k];
        if (matches(name, s.first, false) && !scan->first_seen[k]) {
          scan->first_seen[k] = true;
          scan->first_at[k] = TensorRef{t, i};
        }
        if (s.second && matches(name, s.second, s.infix)) scan->second_seen[k] = true;
      }
    }
  }
}

bool known_method(const StrView& method) {
  for (const char* k : kKnownMethods)
    if (method.equals(k)) return true;
  return false;
}

}  // namespace

bool quantization_named_by_tensors(const LogicalModel& m) {
  NameScan scan;
  scan_names(m, &scan);
  for (uint32_t k = 0; k < kSchemeCount; ++k)
    if (scan.first_seen[k] && (!kNamedSchemes[k].second || scan.second_seen[k])) return true;
  return false;
}

bool quant_method_known(const char* method, size_t n) { return known_method(StrView{method, n}); }

Status LogicalModel::refuse(Status s, TensorRef at, const char* a, size_t an, const char* b) {
  size_t n = an < sizeof refusal_ - 1 ? an : sizeof refusal_ - 1;
  memcpy(refusal_, a, n);
  if (b) {
    const size_t bn = strlen(b);
    const size_t room = sizeof refusal_ - 1 - n;
    memcpy(refusal_ + n, b, bn < room ? bn : room);
    n += bn < room ? bn : room;
  }
  refusal_[n] = '\0';
  detail_ = StrView{refusal_, n};
  StrView name;
  if (at.present()) name = tensor(at).name;
  return fail(s, at, name);
}

Status refuse_undecoded_quantization(LogicalModel& m, const MlxQuantConfig* config, bool by_names) {
  NameScan scan;
  if (config && config->has_method()) {
    // (A method a row decodes was claimed by it: choose_convention().) Every other one is refused
    // by name: the tensor named is the first of a scheme the names show, else the model's first.
    scan_names(m, &scan);
    TensorRef at;
    if (m.table_count() && m.table(0).count()) at = TensorRef{0, 0};
    for (uint32_t k = 0; k < kSchemeCount; ++k)
      if (scan.first_seen[k]) {
        at = scan.first_at[k];
        break;
      }
    const StrView method = config->method();
    // config.json's quant_method, or the other file that named the method (its name).
    const bool cj = config->source() == ConfigSource::ConfigJson;
    char other[40] = " (";
    strcat(other, config_source_file(config->source()));
    strcat(other, ")");
    const char* tail = config->method_truncated()                  ? (cj ? "... (config.json quant_method)" : "...")
                       : known_method(method) ? (cj ? " (config.json quant_method)" : other)
                                              : (cj ? " (config.json quant_method, a method transformers does not know)" : other);
    return m.refuse(Status::QuantizationUnsupported, at, method.data, method.size, tail);
  }
  if (!by_names) return Status::Ok;
  scan_names(m, &scan);
  for (uint32_t k = 0; k < kSchemeCount; ++k) {
    const NamedScheme& s = kNamedSchemes[k];
    if (!scan.first_seen[k] || (s.second && !scan.second_seen[k])) continue;
    return m.refuse(Status::QuantizationUnsupported, scan.first_at[k], s.method, strlen(s.method), nullptr);
  }
  return Status::Ok;
}

}  // namespace ws

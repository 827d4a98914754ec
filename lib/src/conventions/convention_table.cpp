// weightstream — the one table of conventions, and what the loader and hosts ask of it.
//
// A row per convention (each defined in its own file); its position is its id. Adding one is a row
// here and its descriptor file (lib/src/conventions/README.md); nothing else chooses among them.
#include <string.h>

#include "convention_descriptor.h"
#include "name_match.h"
#include "weightstream/dtype.h"

namespace ws {

namespace {

// By id: the position is the id the descriptor states (checked below).
const ConventionDescriptor* const kRows[] = {&kPlainConvention, &kMlxConvention, &kOllamaConvention,
                                             &kUqffConvention,  &kFp8Convention, &kMxfp4BlocksConvention,
                                             &kModelOptNvfp4Convention, &kCompressedTensorsConvention,
                                             &kGptqConvention,  &kAwqConvention,   &kBnbConvention};
constexpr uint32_t kRowCount = sizeof kRows / sizeof kRows[0];

}  // namespace

const ConventionDescriptor* const* convention_rows(uint32_t* count) {
  *count = kRowCount;
  return kRows;
}

const ConventionDescriptor& convention_descriptor(Convention c) {
  return c.id < kRowCount ? *kRows[c.id] : kPlainConvention;
}

ConventionInfo convention_info(Convention c) {
  ConventionInfo i;
  if (c.id >= kRowCount) return i;
  i.name = kRows[c.id]->name;
  i.plain = kRows[c.id]->plain;
  return i;
}

const char* convention_name(Convention c) { return convention_info(c).name; }

const char* status_hint(Status s, Convention c) {
  const char* own = c.id < kRowCount && kRows[c.id]->hint ? kRows[c.id]->hint(s) : nullptr;
  return own ? own : status_hint(s);
}

uint32_t convention_count() { return kRowCount; }

uint32_t convention_signal_bits(const TensorTable& table) {
  uint32_t bits = 0;
  for (uint32_t i = 0; i < kRowCount; ++i)
    if (kRows[i]->metadata_signal && kRows[i]->metadata_signal(table)) bits |= 1u << kRows[i]->id.id;
  return bits;
}

const ConventionDescriptor& resolve_convention(uint8_t entry, uint32_t signal_bits, bool config_quantized) {
  const ConventionDescriptor* best = &kPlainConvention;
  for (uint32_t i = 0; i < kRowCount; ++i) {
    const ConventionDescriptor& d = *kRows[i];
    const bool claims = (d.entry != kNoEntry && d.entry == entry) || (signal_bits >> d.id.id & 1u) != 0 ||
                        (config_quantized && d.config == ConfigRole::ParamSource);
    if (claims && d.rank < best->rank) best = &d;
  }
  return *best;
}

namespace {

const ConventionDescriptor* first_claim(const LogicalModel& m, const MlxQuantConfig* config) {
  for (uint32_t i = 0; i < kRowCount; ++i)
    if (kRows[i]->claims && kRows[i]->claims(m, config)) return kRows[i];
  return nullptr;
}

}  // namespace

const ConventionDescriptor& choose_convention(uint8_t entry, uint32_t signal_bits, bool config_quantized,
                                              const LogicalModel& m, const MlxQuantConfig* config,
                                              bool* claimed) {
  *claimed = false;
  // 1. The method the quantization config names: the runtime that loads the model next decodes
  //    what the config says (transformers picks its quantizer by quant_method), whatever else the
  //    files signal.
  const bool method_named = config && config->has_method() && !config->method_truncated();
  if (method_named) {
    if (const ConventionDescriptor* d = first_claim(m, config)) {
      *claimed = true;
      return *d;
    }
  }
  // 2. The entry, the files' metadata, a config quantization section without a method (MLX's).
  const ConventionDescriptor& resolved = resolve_convention(entry, signal_bits, config_quantized);
  if (!resolved.plain || (config && config->has_method())) return resolved;
  // 3. A model those leave plain, whose config names no method: the tensor names.
  if (const ConventionDescriptor* d = first_claim(m, config)) {
    *claimed = true;
    return *d;
  }
  return resolved;
}

Convention convention_signal(const TensorTable& table) {
  return resolve_convention(kNoEntry, convention_signal_bits(table), false).id;
}

DequantSpec LogicalWeight::spec() const {
  DequantSpec s;
  s.format = format;
  s.elements = elements;
  if (params.mode != QuantMode::None) {
    s.bits = params.bits;
    s.group = params.group;
    s.scale_dtype = scale_dtype;
  }
  const ConventionDescriptor& d = convention_descriptor(convention);
  if (d.spec) d.spec(*this, &s);
  return s;
}

uint32_t quant_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  const ConventionDescriptor& d = convention_descriptor(w.convention);
  return d.parameters ? d.parameters(w, out, cap) : 0;
}

uint32_t put_parameter(QuantParameter* out, uint32_t cap, uint32_t n, const char* key, const char* text,
                       uint64_t number) {
  if (n < cap) {
    out[n].key = key;
    out[n].text = text;
    out[n].number = number;
  }
  return n + 1;
}

bool first_qweight_shapes(const LogicalModel& m, uint64_t qs[2], uint64_t ss[2]) {
  using namespace conv;
  for (uint32_t t = 0; t < m.table_count(); ++t)
    for (uint32_t i = 0; i < m.table(t).count(); ++i) {
      const StrView name = m.table(t).get(i).name;
      size_t base = 0;
      if (!ends_with(name, ".qweight", &base)) continue;
      for (uint32_t u = 0; u < m.table_count(); ++u)
        for (uint32_t j = 0; j < m.table(u).count(); ++j) {
          const TensorInfo s = m.table(u).get(j);
          if (!equals_concat(s.name, name.data, base, ".scales")) continue;
          const TensorInfo q = m.table(t).get(i);
          return q.rank == 2 && s.rank == 2 && q.copy_shape(qs, 2) == 2 && s.copy_shape(ss, 2) == 2;
        }
      return false;
    }
  return false;
}

const CompanionName kQweightRenamed = {".qweight", ".weight", false};

uint32_t mlx_layout_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap, uint32_t n) {
  if (w.params.mode == QuantMode::None) return n;
  n = put_parameter(out, cap, n, "mode", quant_mode_name(w.params.mode));
  n = put_parameter(out, cap, n, "bits", nullptr, w.params.bits);
  n = put_parameter(out, cap, n, "group", nullptr, w.params.group);
  return put_parameter(out, cap, n, "scale_dtype", dtype_name(w.scale_dtype));
}

}  // namespace ws

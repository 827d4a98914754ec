// weightstream — UQFF (FORMATS.md §4; mistral.rs): `<key>.weight` with `<key>.weight.<x>`
// companions whose set names the layer's type, and scalars (format tag, GGML type, shape, bits,
// group, blocks) read from tensor data before the layer can be decoded (uqff_layers.cpp).
//
// Signalled by its entry alone (the .uqff files of a directory); config.json is not read.
#include "convention_descriptor.h"
#include "weightstream/model_loader.h"
#include "weightstream/uqff.h"

namespace ws {

namespace {

Status uqff_build(LogicalModel& m, const MlxQuantConfig*) { return m.build_uqff(); }

uint32_t uqff_parameters(const LogicalWeight& w, QuantParameter* out, uint32_t cap) {
  const uint32_t n = put_parameter(out, cap, 0, "type", uqff_type_name(UqffType(w.uqff_type)));
  return mlx_layout_parameters(w, out, cap, n);
}

const CompanionName kUqffCompanions[] = {{".weight.", ".weight", true}};

// The layers' scalar tensors and the version tensors (uqff_layers.cpp).
bool uqff_data_wants(const LogicalModel& m, uint32_t table, uint32_t tensor) { return m.uqff_wants(table, tensor); }
Status uqff_data_feed(LogicalModel& m, uint32_t table, uint32_t tensor, uint64_t offset, const uint8_t* data,
                      size_t size) {
  return m.feed_uqff(table, tensor, offset, data, size);
}
Status uqff_data_resolve(LogicalModel& m) { return m.resolve_uqff(); }
const ConventionDataPhase kUqffDataPhase = {uqff_data_wants, uqff_data_feed, uqff_data_resolve};

// The fixes in UQFF's words (mistral.rs writes the AFQ widths and groups FORMATS.md §4 lists).
const char* uqff_hint(Status s) {
  if (s != Status::ConventionBitsNotAllowed) return nullptr;
  return "mistral.rs writes AFQ layers of 2, 3, 4, 6 or 8 bits in groups of 32, 64 or 128: the file is corrupt "
         "or was not written by mistral.rs.";
}

}  // namespace

const ConventionDescriptor kUqffConvention = {
    "uqff", Convention::Uqff, false, /*rank*/ 0, uint8_t(ModelEntry::UqffFiles), nullptr, ConfigRole::Ignored,
    &kUqffDataPhase, kUqffCompanions, 1, uqff_build, nullptr, uqff_parameters, /*claims*/ nullptr,
    /*renamed*/ nullptr, /*data_warning*/ nullptr, uqff_hint};

}  // namespace ws

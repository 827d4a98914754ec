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

}  // namespace

const ConventionDescriptor kUqffConvention = {
    "uqff", Convention::Uqff, false, /*rank*/ 0, uint8_t(ModelEntry::UqffFiles), nullptr, ConfigRole::Ignored,
    /*data_scalars*/ true, kUqffCompanions, 1, uqff_build, nullptr, uqff_parameters};

}  // namespace ws

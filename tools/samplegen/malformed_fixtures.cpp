// ws-make-samples — malformed neighbours of the upstream-convention fixtures (see
// malformed_fixtures.h).
#include "malformed_fixtures.h"

#include <string.h>

#include "convention_fixtures.h"
#include "uqff_fixtures.h"

namespace samplegen {

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// The offset of a tensor's header entry (its quoted name) in a safetensors file.
uint64_t entry_offset(const std::vector<uint8_t>& file, const std::string& name) {
  const std::string s(file.begin(), file.end());
  return s.find("\"" + name + "\"");
}

RawTensor* find(std::vector<RawTensor>* t, const std::string& name) {
  for (RawTensor& r : *t)
    if (r.name == name) return &r;
  return nullptr;
}

// A tensor's shape changed, its data resized to match (bytes per element kept).
void reshape(std::vector<RawTensor>* t, const std::string& name, std::vector<uint64_t> shape) {
  RawTensor* r = find(t, name);
  const uint64_t per = r->data.size() / element_count(r->shape);
  r->shape = shape;
  r->data.resize(element_count(shape) * per);
  for (size_t i = 0; i < r->data.size(); ++i) r->data[i] = uint8_t(0x21 + i % 13);
}

// The malformed Ollama models' blob digests: their SHA-256, so only the convention error is wrong
// with them (checked by tests/conventions/fixture_files_test.cpp).
const char kNotInferable[] = "5674dd6b32900fe614bcf170d702367c1ffa9769d3c286d2a545b606da3d4eea";
const char kAmbiguous[] = "967f191b088953e792ee8a314a69bee5a50f4a41e00cde8ea092f5e9fda8d225";

MalformedCase mlx_case(const std::string& dir, const MlxFixture& f, const std::string& config) {
  MalformedCase c;
  c.dir = dir;
  c.kind = "mlx";
  c.open = "model.safetensors";
  c.file = "model.safetensors";
  c.files = {{"model.safetensors", mlx_file_bytes(f)}, {"config.json", bytes_of(config)}};
  return c;
}

MalformedCase ollama_case(const std::string& dir, const OllamaFixture& blob, const char* hex, const std::string& layer) {
  MalformedCase c;
  c.dir = dir;
  c.kind = "ollama";
  c.open = "manifest.json";
  c.file = ollama_blob_file(hex);
  const std::vector<uint8_t> b = ollama_blob_bytes(blob);
  c.files = {{"manifest.json", bytes_of(ollama_manifest_json({{hex, b.size(), layer}}))},
             {"blobs/" + ollama_blob_file(hex), b}};
  return c;
}

MalformedCase uqff_case(const std::string& dir, const UqffVariant& v, const std::string& description) {
  MalformedCase c;
  c.dir = dir;
  c.kind = "uqff";
  c.open = "model-0.uqff";
  c.status = v.status;
  const UqffFile& f = v.fixture.files[v.file];
  c.file = f.name;
  const std::string at = v.at.empty() ? v.tensor : v.at;
  c.offset = v.data_offset ? uqff_data_offset(f, at) : uqff_entry_offset(f, at);
  c.tensor = v.tensor;
  c.found = v.found;
  c.expected = v.expected;
  c.description = description;
  for (const UqffFile& file : v.fixture.files) c.files.push_back({file.name, uqff_file_bytes(file)});
  return c;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::vector<MalformedCase> malformed_cases() {
  std::vector<MalformedCase> out;
  const std::string L = "model.layers.0.";
  {  // Issue #16: rows of no words, matching empty scales and biases, bits and group given.
    MlxFixture f;
    f.tensors = {RawTensor{L + "mlp.gate_proj.biases", "BF16", {4, 0}, {}},
                 RawTensor{L + "mlp.gate_proj.scales", "BF16", {4, 0}, {}},
                 RawTensor{L + "mlp.gate_proj.weight", "U32", {4, 0}, {}},
                 RawTensor{"model.norm.weight", "F32", {4}, std::vector<uint8_t>(16, 0)}};
    f.data_order = {3, 0, 1, 2};
    MalformedCase c = mlx_case("mlx-empty-rows", f, "{\"quantization\": {\"group_size\": 64, \"bits\": 4}}\n");
    c.status = "ConventionCompanionShape";
    c.tensor = L + "mlp.gate_proj.weight";
    c.offset = entry_offset(c.files[0].bytes, c.tensor);
    c.found = 0;
    c.description =
        "issue #16: a U32 weight [4, 0] with BF16 scales and biases [4, 0], 4-bit g64 from config.json; "
        "finish_quantized divided by the empty last dimension (UBSan; a wasm trap in JS). Rows of no words "
        "have no group, and no MLX writer makes them";
    out.push_back(c);
  }
  {  // An override MLX cannot build: mxfp4 has 4 bits.
    MalformedCase c = mlx_case("mlx-override-impossible", mlx_overrides_fixture(),
                               mlx_overrides_config("{\"mode\": \"mxfp4\", \"bits\": 8}",
                                                    "\"group_size\": 32, \"bits\": 4, \"mode\": \"mxfp4\""));
    c.status = "ConventionBitsNotAllowed";
    c.tensor = L + "mlp.shared_expert_gate.weight";
    c.offset = entry_offset(c.files[0].bytes, c.tensor);
    c.found = 8;
    c.description =
        "mlx-overrides/ with the shared expert gate's override {\"mode\": \"mxfp4\", \"bits\": 8}: "
        "to_quantized raises (mxfp4 needs 4 bits), at the weight's header entry";
    out.push_back(c);
  }
  {  // A top level without bits: mlx-lm's load_model reads quantization["bits"].
    const std::string config = mlx_overrides_config("{\"bits\": 8}", "\"group_size\": 32, \"mode\": \"mxfp4\"");
    MalformedCase c = mlx_case("mlx-no-bits", mlx_overrides_fixture(), config);
    c.status = "ConfigQuantizationIncomplete";
    c.file = "config.json";
    c.offset = config.find("\n  },\n  \"quantization_config\"") + 3;  // the section's closing brace
    c.description =
        "mlx-overrides/ whose quantization section states group_size and mode but no bits: mlx-lm's "
        "load_model indexes quantization[\"bits\"] (a KeyError), whatever the overrides say; at the "
        "section's closing brace in config.json";
    out.push_back(c);
  }
  {  // No quant_type, and 6 words / 1 scale per row: g4 = 48, g8 = 24, no common group.
    OllamaFixture blob = ollama_inferred_fixture().plain;
    const std::string k = L + "self_attn.k_proj.weight";
    reshape(&blob.tensors, k, {2, 6});
    MalformedCase c = ollama_case("ollama-not-inferable", blob, kNotInferable, L + "self_attn.q_proj.weight");
    c.status = "ConventionGroupNotInferable";
    c.tensor = k;
    c.offset = entry_offset(c.files[1].bytes, k);
    c.found = 6;
    c.expected = 1;
    c.description =
        "ollama-inferred/'s first blob (no quant_type) with k_proj [2, 6] U32 and one scale per row: "
        "g4 = 48, g8 = 24 fit no group of 16, 32, 64, 128 (Ollama's inferQuantTypeFromShapes gives nothing)";
    out.push_back(c);
  }
  {  // No quant_type, and 16 words / 2 scales per row: int4 g64 and int8 g32 both fit.
    OllamaFixture blob = ollama_inferred_fixture().plain;
    const std::string q = L + "self_attn.q_proj.weight";
    reshape(&blob.tensors, q, {4, 16});
    MalformedCase c = ollama_case("ollama-ambiguous", blob, kAmbiguous, q);
    c.status = "ConventionGroupNotInferable";
    c.tensor = q;
    c.offset = entry_offset(c.files[1].bytes, q);
    c.found = 16;
    c.expected = 2;
    c.description =
        "ollama-inferred/'s first blob with q_proj [4, 16] U32 and 2 scales per row: g4 = 64 and g8 = 32, "
        "which only a quant_type naming 4 or 8 bits decides; the blob has none";
    out.push_back(c);
  }
  for (const UqffVariant& v : uqff_f8q8_variants()) {
    if (v.name == "f8q8-blocks-short")
      out.push_back(uqff_case("uqff-blocks-short", v,
                              "uqff-f8q8/ with q_proj's num_blocks 1: [3, 20] = 60 values take ceil(60 / 32) = 2 "
                              "blocks; at num_blocks' data in model-0.uqff"));
    if (v.name == "f8q8-blocks-long")
      out.push_back(uqff_case("uqff-blocks-long", v,
                              "uqff-f8q8/ with the expert down_proj's num_blocks 3: [2, 3, 7] = 42 values take 2 "
                              "blocks, and mistral.rs writes exactly that many; at num_blocks' data in model-1.uqff"));
    if (v.name == "version-copy-differs")
      out.push_back(uqff_case("uqff-version-differs", v,
                              "uqff-f8q8/ whose model-1.uqff repeats the version as 1.1.0 (model-0.uqff: 1.2.0): "
                              "identical copies are accepted, this one is not; at the copy's data"));
  }
  return out;
}

std::vector<SampleFile> build_malformed_fixtures() {
  std::vector<SampleFile> out;
  std::string json = "{\"cases\":[\n";
  const std::vector<MalformedCase> cases = malformed_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const MalformedCase& c = cases[i];
    for (const SampleFile& f : c.files) out.push_back({"malformed/" + c.dir + "/" + f.path, f.bytes});
    json += std::string(" {\"dir\": ") + json_string(c.dir) + ", \"kind\": " + json_string(c.kind) +
            ", \"open\": " + json_string(c.open) + ", \"status\": " + json_string(c.status) +
            ", \"file\": " + json_string(c.file) + ", \"offset\": " + std::to_string(c.offset) +
            ", \"tensor\": " + (c.tensor.empty() ? std::string("null") : json_string(c.tensor)) +
            ", \"found\": " + (c.found < 0 ? std::string("null") : std::to_string(c.found)) +
            ", \"expected\": " + (c.expected < 0 ? std::string("null") : std::to_string(c.expected)) +
            ", \"description\": " + json_string(c.description) + "}" + (i + 1 < cases.size() ? ",\n" : "\n");
  }
  json += "]}\n";
  out.push_back({"malformed/expected.json", bytes_of(json)});
  return out;
}

}  // namespace samplegen

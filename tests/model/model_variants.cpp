// Every malformed model variant the model-loader goldens cover, one directory per variant, laid
// out as a user's model directory is (so the CLI and the loader open them by name): UQFF
// directories (samplegen::uqff_malformed_variants, one per reject rule), MLX files with their
// config.json (companions dropped, shapes and configs edited), MLX-bits and Ollama blob edits of
// the committed fixtures (the same edits tests/conventions makes in memory), and sharded models
// with a broken shard, index or a shard not there.
//
// `ws-model-variants OUTDIR` writes them (tests/model/make_goldens.py runs the CLI over them); the
// loader's tests build them in memory and compare the loader with what the CLI printed. Every
// byte comes from the sample generator or from the committed fixtures edited in place
// (same-length patches keep every offset), never from lib/.
#include <stdio.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

#include "model_variants.h"

#include "convention_fixtures.h"
#include "uqff_fixtures.h"

namespace modeltest {
namespace {

using Bytes = std::vector<uint8_t>;

const std::string kFixtures = std::string(WS_SOURCE_DIR) + "/tests/data/conventions";

bool g_failed = false;

VariantDirs* g_out = nullptr;

// "dir/file..." -> the variant dir's file map.
void write(const std::string& path, const Bytes& bytes) {
  const size_t slash = path.find('/', 1);
  (*g_out)[path.substr(1, slash - 1)][path.substr(slash + 1)] = bytes;
}
void write(const std::string& path, const std::string& text) { write(path, Bytes(text.begin(), text.end())); }

Bytes read(const std::string& path) {
  Bytes out;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) {
    fprintf(stderr, "ws-model-variants: cannot read %s\n", path.c_str());
    g_failed = true;
    return out;
  }
  uint8_t buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return out;
}

// Replaces the first `from` (same length: every offset stays valid).
Bytes patched(Bytes file, const std::string& from, const std::string& to) {
  const std::string s(file.begin(), file.end());
  const size_t at = s.find(from);
  if (at == std::string::npos || from.size() != to.size()) {
    fprintf(stderr, "ws-model-variants: cannot patch \"%s\"\n", from.c_str());
    g_failed = true;
    return file;
  }
  memcpy(file.data() + at, to.data(), to.size());
  return file;
}
std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at == std::string::npos) {
    fprintf(stderr, "ws-model-variants: no \"%s\" to replace\n", from.c_str());
    g_failed = true;
    return s;
  }
  return s.replace(at, from.size(), to);
}

void drop(samplegen::MlxFixture* f, const std::string& name) {
  for (size_t i = 0; i < f->tensors.size(); ++i) {
    if (f->tensors[i].name != name) continue;
    f->tensors.erase(f->tensors.begin() + long(i));
    std::vector<size_t> order;
    for (size_t j : f->data_order)
      if (j != i) order.push_back(j > i ? j - 1 : j);
    f->data_order = order;
    return;
  }
  fprintf(stderr, "ws-model-variants: no tensor %s to drop\n", name.c_str());
  g_failed = true;
}

void write_mlx(const std::string& dir, const samplegen::MlxFixture& f, const std::string& config) {
  write(dir + "/model.safetensors", samplegen::serialize_raw(f.tensors, f.data_order, {{"format", "mlx"}}, false));
  if (!config.empty()) write(dir + "/config.json", config);
}

void mlx_variants(const std::string& out) {
  const std::string L = "model.layers.0.";
  samplegen::MlxFixture f = samplegen::mlx_fixture();
  drop(&f, L + "mlp.down_proj.biases");
  write_mlx(out + "/mlx-drop-biases", f, f.config_json);
  f = samplegen::mlx_fixture();
  drop(&f, L + "mlp.down_proj.scales");
  write_mlx(out + "/mlx-drop-scales", f, f.config_json);
  f = samplegen::mlx_fixture();
  for (samplegen::RawTensor& t : f.tensors)
    if (t.name == L + "mlp.down_proj.scales") t.shape = {2, 4};
  write_mlx(out + "/mlx-scales-shape", f, f.config_json);
  f = samplegen::mlx_fixture();
  write_mlx(out + "/mlx-group128", f,
            "{\"quantization\":{\"group_size\":32,\"bits\":4,\"model.layers.0.self_attn.q_proj\":"
            "{\"group_size\":128,\"bits\":3},\"model.layers.0.mlp.up_proj\":{\"mode\":\"mxfp4\"}}}");
  write_mlx(out + "/mlx-bits7", f, "{\"quantization\":{\"group_size\":32,\"bits\":7}}");
  write_mlx(out + "/mlx-config-syntax", f, "{\"quantization\": {\"bits\": 4,, }}");
  write_mlx(out + "/mlx-no-config", f, "");
}

void mlx_bits_variants(const std::string& out) {
  const Bytes file = read(kFixtures + "/mlx-bits/model.safetensors");
  const Bytes cfg = read(kFixtures + "/mlx-bits/config.json");
  const std::string config(cfg.begin(), cfg.end());
  const std::string L = "model.layers.1.";
  auto put = [&](const std::string& name, const Bytes& f, const std::string& c) {
    write(out + "/" + name + "/model.safetensors", f);
    write(out + "/" + name + "/config.json", c);
  };
  put("mlx-bits-7bit", file, replaced(config, "\"bits\": 6", "\"bits\": 7"));
  put("mlx-bits-group64", file,
      replaced(config, "{\"group_size\": 32, \"bits\": 3}", "{\"group_size\": 64, \"bits\": 3}"));
  put("mlx-bits-biases-dtype",
      patched(file, "\"" + L + "mlp.down_proj.biases\":{\"dtype\":\"F32\"", "\"" + L + "mlp.down_proj.biases\":{\"dtype\":\"I32\""),
      config);
  put("mlx-bits-biases-renamed", patched(file, "\"" + L + "self_attn.k_proj.biases\"", "\"" + L + "self_attn.k_proj.biasez\""),
      config);
  put("mlx-bits-scales-renamed", patched(file, "\"" + L + "self_attn.o_proj.scales\"", "\"" + L + "self_attn.o_proj.scalez\""),
      config);
}

void ollama_variants(const std::string& out) {
  const std::string experts = "sha256-5f84d13ac0497a514889d54b7e52149199e29191f6a1575fa6ba1f2297bfdec7";
  const std::string mixed = "sha256-b99a08cf0fefc14b0bf617e61bae6bb42c19f34c2bd1126e50dd9cce7e4d8e42";
  const Bytes manifest = read(kFixtures + "/ollama/manifest.json");
  const Bytes blob = read(kFixtures + "/ollama/blobs/" + experts);
  const Bytes other = read(kFixtures + "/ollama/blobs/" + mixed);
  const std::string P = "model.layers.0.mlp.experts.";
  auto put = [&](const std::string& name, const Bytes* experts_blob, const Bytes* mixed_blob) {
    write(out + "/" + name + "/manifest.json", manifest);
    if (experts_blob) write(out + "/" + name + "/blobs/" + experts, *experts_blob);
    if (mixed_blob) write(out + "/" + name + "/blobs/" + mixed, *mixed_blob);
  };
  Bytes b = patched(blob, "\"mxfp4\"", "\"mxfp5\"");
  put("ollama-quant-type", &b, &other);
  b = patched(blob, "down_proj.weight.quant_type", "down_proj.weight.quant_typo");
  put("ollama-no-quant-type", &b, &other);
  b = patched(blob, "\"" + P + "up_proj.weight\"", "\"" + P + "up_proj.weighT\"");
  put("ollama-orphan-scale", &b, &other);
  b = patched(blob, P + "down_proj.weight.group_size\":\"64\"", P + "down_proj.weight.group_size\":\"32\"");
  put("ollama-group-size", &b, &other);
  put("ollama-blob-missing", &blob, nullptr);
  b = Bytes(blob.begin(), blob.end() - 1);
  put("ollama-blob-short", &b, &other);
  // The mixed blob's layer renamed in the manifest (same length): its name covers no tensor of
  // the blob (ManifestLayerNotInBlob).
  write(out + "/ollama-layer-not-in-blob/manifest.json", patched(manifest, "\"name\":\"a.weight\"", "\"name\":\"z.weight\""));
  write(out + "/ollama-layer-not-in-blob/blobs/" + experts, blob);
  write(out + "/ollama-layer-not-in-blob/blobs/" + mixed, other);
}

void sharded_variants(const std::string& out) {
  const std::string dir = kFixtures + "/sharded-mlx/";
  const char* const files[] = {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                               "model-00003-of-00003.safetensors", "model.safetensors.index.json", "config.json"};
  std::map<std::string, Bytes> base;
  for (const char* f : files) base[f] = read(dir + f);
  auto put = [&](const std::string& name, const std::map<std::string, Bytes>& edits, const std::string& drop_file) {
    for (const auto& kv : base) {
      if (kv.first == drop_file) continue;
      const auto e = edits.find(kv.first);
      write(out + "/" + name + "/" + kv.first, e != edits.end() ? e->second : kv.second);
    }
  };
  put("sharded-shard-missing", {}, "model-00002-of-00003.safetensors");
  put("sharded-tensor-renamed",
      {{"model-00003-of-00003.safetensors", patched(base["model-00003-of-00003.safetensors"], "\"lm_head.weight\"", "\"lm_head.weighT\"")}},
      "");
  const Bytes& index = base["model.safetensors.index.json"];
  put("sharded-index-syntax", {{"model.safetensors.index.json", patched(index, "\"weight_map\"", "\"weight_map\\")}}, "");
  put("sharded-no-config", {}, "config.json");
  // The q_proj scales renamed away in shard 2 (and in the index, so the shards still match it):
  // its biases are then an orphan, a convention error across two files.
  put("sharded-orphan-biases",
      {{"model-00002-of-00003.safetensors",
        patched(base["model-00002-of-00003.safetensors"], "q_proj.scales\"", "q_proj.scalez\"")},
       {"model.safetensors.index.json", patched(index, "q_proj.scales\"", "q_proj.scalez\"")}},
      "");
}

void uqff_variants(const std::string& out) {
  for (const samplegen::UqffVariant& v : samplegen::uqff_malformed_variants()) {
    const std::string d = out + "/uqff-" + v.name;
    for (const samplegen::UqffFile& f : v.fixture.files) write(d + "/" + f.name, samplegen::uqff_file_bytes(f));
    write(d + "/config.json", v.fixture.config_json);
  }
}

}  // namespace

VariantDirs model_variants(bool* ok) {
  VariantDirs dirs;
  g_out = &dirs;
  g_failed = false;
  const std::string out;  // paths are "/<variant>/<file>"
  mlx_variants(out);
  mlx_bits_variants(out);
  ollama_variants(out);
  sharded_variants(out);
  uqff_variants(out);
  g_out = nullptr;
  if (ok) *ok = !g_failed;
  return dirs;
}

}  // namespace modeltest

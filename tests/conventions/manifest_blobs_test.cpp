// ws::check_manifest_blob_size / check_manifest_blob_tensors: an Ollama manifest's rules for its
// blobs (weightstream/manifest_blobs.h) — exact status, offset, tensor and values.
#include <gtest/gtest.h>
#include <string.h>

#include <string>
#include <vector>

#include "conv_test_util.h"
#include "weightstream/manifest_blobs.h"

namespace {

using convtest::Parsed;
using convtest::Split;
using ws::Status;

alignas(8) uint8_t g_arena[16384];

std::string layer(char digit, uint64_t size, const std::string& name) {
  return "{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + std::string(64, digit) +
         "\",\"size\":" + std::to_string(size) + ",\"name\":\"" + name + "\"}";
}

// Layer 0 "a.weight" (1168 bytes), 1 the expert group "model.layers.0.mlp.experts", 2 "b.weight",
// 3 a template (not a tensor layer).
const std::string kManifest =
    "{\"schemaVersion\":2,\"layers\":[" + layer('a', 1168, "a.weight") + "," +
    layer('b', 99, "model.layers.0.mlp.experts") + "," + layer('c', 7, "b.weight") +
    ",{\"mediaType\":\"application/vnd.ollama.image.template\",\"digest\":\"sha256:" + std::string(64, 'd') +
    "\",\"size\":5}]}";

// A safetensors file of F32 scalars-of-one named `names`, in this order.
std::vector<uint8_t> blob(const std::vector<std::string>& names, std::string* header = nullptr) {
  std::string json = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    json += (i ? ",\"" : "\"") + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
            std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  json += "}";
  // Built as a string: GCC 12's -Warray-bounds misfires on vector::insert after vector(8) at -O2.
  std::string file(8, '\0');
  for (int b = 0; b < 8; ++b) file[b] = char(uint8_t(uint64_t(json.size()) >> (8 * b)));
  file += json;
  file.append(4 * names.size(), '\0');
  if (header) *header = json;
  return std::vector<uint8_t>(file.begin(), file.end());
}

class ManifestBlobs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(convtest::feed_all(m, kManifest, Split::Whole), Status::Ok) << ws::status_name(m.error().code);
    ASSERT_EQ(m.layer_count(), 4u);
  }
  const ws::TensorTable& table(const std::vector<std::string>& names, std::string* header = nullptr) {
    p.reset(new Parsed);
    convtest::parse(blob(names, header), Split::Whole, 1, true, p.get());
    EXPECT_EQ(p->status, Status::Ok);
    return p->reader->tensors();
  }
  static std::string name(const ws::Error& e) { return std::string(e.tensor_name ? e.tensor_name : "", e.tensor_name_size); }

  ws::OllamaManifest m{g_arena, sizeof g_arena};
  std::unique_ptr<Parsed> p;
};

TEST_F(ManifestBlobs, SizeEqualIsOkOtherwiseWhereTheShorterEnds) {
  ws::Error e;
  EXPECT_EQ(ws::check_manifest_blob_size(m, 0, 1168, &e), Status::Ok);
  EXPECT_EQ(e.code, Status::Ok);  // untouched on success
  ASSERT_EQ(ws::check_manifest_blob_size(m, 0, 1000, &e), Status::ManifestBlobSize);
  EXPECT_EQ(e.code, Status::ManifestBlobSize);
  EXPECT_EQ(e.offset, 1000u);
  EXPECT_EQ(name(e), "a.weight");
  EXPECT_EQ(e.tensor, ws::kNoTensor);
  EXPECT_TRUE(e.has_found && e.has_expected);
  EXPECT_EQ(e.found, 1000u);
  EXPECT_EQ(e.expected, 1168u);
  // A longer blob: the first byte past the layer's size.
  ASSERT_EQ(ws::check_manifest_blob_size(m, 1, 150, &e), Status::ManifestBlobSize);
  EXPECT_EQ(e.offset, 99u);
  EXPECT_EQ(name(e), "model.layers.0.mlp.experts");
  EXPECT_EQ(e.found, 150u);
  EXPECT_EQ(e.expected, 99u);
  EXPECT_EQ(ws::check_manifest_blob_size(m, 1, 0, &e), Status::ManifestBlobSize);
  EXPECT_EQ(e.offset, 0u);
}

TEST_F(ManifestBlobs, TensorsOfTheLayerAndUncoveredOnesAreOk) {
  ws::Error e;
  // Companions and tensors no layer names (a mixed blob) are fine.
  EXPECT_EQ(ws::check_manifest_blob_tensors(m, 0, table({"a.weight", "a.weight.scale", "lin.bias"}), &e), Status::Ok);
  EXPECT_EQ(ws::check_manifest_blob_tensors(m, 1, table({"model.layers.0.mlp.experts.down_proj.weight",
                                                          "model.layers.0.mlp.experts.up_proj.weight"}), &e),
            Status::Ok);
  // A blob without tensors: nothing the layer could miss.
  EXPECT_EQ(ws::check_manifest_blob_tensors(m, 0, table({}), &e), Status::Ok);
  EXPECT_EQ(e.code, Status::Ok);
}

TEST_F(ManifestBlobs, TensorOfAnotherLayerAtItsHeaderEntry) {
  ws::Error e;
  std::string header;
  const ws::TensorTable& t = table({"a.weight", "c.other", "b.weight", "model.layers.0.mlp.experts.x.weight"}, &header);
  ASSERT_EQ(ws::check_manifest_blob_tensors(m, 0, t, &e), Status::ManifestTensorInOtherLayer);
  EXPECT_EQ(e.code, Status::ManifestTensorInOtherLayer);
  EXPECT_EQ(e.offset, 8 + header.find("\"b.weight\""));  // the first, in file order
  EXPECT_EQ(e.tensor, 2u);
  EXPECT_EQ(name(e), "b.weight");
  EXPECT_EQ(e.found, 2u);     // the layer that covers it
  EXPECT_EQ(e.expected, 0u);  // the blob's own layer
  // Before its own tensor: still the other layer's tensor (the layer's is there too).
  const ws::TensorTable& t2 = table({"model.layers.0.mlp.experts.gate_proj.weight", "a.weight"}, &header);
  ASSERT_EQ(ws::check_manifest_blob_tensors(m, 0, t2, &e), Status::ManifestTensorInOtherLayer);
  EXPECT_EQ(e.offset, 8 + header.find("\"model.layers.0.mlp.experts.gate_proj.weight\""));
  EXPECT_EQ(e.tensor, 0u);
  EXPECT_EQ(name(e), "model.layers.0.mlp.experts.gate_proj.weight");
  EXPECT_EQ(e.found, 1u);
}

TEST_F(ManifestBlobs, LayerNameCoveringNoTensorOfItsBlob) {
  ws::Error e;
  // "model.layers.0.mlp.expertsX..." is not under the prefix (no '.' after it).
  ASSERT_EQ(ws::check_manifest_blob_tensors(m, 1, table({"model.layers.1.mlp.experts.up_proj.weight",
                                                         "model.layers.0.mlp.expertsX.weight"}), &e),
            Status::ManifestLayerNotInBlob);
  EXPECT_EQ(e.offset, 0u);
  EXPECT_EQ(e.tensor, ws::kNoTensor);
  EXPECT_EQ(name(e), "model.layers.0.mlp.experts");
  EXPECT_FALSE(e.has_found || e.has_expected);
}

}  // namespace

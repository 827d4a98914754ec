// ws::detect_file_kind (file_kind.h): the one rule every host uses to tell a file's kind.
#include "weightstream/file_kind.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((v >> (8 * i)) & 0xFF);
  return s;
}

ws::FileKind kind(const std::string& head, uint64_t size = ws::kUnknownFileSize) {
  return ws::detect_file_kind(head.data(), head.size(), size);
}

// Issue #26: header length 123 (0x7B, '{') and a tensor named "layers": the CLI took it for an
// Ollama manifest. With its size known or not, and with 8 bytes or all of it given, a safetensors file.
TEST(FileKind, HeaderLength123NamingLayersIsSafetensors) {
  std::string h = "{\"layers\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}";
  h.resize(123, ' ');
  const std::string file = le64(123) + h + "abcd";
  EXPECT_EQ(file[0], '{');
  EXPECT_EQ(kind(file, file.size()), ws::FileKind::Safetensors);
  EXPECT_EQ(kind(file), ws::FileKind::Safetensors);
  EXPECT_EQ(kind(file.substr(0, 8)), ws::FileKind::Safetensors);
  EXPECT_EQ(kind(file.substr(0, 9), file.size()), ws::FileKind::Safetensors);
  // Blanks before the '{' (and a length whose every byte looks like a blank) change nothing.
  const std::string blanks = le64(0x0A0D0920) + std::string(" \t\r\n");
  EXPECT_EQ(kind(le64(12) + " \n{\"a\":null} "), ws::FileKind::Safetensors);
  EXPECT_EQ(kind(le64(379) + "\t{}" + std::string(376, ' '), 387), ws::FileKind::Safetensors);
  // A length past the end of the file, or a header that is no object: not safetensors, and never a
  // manifest (a binary length prefix is no JSON text), whatever the bytes name.
  EXPECT_EQ(kind(file, 100), ws::FileKind::Unknown);
  EXPECT_EQ(kind(le64(123) + "[\"layers\"]", 200), ws::FileKind::Unknown);
  EXPECT_EQ(blanks.size(), 12u);
}

TEST(FileKind, GgufAndJsonDocuments) {
  EXPECT_EQ(kind("GGUF\x03\0\0\0"), ws::FileKind::Gguf);
  EXPECT_EQ(kind("GGUF"), ws::FileKind::Gguf);
  const std::string manifest =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
      "\"layers\":[]}";
  EXPECT_EQ(kind(manifest, manifest.size()), ws::FileKind::OllamaManifest);
  EXPECT_EQ(kind("\n  {\"layers\":[{}]}"), ws::FileKind::OllamaManifest);
  EXPECT_EQ(kind("{\"metadata\":{\"total_size\":4},\"weight_map\":{\"layers\":\"a.safetensors\"}}"),
            ws::FileKind::ShardIndex);
  EXPECT_EQ(kind("{\"model_type\":\"llama\"}"), ws::FileKind::Json);
  EXPECT_EQ(kind("{}"), ws::FileKind::Json);
  EXPECT_EQ(kind(manifest.substr(0, 8)), ws::FileKind::Json);  // too few bytes to name a key
  EXPECT_EQ(kind(""), ws::FileKind::Unknown);
  EXPECT_EQ(kind("   "), ws::FileKind::Unknown);
  EXPECT_EQ(kind("PK\x03\x04zip archive"), ws::FileKind::Unknown);
  EXPECT_EQ(kind(le64(100000001) + "{}"), ws::FileKind::Unknown);  // over the crate's header cap
  EXPECT_STREQ(ws::file_kind_name(ws::FileKind::OllamaManifest), "ollama-manifest");
  EXPECT_STREQ(ws::file_kind_name(ws::FileKind::Safetensors), "safetensors");
  EXPECT_TRUE(ws::file_kind_is_json(ws::FileKind::ShardIndex));
  EXPECT_FALSE(ws::file_kind_is_json(ws::FileKind::Safetensors));
}

}  // namespace

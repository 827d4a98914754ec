// tests/cli — end-to-end tests of the `weightstream` CLI and `ws-make-samples`: the built binaries
// are run as a user would run them, and their exit status and output are checked exactly.
//
// Expected values come from outside the CLI wherever possible: the reference crate's
// .expect.json files, the sample index's weight_map, byte positions searched in the test inputs.
// Descriptions of status codes come from the library (ws::status_description), since the library
// owns them; the details and hints are the CLI's own and are spelled out literally.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gguf_builder.h"
#include "mini_json.h"
#include "process.h"
#include "weightstream/status.h"

namespace {

namespace fs = std::filesystem;
using clitest::GgufBuilder;
using clitest::cli;
using clitest::Json;
using clitest::parse_json;
using clitest::read_file;
using clitest::RunResult;
using clitest::TempDir;
using clitest::u64le;
using clitest::write_file;

const std::string kCli = WS_CLI;
const std::string kMakeSamples = WS_MAKE_SAMPLES;
const std::string kRealDir = std::string(WS_SHARED_DIR) + "/testdata/real/safetensors";
const std::string kSamplesDir = std::string(WS_SOURCE_DIR) + "/samples";
const std::string kTinyLlama = kSamplesDir + "/tiny-llama.safetensors";
const std::string kShardedIndex = kSamplesDir + "/sharded/model.safetensors.index.json";

std::string desc(ws::Status s) { return ws::status_description(s); }
std::string basic_f32() { return kRealDir + "/basic_f32.safetensors"; }

std::vector<std::string> real_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kRealDir))
    if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// --- usage ---------------------------------------------------------------------------------

TEST(CliUsage, HelpPrintsUsageAndExitsZero) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"help"}, {"-h"}, {"validate", "--help"}}) {
    const RunResult r = cli(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    EXPECT_EQ(r.out.rfind("usage: weightstream <command> [options] FILE...\n", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("validate FILE..."), std::string::npos);
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliUsage, NoCommandIsAUsageError) {
  const RunResult r = cli({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("weightstream: no command given\n\nusage: weightstream", 0), 0u) << r.err;
}

TEST(CliUsage, UnknownCommandIsAUsageError) {
  const RunResult r = cli({"frobnicate", basic_f32()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("weightstream: unknown command 'frobnicate'\n\nusage: weightstream", 0), 0u)
      << r.err;
}

TEST(CliUsage, MalformedOptionsAreUsageErrors) {
  const std::string f = basic_f32();
  const std::map<std::string, std::vector<std::string>> cases = {
      {"weightstream: --chunk-size wants a byte count from 1 to 1G, not '0'",
       {"validate", "--chunk-size", "0", f}},
      {"weightstream: --chunk-size wants a byte count from 1 to 1G, not '12x'",
       {"validate", "--chunk-size=12x", f}},
      {"weightstream: --chunk-size needs a value", {"validate", f, "--chunk-size"}},
      {"weightstream: unknown option '--bogus'", {"validate", "--bogus", f}},
      {"weightstream: validate needs a file", {"validate", "--json"}},
      {"weightstream: inspect takes one file (validate takes several)", {"inspect", f, f}},
  };
  for (const auto& c : cases) {
    const RunResult r = cli(c.second);
    EXPECT_EQ(r.exit_code, 2) << c.first;
    EXPECT_EQ(r.out, "") << c.first;
    EXPECT_EQ(r.err.rfind(c.first + "\n", 0), 0u) << r.err;
  }
}

TEST(CliUsage, SizesTakeSuffixesAndFilesMayFollowDoubleDash) {
  const RunResult a = cli({"validate", "--json", "--chunk-size=1k", "--arena-size", "2M", "--", basic_f32()});
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, cli({"validate", "--json", basic_f32()}).out);
}

// --- validate: exit codes and exact lines ----------------------------------------------------

TEST(CliValidate, ExitCodeSaysValidInvalidOrUnreadable) {
  TempDir dir;
  const std::string bad = dir.file("bad.safetensors");
  write_file(bad, "abcd");
  const std::string missing = dir.file("missing.safetensors");

  EXPECT_EQ(cli({"validate", basic_f32()}).exit_code, 0);
  EXPECT_EQ(cli({"validate", bad}).exit_code, 1);
  EXPECT_EQ(cli({"validate", basic_f32(), bad}).exit_code, 1);
  EXPECT_EQ(cli({"validate", missing}).exit_code, 2);
  EXPECT_EQ(cli({"validate", bad, missing, basic_f32()}).exit_code, 2);
  EXPECT_EQ(cli({"inspect", basic_f32()}).exit_code, 0);
  EXPECT_EQ(cli({"inspect", bad}).exit_code, 1);
  EXPECT_EQ(cli({"inspect", missing}).exit_code, 2);

  // One line per file, in command-line order, also when some fail.
  const RunResult r = cli({"validate", "--json", bad, missing, basic_f32()});
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
  const size_t nl1 = r.out.find('\n'), nl2 = r.out.find('\n', nl1 + 1);
  EXPECT_EQ(parse_json(r.out.substr(0, nl1))["file"].str(), bad);
  EXPECT_EQ(parse_json(r.out.substr(nl1 + 1, nl2 - nl1 - 1))["file"].str(), missing);
  EXPECT_EQ(parse_json(r.out.substr(nl2 + 1))["file"].str(), basic_f32());
}

// Issue #26: the files the reference crate reads differently than weightstream used to, through
// the CLI: every verdict the library's, every one the crate's (tests/corpus/safetensors/expected.json
// cites the crate's source for each).
const std::string kCorpusDir = std::string(WS_SOURCE_DIR) + "/tests/corpus/safetensors";

TEST(CliValidate, HeaderLength123NamingLayersIsASafetensorsFile) {
  // Its length prefix starts with '{' and its header names "layers": it was taken for an Ollama
  // manifest (JsonSyntax at byte 1, exit 1). Copied without an extension, as a manifest is named.
  TempDir dir;
  const std::string path = dir.file("latest");
  write_file(path, read_file(kCorpusDir + "/ok_header_length_123_tensor_layers.safetensors"));
  const RunResult v = cli({"validate", path});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_EQ(v.out, path + ": valid (safetensors, 1 tensor)\n");
  const RunResult i = cli({"inspect", "--json", path});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const Json j = parse_json(i.out);
  EXPECT_EQ(j["format"].str(), "safetensors");
  EXPECT_EQ(j["header_size"].u64(), 123u);
  EXPECT_EQ(j["tensors"].items.size(), 1u);
  EXPECT_EQ(j["tensors"][size_t(0)]["name"].str(), "layers");
}

TEST(CliValidate, UnknownFieldsAndDtypeObjectFormAsTheCrateReadsThem) {
  // Every corpus case of the classes, its verdict from expected.json (computed from the bytes by
  // the generator), whole and in 1-byte pieces.
  const Json cases = parse_json(read_file(kCorpusDir + "/expected.json"))["cases"];
  size_t seen = 0;
  for (const Json& c : cases.items) {
    const std::string file = c["file"].str();
    if (file.rfind("unknown_field_", 0) != 0 && file.rfind("ok_unknown_field_", 0) != 0 &&
        file.rfind("dtype_object_", 0) != 0 && file.rfind("ok_dtype_object_", 0) != 0)
      continue;
    ++seen;
    EXPECT_TRUE(c.has("crate")) << file;
    const std::string path = kCorpusDir + "/" + file;
    const bool ok = c["status"].str() == "Ok";
    const std::string want =
        ok ? path + ": valid (safetensors, 1 tensor)\n"
           : path + ": invalid: " + c["status"].str() + " at byte " + std::to_string(c["offset"].u64()) +
                 " in tensor \"" + c["tensor"].str() + "\": ";
    for (const char* chunk : {"65536", "1"}) {
      const RunResult r = cli({"validate", "--chunk-size", chunk, path});
      EXPECT_EQ(r.exit_code, ok ? 0 : 1) << file;
      EXPECT_EQ(r.out.substr(0, want.size()), want) << file << " --chunk-size " << chunk;
    }
  }
  EXPECT_EQ(seen, 20u);
}

TEST(CliValidate, JsonLineOfAValidFile) {
  const RunResult r = cli({"validate", "--json", basic_f32()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"file\":\"" + basic_f32() +
                       "\",\"valid\":true,\"format\":\"safetensors\",\"tensors\":1,\"error\":null}\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliValidate, TextLineOfAValidFile) {
  const RunResult r = cli({"validate", basic_f32(), kTinyLlama});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, basic_f32() + ": valid (safetensors, 1 tensor)\n" + kTinyLlama +
                       ": valid (safetensors, 21 tensors)\n");
}

TEST(CliValidate, UnreadableFileIsAnIoError) {
  TempDir dir;
  const std::string missing = dir.file("missing.safetensors");
  RunResult r = cli({"validate", "--json", missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "{\"file\":\"" + missing +
                       "\",\"valid\":false,\"format\":null,\"tensors\":0,\"error\":{\"code\":\"IoError\","
                       "\"offset\":0,\"tensor\":null,\"message\":\"cannot open: No such file or directory.\"}}\n");
  r = cli({"validate", dir.path()});  // a directory
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, dir.path() + ": error: cannot open: Is a directory.\n");
}

// Inputs written for the occasion, each broken in one way.
class CliMalformed : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.file(name);
    write_file(path, bytes);
    return path;
  }
  static std::string validate_json(const std::string& path) {
    const RunResult r = cli({"validate", "--json", path});
    EXPECT_EQ(r.exit_code, 1) << path;
    return r.out;
  }
  static std::string error_line(const std::string& path, const char* format, int tensors,
                                const std::string& error) {
    return "{\"file\":\"" + path + "\",\"valid\":false,\"format\":" + format +
           ",\"tensors\":" + std::to_string(tensors) + ",\"error\":" + error + "}\n";
  }
  TempDir dir_;
};

TEST_F(CliMalformed, FourByteFileIsHeaderTooSmallWithNoFormat) {
  const std::string p = write("four.safetensors", "abcd");
  EXPECT_EQ(validate_json(p),
            error_line(p, "null", 0,
                       "{\"code\":\"HeaderTooSmall\",\"offset\":4,\"tensor\":null,\"message\":\"" +
                           desc(ws::Status::HeaderTooSmall) +
                           " (the file is 4 bytes; a safetensors file starts with an 8-byte header "
                           "length). The file is empty or cut off: was the download interrupted?\"}"));
}

TEST_F(CliMalformed, HeaderLengthOverTheCapIsHeaderTooLargeAtByteZero) {
  const std::string p = write("large.safetensors", u64le(100000001) + "{}      ");
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"safetensors\"", 0,
                       "{\"code\":\"HeaderTooLarge\",\"offset\":0,\"tensor\":null,\"message\":\"" +
                           desc(ws::Status::HeaderTooLarge) +
                           " (header says 100000001 bytes; the limit is 100000000). Is this really a "
                           "safetensors file?\"}"));
  // Exactly at the cap is not too large: the file is then merely shorter than its header.
  const std::string at_cap = write("atcap.safetensors", u64le(100000000) + "{}      ");
  EXPECT_NE(validate_json(at_cap).find("\"code\":\"InvalidHeaderLength\""), std::string::npos);
}

TEST_F(CliMalformed, TextLineNamesProblemOffsetAndFix) {
  const std::string p = write("model.safetensors", u64le(4294967296ull) + "{}      ");
  const RunResult r = cli({"validate", p});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, p + ": invalid: HeaderTooLarge at byte 0: " + desc(ws::Status::HeaderTooLarge) +
                       " (header says 4294967296 bytes; the limit is 100000000). Is this really a "
                       "safetensors file?\n");
}

TEST_F(CliMalformed, ThingsMistakenForSafetensorsAreRecognised) {
  const std::string html = write("html.safetensors", "<!DOCTYPE html><html>Not Found</html>");
  EXPECT_NE(validate_json(html).find("did the download save an error page instead of the model?"),
            std::string::npos);
  const std::string lfs = write("lfs.safetensors",
                                "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n");
  EXPECT_NE(validate_json(lfs).find("Git LFS pointer, not the model: run `git lfs pull`"),
            std::string::npos);
}

TEST_F(CliMalformed, TruncatedDataNamesTheTensorItEndsIn) {
  const std::string full = read_file(basic_f32());
  const std::string p = write("trunc.safetensors", full.substr(0, full.size() - 5));
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"safetensors\"", 1,
                       "{\"code\":\"TruncatedData\",\"offset\":" + std::to_string(full.size() - 5) +
                           ",\"tensor\":\"weight\",\"message\":\"" + desc(ws::Status::TruncatedData) +
                           " (the tensors end at byte 96; the file is 91 bytes). The file is shorter "
                           "than its header says: was the download interrupted?\"}"));
}

TEST_F(CliMalformed, TrailingBytesWarnOfPolyglots) {
  const std::string full = read_file(basic_f32());
  const std::string p = write("trail.safetensors", full + "PK\x03\x04");
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"safetensors\"", 1,
                       "{\"code\":\"TrailingBytes\",\"offset\":" + std::to_string(full.size()) +
                           ",\"tensor\":null,\"message\":\"" + desc(ws::Status::TrailingBytes) +
                           " (4 bytes follow the end of the data at byte 96). Bytes after the "
                           "last tensor are how polyglot files (valid as two formats at once) hide a "
                           "second payload: do not load this file unless you know where they come "
                           "from.\"}"));
}

TEST_F(CliMalformed, DuplicateNameIsReportedAtTheSecondOccurrence) {
  const std::string header =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}";
  const std::string bytes = u64le(header.size()) + header + std::string(16, '\0');
  const std::string p = write("dup.safetensors", bytes);
  const size_t second = bytes.find("\"a\"", bytes.find("\"a\"") + 1);
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"safetensors\"", 0,
                       "{\"code\":\"DuplicateTensorName\",\"offset\":" + std::to_string(second) +
                           ",\"tensor\":\"a\",\"message\":\"" + desc(ws::Status::DuplicateTensorName) +
                           ". Readers disagree on which copy wins (the reference keeps the last one "
                           "silently): re-export the model so that every name appears once.\"}"));
}

TEST_F(CliMalformed, SizeMismatchNamesTheTensor) {
  const std::string header = "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}";
  const std::string bytes = u64le(header.size()) + header + std::string(8, '\0');
  const std::string p = write("size.safetensors", bytes);
  const RunResult r = cli({"validate", p});
  EXPECT_EQ(r.exit_code, 1);
  // Detected where the entry closes, once shape, dtype and offsets are all known.
  EXPECT_EQ(r.out, p + ": invalid: TensorSizeMismatch at byte " + std::to_string(bytes.find("]}}") + 1) +
                       " in tensor \"x\": " + desc(ws::Status::TensorSizeMismatch) +
                       ". The shape and dtype do not match the bytes data_offsets reserve: re-export "
                       "the model.\n");
}

TEST_F(CliMalformed, ControlCharactersInNamesDoNotReachTheTerminal) {
  const std::string header = "{\"evil\\u001b[2J\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}";
  const std::string p = write("esc.safetensors", u64le(header.size()) + header + std::string(8, '\0'));
  const RunResult r = cli({"validate", p});
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("in tensor \"evil\\x1b[2J\""), std::string::npos) << r.out;
  const RunResult j = cli({"validate", "--json", p});
  EXPECT_EQ(parse_json(j.out)["error"]["tensor"].str(), "evil\x1b[2J");
}

TEST_F(CliMalformed, GgufVersionOneIsRejectedAtTheVersionField) {
  const std::string real = read_file(std::string(WS_SHARED_DIR) + "/testdata/real/gguf/hyllama-dummy.gguf");
  const std::string p = write("v1.gguf", "GGUF" + std::string("\x01\0\0\0", 4) + real.substr(8));
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"gguf\"", 0,
                       "{\"code\":\"GgufVersion1\",\"offset\":4,\"tensor\":null,\"message\":\"" +
                           desc(ws::Status::GgufVersion1) +
                           ". Re-convert the model with a current llama.cpp (convert_hf_to_gguf.py), "
                           "which writes GGUF v3.\"}"));
}

// A small valid GGUF: two F32 tensors of 8 elements (32 bytes each, so no padding between them).
GgufBuilder two_tensors(const std::string& arch = "llama") {
  GgufBuilder b;
  b.kv_string("general.architecture", arch).tensor("a", {8}, 0, 32).tensor("b", {8}, 0, 32);
  return b;
}

TEST_F(CliMalformed, GgufByteSwappedIsRejectedAtTheVersionField) {
  const std::string good = two_tensors().bytes();
  // Version 3 written big-endian, as a big-endian writer does.
  const std::string p = write("be.gguf", good.substr(0, 4) + std::string("\0\0\0\x03", 4) + good.substr(8));
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"gguf\"", 0,
                       "{\"code\":\"GgufByteSwapped\",\"offset\":4,\"tensor\":null,\"message\":\"" +
                           desc(ws::Status::GgufByteSwapped) +
                           " (the version field reads 50331648, which is version 3 written "
                           "big-endian). Big-endian GGUF is not supported: convert the file with "
                           "gguf-py's gguf_convert_endian.py (order little), or re-convert the model "
                           "on a little-endian machine.\"}"));
}

TEST_F(CliMalformed, GgufTruncatedDataNamesTheTensorItEndsIn) {
  const std::string good = two_tensors().bytes();
  const std::string p = write("cut.gguf", good.substr(0, good.size() - 10));
  // The file's size is known in advance: rejected at its end, once the header says how long the
  // data is, naming the tensor the file ends in.
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"gguf\"", 2,
                       "{\"code\":\"TruncatedData\",\"offset\":" + std::to_string(good.size() - 10) +
                           ",\"tensor\":\"b\",\"message\":\"" + desc(ws::Status::TruncatedData) +
                           " (the tensors end at byte " + std::to_string(good.size()) +
                           "; the file is " + std::to_string(good.size() - 10) +
                           " bytes). The file is shorter than its header says: was the download "
                           "interrupted?\"}"));
}

TEST_F(CliMalformed, GgufWrongTensorOffsetSaysExpectedAndFound) {
  GgufBuilder b;
  b.kv_string("general.architecture", "llama")
      .tensor("a", {5}, 0, 20)            // ends at 20, padded to 32
      .tensor("b", {8}, 0, 32, 20);       // written unpadded
  const std::string p = write("off.gguf", b.bytes());
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"gguf\"", 0,
                       "{\"code\":\"GgufInvalidTensorOffset\",\"offset\":" +
                           std::to_string(b.offset_field(1)) + ",\"tensor\":\"b\",\"message\":\"" +
                           desc(ws::Status::GgufInvalidTensorOffset) +
                           " (expected 32, found 20: the end of the tensor before it, rounded up to "
                           "a multiple of 32). ggml lays tensors out back to back, each padded to the "
                           "alignment: the file is corrupt or was written by a buggy converter.\"}"));
  // The first tensor must start the data section. (No key-values: the tensor infos follow the
  // preamble directly.)
  GgufBuilder first;
  first.tensor("a", {8}, 0, 32, 64);
  const std::string q = write("first.gguf", first.bytes());
  EXPECT_NE(validate_json(q).find("(expected 0, found 64: the first tensor starts the data section)"),
            std::string::npos);
}

TEST_F(CliMalformed, GgufRetiredTypeIsNamed) {
  GgufBuilder b;
  b.kv_string("general.architecture", "llama").tensor("q", {32}, 4, 20);  // Q4_2, long gone
  const std::string p = write("q4_2.gguf", b.bytes());
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"gguf\"", 0,
                       "{\"code\":\"GgufRetiredType\",\"offset\":" + std::to_string(b.type_field(0)) +
                           ",\"tensor\":\"q\",\"message\":\"" + desc(ws::Status::GgufRetiredType) +
                           " (type id 4 was Q4_2). llama.cpp no longer loads this quantization type: "
                           "re-quantize from the original weights with a current llama-quantize.\"}"));
  // An I2_S tensor in a file that does not say it is BitNet's: id 36 is retired upstream.
  GgufBuilder i2s;
  i2s.kv_string("general.architecture", "llama").tensor("w", {256}, 36, 256 / 4 + 32);
  const std::string q = write("i2s.gguf", i2s.bytes());
  EXPECT_NE(validate_json(q).find("(type id 36 was IQ4_NL_4_4; BitNet's llama.cpp fork uses it for "
                                  "I2_S, but general.architecture does not name bitnet)"),
            std::string::npos);
}

TEST_F(CliMalformed, GgufUnknownTypeIdIsGiven) {
  GgufBuilder b;
  b.kv_string("general.architecture", "llama").tensor("x", {8}, 99, 32);
  const std::string p = write("t99.gguf", b.bytes());
  EXPECT_EQ(validate_json(p),
            error_line(p, "\"gguf\"", 0,
                       "{\"code\":\"GgufInvalidType\",\"offset\":" + std::to_string(b.type_field(0)) +
                           ",\"tensor\":\"x\",\"message\":\"" + desc(ws::Status::GgufInvalidType) +
                           " (type id 99). The tensor type is unknown to this reader: the file is "
                           "corrupt, or newer than weightstream.\"}"));
}

TEST_F(CliMalformed, GgufDuplicateKeyIsNamed) {
  GgufBuilder b;
  b.kv_string("general.architecture", "llama").kv_u32("n", 1).kv_string("general.architecture", "x");
  const std::string p = write("dupkey.gguf", b.bytes());
  const std::string line = validate_json(p);
  EXPECT_NE(line.find("\"code\":\"GgufDuplicateKey\",\"offset\":" + std::to_string(b.kv_offset(2))),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(desc(ws::Status::GgufDuplicateKey) +
                      " (key \\\"general.architecture\\\", also at byte 24)."),
            std::string::npos)
      << line;
}

TEST_F(CliMalformed, GgufCutInsideTheHeaderOfAStream) {
  const std::string real = read_file(std::string(WS_SHARED_DIR) + "/testdata/real/gguf/hyllama-dummy.gguf");
  const std::string p = write("cut.gguf", real.substr(0, 500));
  // Read from a pipe, the size is unknown in advance: the header is found cut where input ends.
  const std::vector<std::string> argv = {"/bin/sh", "-c", "cat \"$0\" | \"$1\" validate -", p, kCli};
  const RunResult r = clitest::run(argv);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "-: invalid: TruncatedHeader at byte 500: " + desc(ws::Status::TruncatedHeader) +
                       ". The file ends inside its header: was the download interrupted?\n");
}

// --- the reference files ---------------------------------------------------------------------

TEST(CliRealFiles, AllValidWithTheTensorCountsOfTheirExpectJson) {
  const std::vector<std::string> files = real_files();
  ASSERT_GE(files.size(), 9u) << "reference files missing from " << kRealDir;
  for (const std::string& f : files) {
    const Json expect = parse_json(read_file(f + ".expect.json"));
    ASSERT_TRUE(expect["accepted"].boolean) << f;
    const RunResult r = cli({"validate", "--json", f});
    EXPECT_EQ(r.exit_code, 0) << f << r.out;
    EXPECT_EQ(r.out, "{\"file\":\"" + f + "\",\"valid\":true,\"format\":\"safetensors\",\"tensors\":" +
                         std::to_string(expect["n_tensors"].u64()) + ",\"error\":null}\n");
  }
}

TEST(CliRealFiles, InspectJsonAgreesWithTheReferenceCrate) {
  for (const std::string& f : real_files()) {
    SCOPED_TRACE(f);
    const Json expect = parse_json(read_file(f + ".expect.json"));
    const RunResult r = cli({"inspect", "--json", f});
    ASSERT_EQ(r.exit_code, 0);
    ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one JSON object, one line";
    const Json got = parse_json(r.out);
    const std::vector<std::string> keys = {"file", "format", "valid", "header_size", "data_start",
                                           "tensors", "metadata", "error"};
    ASSERT_EQ(got.members.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(got.members[i].first, keys[i]);
    EXPECT_EQ(got["file"].str(), f);
    EXPECT_EQ(got["format"].str(), "safetensors");
    EXPECT_TRUE(got["valid"].boolean);
    EXPECT_EQ(got["header_size"].u64(), expect["header_len"].u64());
    EXPECT_EQ(got["data_start"].u64(), expect["data_start"].u64());
    EXPECT_TRUE(got["error"].is_null());

    const Json& et = expect["tensors"];
    const Json& gt = got["tensors"];
    ASSERT_EQ(gt.items.size(), et.items.size());
    for (size_t i = 0; i < et.items.size(); ++i) {
      EXPECT_EQ(gt[i]["name"].str(), et[i]["name"].str());
      EXPECT_EQ(gt[i]["dtype"].str(), et[i]["dtype"].str());
      ASSERT_EQ(gt[i]["shape"].items.size(), et[i]["shape"].items.size());
      for (size_t d = 0; d < et[i]["shape"].items.size(); ++d)
        EXPECT_EQ(gt[i]["shape"][d].u64(), et[i]["shape"][d].u64());
      const uint64_t begin = et[i]["data_offsets"][0].u64(), end = et[i]["data_offsets"][1].u64();
      EXPECT_EQ(gt[i]["data_offsets"][0].u64(), begin);
      EXPECT_EQ(gt[i]["data_offsets"][1].u64(), end);
      EXPECT_EQ(gt[i]["bytes"].u64(), end - begin);
    }

    // Metadata key order is a HashMap's in the reference writer: compare as maps.
    if (expect["metadata"].is_null()) {
      EXPECT_TRUE(got["metadata"].is_null());
    } else {
      std::map<std::string, std::string> want, have;
      for (const auto& m : expect["metadata"].members) want[m.first] = m.second.str();
      for (const auto& m : got["metadata"].members) have[m.first] = m.second.str();
      EXPECT_EQ(have, want);
      EXPECT_EQ(got["metadata"].members.size(), want.size()) << "no duplicate keys";
    }
  }
}

std::vector<std::string> gguf_files() {
  std::vector<std::string> files;
  for (const char* sub : {"/testdata/real/gguf", "/testdata/synthetic/gguf"})
    for (const auto& e : fs::directory_iterator(std::string(WS_SHARED_DIR) + sub))
      if (e.path().extension() == ".gguf") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CliRealFiles, GgufFilesAreValidWithTheTensorCountsOfTheirExpectJson) {
  const std::vector<std::string> files = gguf_files();
  ASSERT_GE(files.size(), 7u);
  for (const std::string& f : files) {
    const Json expect = parse_json(read_file(f + ".expect.json"));
    const RunResult r = cli({"validate", "--json", f});
    EXPECT_EQ(r.exit_code, 0) << f << r.out;
    EXPECT_EQ(r.out, "{\"file\":\"" + f + "\",\"valid\":true,\"format\":\"gguf\",\"tensors\":" +
                         std::to_string(expect["tensor_count"].u64()) + ",\"error\":null}\n");
  }
}

// A value of the CLI's JSON against gguf-py's, exactly: integers digit for digit (beyond 2^53
// too), FLOAT32 values as the same float (the CLI prints the shortest text that reads back as the
// file's float; gguf-py prints that float widened to a double), FLOAT64 as the same double.
void expect_same_value(const Json& got, const Json& want, const std::string& type,
                       const std::string& what) {
  if (type == "STRING") {
    ASSERT_EQ(got.type, Json::String) << what;
    EXPECT_EQ(got.str(), want.str()) << what;
  } else if (type == "BOOL") {
    ASSERT_EQ(got.type, Json::Bool) << what;
    EXPECT_EQ(got.boolean, want.boolean) << what;
  } else if (type == "FLOAT32") {
    ASSERT_EQ(got.type, Json::Number) << what;
    EXPECT_EQ(std::stof(got.text), static_cast<float>(std::stod(want.text))) << what;
  } else if (type == "FLOAT64") {
    ASSERT_EQ(got.type, Json::Number) << what;
    EXPECT_EQ(std::stod(got.text), std::stod(want.text)) << what;
  } else {
    ASSERT_EQ(got.type, Json::Number) << what;
    EXPECT_EQ(got.text, want.text) << what << ": integers exactly";
  }
}

std::vector<std::string> member_names(const Json& object) {
  std::vector<std::string> names;
  for (const auto& m : object.members) names.push_back(m.first);
  return names;
}

using Keys = std::vector<std::string>;

TEST(CliRealFiles, GgufInspectJsonAgreesWithGgufPy) {
  for (const std::string& f : gguf_files()) {
    SCOPED_TRACE(f);
    const Json expect = parse_json(read_file(f + ".expect.json"));
    const RunResult r = cli({"inspect", "--json", f});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const Json got = parse_json(r.out);
    // Files that name their architecture get the model facts block (tests/cli/cli_naming_test).
    bool has_arch = false;
    for (const Json& kv : expect["kv"].items) has_arch |= kv["key"].str() == "general.architecture";
    Keys keys = {"file", "format", "valid", "header_size", "data_start", "tensors", "metadata"};
    if (has_arch) keys.push_back("model_facts");
    keys.push_back("gguf");
    keys.push_back("error");
    EXPECT_EQ(member_names(got), keys);
    EXPECT_EQ(got["format"].str(), "gguf");
    EXPECT_TRUE(got["header_size"].is_null());
    // ggml's data offset: gguf-py pads it even for files without tensors, past the end of file.
    EXPECT_EQ(got["data_start"].u64(), expect["ggml_gguf_cpp_cross_check"]["data_offset"].u64());
    const Json& g = got["gguf"];
    EXPECT_EQ(member_names(g), (Keys{"version", "alignment", "dialect", "architecture", "kv_count", "kv"}));
    EXPECT_EQ(g["version"].u64(), expect["version"].u64());
    EXPECT_EQ(g["alignment"].u64(), expect["alignment"].u64());
    EXPECT_EQ(g["dialect"].str(), "upstream");
    EXPECT_EQ(g["kv_count"].u64(), expect["kv_count"].u64());

    const Json& et = expect["tensors"];
    const Json& gt = got["tensors"];
    ASSERT_EQ(gt.items.size(), et.items.size());
    for (size_t i = 0; i < et.items.size(); ++i) {
      EXPECT_EQ(gt[i]["name"].str(), et[i]["name"].str());
      EXPECT_EQ(gt[i]["dtype"].str(), et[i]["type_name"].str());
      ASSERT_EQ(gt[i]["shape"].items.size(), et[i]["ne"].items.size());
      for (size_t d = 0; d < et[i]["ne"].items.size(); ++d)
        EXPECT_EQ(gt[i]["shape"][d].u64(), et[i]["ne"][d].u64());
      EXPECT_EQ(gt[i]["data_offsets"][0].u64(), et[i]["offset"].u64());
      EXPECT_EQ(gt[i]["data_offsets"][1].u64(), et[i]["offset"].u64() + et[i]["n_bytes"].u64());
      EXPECT_EQ(gt[i]["bytes"].u64(), et[i]["n_bytes"].u64());
      EXPECT_EQ(got["data_start"].u64() + gt[i]["data_offsets"][0].u64(),
                et[i]["data_offset_absolute"].u64());
    }

    // Every key-value, in file order, with gguf-py's facts about it.
    const Json& ekv = expect["kv"];
    const Json& gkv = g["kv"];
    ASSERT_EQ(gkv.items.size(), ekv.items.size());
    std::string architecture;
    for (size_t i = 0; i < ekv.items.size(); ++i) {
      const Json& e = ekv[i];
      const Json& v = gkv[i];
      const std::string key = e["key"].str();
      SCOPED_TRACE(key);
      EXPECT_EQ(v["key"].str(), key);
      EXPECT_EQ(v["offset"].u64(), e["offset"].u64());
      const std::string type = e["type_name"].str();
      EXPECT_EQ(v["type"].str(), type);
      if (key == "general.architecture") architecture = e["value"].str();
      if (type != "ARRAY") {
        EXPECT_EQ(member_names(v), (Keys{"key", "offset", "type", "value"}));
        expect_same_value(v["value"], e["value"], type, key);
        continue;
      }
      const std::string elem = e["array_type_name"].str();
      const uint64_t count = e["array_len"].u64();
      EXPECT_EQ(v["element_type"].str(), elem);
      EXPECT_EQ(v["count"].u64(), count);
      Keys keys = {"key", "offset", "type", "element_type", "count"};
      if (elem == "STRING") {
        keys.push_back("string_bytes");
        EXPECT_EQ(v["string_bytes"].u64(), e["array_string_total_bytes"].u64());
      }
      if (count <= 16) {
        keys.push_back("values");
        EXPECT_EQ(member_names(v), keys);
        const Json& want = e["array_values"];
        ASSERT_EQ(v["values"].items.size(), count);
        ASSERT_EQ(want.items.size(), count);
        for (size_t k = 0; k < count; ++k) expect_same_value(v["values"][k], want[k], elem, key);
      } else {
        keys.push_back("head");
        keys.push_back("last");
        EXPECT_EQ(member_names(v), keys);
        const Json& head = e["array_head"];
        ASSERT_EQ(head.items.size(), 5u);
        ASSERT_EQ(v["head"].items.size(), 5u);
        for (size_t k = 0; k < 5; ++k) expect_same_value(v["head"][k], head[k], elem, key);
        expect_same_value(v["last"], e["array_last"], elem, key);
      }
    }
    if (architecture.empty())
      EXPECT_TRUE(g["architecture"].is_null());
    else
      EXPECT_EQ(g["architecture"].str(), architecture);

    // "metadata" holds the same key-values as a name → value object.
    ASSERT_EQ(got["metadata"].members.size(), ekv.items.size());
    for (size_t i = 0; i < ekv.items.size(); ++i)
      EXPECT_EQ(got["metadata"].members[i].first, ekv[i]["key"].str());
  }
}

// The cells of the text table line for `key` (columns are separated by two or more spaces), or
// nothing when no line starts with it.
std::vector<std::string> kv_cells(const std::string& out, const std::string& key) {
  const size_t at = out.find("\n  " + key + " ");
  if (at == std::string::npos) return {};
  const std::string line = out.substr(at + 3, out.find('\n', at + 1) - at - 3);
  std::vector<std::string> cells;
  size_t i = 0;
  while (i < line.size()) {
    size_t gap = line.find("  ", i);
    if (gap == std::string::npos) gap = line.size();
    cells.push_back(line.substr(i, gap - i));
    i = line.find_first_not_of(' ', gap);
    if (i == std::string::npos) break;
  }
  return cells;
}

const std::string kGgufReal = std::string(WS_SHARED_DIR) + "/testdata/real/gguf";
const std::string kGgufSynthetic = std::string(WS_SHARED_DIR) + "/testdata/synthetic/gguf";

TEST(CliInspect, GgufTextOfAVocabularySummarizesItsArrays) {
  const std::string f = kGgufReal + "/ggml-vocab-llama-spm.gguf";
  const RunResult r = cli({"inspect", f});
  EXPECT_EQ(r.exit_code, 0);
  const std::string head =
      "file         " + f +
      "\n"
      "format       gguf\n"
      "version      3\n"
      "alignment    32\n"
      "dialect      upstream\n"
      "architecture llama\n"
      "size         723869 bytes (723.9 kB)\n"
      "data offset  723869\n"
      "tensors      0, 0 bytes of data\n"
      "key-values   22\n"
      "\n"
      "  key                                     type     value\n"
      "  general.architecture                    STRING   \"llama\"\n";
  EXPECT_EQ(r.out.substr(0, head.size()), head);
  // The vocabulary as its element type and count; numeric arrays with their first values.
  EXPECT_NE(r.out.find("\n  tokenizer.ggml.tokens                   ARRAY    [string \xC3\x97 32000]\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  tokenizer.ggml.scores                   ARRAY    [float32 \xC3\x97 32000] "
                       "0, 0, 0, 0, 0, 0, 0, 0, \xE2\x80\xA6\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("\n  tokenizer.ggml.token_type               ARRAY    [int32 \xC3\x97 32000] "
                       "2, 3, 3, 6, 6, 6, 6, 6, \xE2\x80\xA6\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("\n  llama.attention.layer_norm_rms_epsilon  FLOAT32  1e-05\n"), std::string::npos);
  // No tensors: no tensor table.
  EXPECT_EQ(r.out.find("ne (ggml order)"), std::string::npos);
  const std::string tail = "\n\nverdict      valid\n";
  EXPECT_EQ(r.out.substr(r.out.size() - tail.size()), tail);
}

TEST(CliInspect, GgufTextPrintsEveryScalarExactly) {
  const std::string f = kGgufSynthetic + "/all_quant_types.gguf";
  const Json expect = parse_json(read_file(f + ".expect.json"));
  const RunResult r = cli({"inspect", f});
  EXPECT_EQ(r.exit_code, 0);
  // Floats as the shortest text that reads back as the file's value; arrays summarized.
  const std::map<std::string, std::string> literal = {
      {"test.f32", "0.1"},
      {"test.f64", "0.1"},
      {"test.arr_i32", "[int32 \xC3\x97 3] 1, -2, 3"},
      {"test.arr_f32", "[float32 \xC3\x97 2] 0.5, -1.25"},
      {"test.arr_str", "[string \xC3\x97 3] \"a\", \"\", \"\xC3\xBC\""},
      {"test.arr_bool", "[bool \xC3\x97 3] true, false, true"},
  };
  size_t checked = 0;
  for (const Json& kv : expect["kv"].items) {
    const std::string key = kv["key"].str(), type = kv["type_name"].str();
    std::string value;
    if (literal.count(key))
      value = literal.at(key);
    else if (type == "STRING")
      value = "\"" + kv["value"].str() + "\"";
    else if (type == "BOOL")
      value = kv["value"].boolean ? "true" : "false";
    else
      value = kv["value"].text;  // integers, digit for digit (test.u64 is above 2^63)
    EXPECT_EQ(kv_cells(r.out, key), (std::vector<std::string>{key, type, value})) << key;
    ++checked;
  }
  EXPECT_EQ(checked, 21u);
  EXPECT_NE(r.out.find("\n  test.u64              UINT64   18000000000000000000\n"), std::string::npos);
  // The tensor table: GGML type names, ne in ggml order, offsets relative and absolute.
  EXPECT_NE(r.out.find("\n   #  type     ne (ggml order)  bytes  data offsets      file offset  name\n"
                       "   0  F16      [4096, 4]        32768  [0, 32768)               2336  f16\n"),
            std::string::npos)
      << r.out;
}

TEST(CliInspect, GgufTextCutsLongStringsAndQuotesOddKeys) {
  TempDir dir;
  GgufBuilder b;
  const std::string tmpl = "{% for m in messages %}\"" + std::string(300, 'x') + "\n{% endfor %}";
  b.kv_string("general.architecture", "llama")
      .kv_string("tokenizer.chat_template", tmpl)
      .kv_u64("big", 9007199254740993ull)  // 2^53 + 1: a double would print ...992
      .kv_string(" spaced\x1b[2J", "v");
  const std::string p = dir.file("t.gguf");
  write_file(p, b.bytes());
  const RunResult r = cli({"inspect", p});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  // The first 100 bytes, quoted and escaped, then how long the string really is.
  EXPECT_EQ(kv_cells(r.out, "tokenizer.chat_template"),
            (std::vector<std::string>{"tokenizer.chat_template", "STRING",
                                      "\"{% for m in messages %}\\\"" + std::string(76, 'x') +
                                          "\"\xE2\x80\xA6 (" + std::to_string(tmpl.size()) + " bytes)"}));
  EXPECT_EQ(kv_cells(r.out, "big"), (std::vector<std::string>{"big", "UINT64", "9007199254740993"}));
  EXPECT_EQ(kv_cells(r.out, "\" spaced\\x1b[2J\""),
            (std::vector<std::string>{"\" spaced\\x1b[2J\"", "STRING", "\"v\""}));
  // JSON has the whole string and the exact integer.
  const Json j = parse_json(cli({"inspect", "--json", p}).out);
  EXPECT_EQ(j["gguf"]["kv"][1]["value"].str(), tmpl);
  EXPECT_EQ(j["gguf"]["kv"][2]["value"].text, "9007199254740993");
  EXPECT_EQ(j["gguf"]["kv"][2]["type"].str(), "UINT64");
}

TEST(CliInspect, GgufJsonListsShortArraysWholeAndLongOnesByTheirEnds) {
  TempDir dir;
  std::vector<std::string> sixteen, seventeen;
  for (int k = 0; k < 17; ++k) (k < 16 ? sixteen : seventeen).push_back("t" + std::to_string(k));
  seventeen.insert(seventeen.begin(), sixteen.begin(), sixteen.end());
  std::vector<int32_t> ints(100000);
  for (size_t k = 0; k < ints.size(); ++k) ints[k] = static_cast<int32_t>(k) - 7;
  GgufBuilder b;
  b.kv_string("general.architecture", "llama")
      .kv_string_array("sixteen", sixteen)
      .kv_string_array("seventeen", seventeen)
      .kv_i32_array("ints", ints)
      .kv_string_array("empty", {});
  const std::string p = dir.file("arrays.gguf");
  write_file(p, b.bytes());
  const RunResult r = cli({"inspect", "--json", p});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const size_t kv = r.out.find("\"kv\":[");
  ASSERT_NE(kv, std::string::npos);
  EXPECT_EQ(r.out.substr(kv, r.out.find("]},\"error\"") - kv),
            "\"kv\":[{\"key\":\"general.architecture\",\"offset\":24,\"type\":\"STRING\",\"value\":\"llama\"},"
            "{\"key\":\"sixteen\",\"offset\":" + std::to_string(b.kv_offset(1)) +
                ",\"type\":\"ARRAY\",\"element_type\":\"STRING\",\"count\":16,\"string_bytes\":38,"
                "\"values\":[\"t0\",\"t1\",\"t2\",\"t3\",\"t4\",\"t5\",\"t6\",\"t7\",\"t8\",\"t9\",\"t10\",\"t11\","
                "\"t12\",\"t13\",\"t14\",\"t15\"]},"
                "{\"key\":\"seventeen\",\"offset\":" + std::to_string(b.kv_offset(2)) +
                ",\"type\":\"ARRAY\",\"element_type\":\"STRING\",\"count\":17,\"string_bytes\":41,"
                "\"head\":[\"t0\",\"t1\",\"t2\",\"t3\",\"t4\"],\"last\":\"t16\"},"
                "{\"key\":\"ints\",\"offset\":" + std::to_string(b.kv_offset(3)) +
                ",\"type\":\"ARRAY\",\"element_type\":\"INT32\",\"count\":100000,"
                "\"head\":[-7,-6,-5,-4,-3],\"last\":99992},"
                "{\"key\":\"empty\",\"offset\":" + std::to_string(b.kv_offset(4)) +
                ",\"type\":\"ARRAY\",\"element_type\":\"STRING\",\"count\":0,\"string_bytes\":0,"
                "\"values\":[]}");
}

// microsoft/BitNet's files reuse type ids 36-39; the architecture says which meaning applies.
TEST(CliInspect, BitNetFileShowsItsDialectAndI2S) {
  TempDir dir;
  const uint64_t n = 256 * 3;  // I2_S: n/4 bytes of 2-bit codes, then a 32-byte scale tail
  GgufBuilder b;
  b.kv_string("general.architecture", "bitnet-b1.58")
      .tensor("blk.0.ffn_down.weight", {256, 3}, 36, n / 4 + 32)
      .tensor("blk.0.attn_q.weight", {64}, 39, 64);  // TL2 here; MXFP4 upstream
  const std::string p = dir.file("bitnet.gguf");
  write_file(p, b.bytes());

  const RunResult t = cli({"inspect", p});
  EXPECT_EQ(t.exit_code, 0) << t.out;
  EXPECT_NE(t.out.find("\ndialect      bitnet (type ids 36-39 are I2_S, I8_S, TL1, TL2; TL1 and TL2 "
                       "are pre-tiled for one kernel and readable only as raw bytes)\n"
                       "architecture bitnet-b1.58\n"),
            std::string::npos)
      << t.out;
  // 188 bytes of header, padded to 192.
  EXPECT_NE(t.out.find("\n  0  I2_S  [256, 3]           224  [0, 224)              192  "
                       "blk.0.ffn_down.weight\n"
                       "  1  TL2   [64]                64  [224, 288)            416  "
                       "blk.0.attn_q.weight\n"),
            std::string::npos)
      << t.out;

  const Json j = parse_json(cli({"inspect", "--json", p}).out);
  EXPECT_EQ(j["gguf"]["dialect"].str(), "bitnet");
  EXPECT_EQ(j["gguf"]["architecture"].str(), "bitnet-b1.58");
  EXPECT_EQ(j["tensors"][0]["dtype"].str(), "I2_S");
  EXPECT_EQ(j["tensors"][0]["bytes"].u64(), n / 4 + 32);
  EXPECT_EQ(j["tensors"][1]["dtype"].str(), "TL2");
  const RunResult v = cli({"validate", "--json", p});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, "{\"file\":\"" + p + "\",\"valid\":true,\"format\":\"gguf\",\"tensors\":2,\"error\":null}\n");
}

TEST(CliInspect, JsonOfBasicF32) {
  const RunResult r = cli({"inspect", "--json", basic_f32()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"file\":\"" + basic_f32() +
                       "\",\"format\":\"safetensors\",\"valid\":true,\"header_size\":64,"
                       "\"data_start\":72,\"tensors\":[{\"name\":\"weight\",\"dtype\":\"F32\","
                       "\"shape\":[2,3],\"data_offsets\":[0,24],\"bytes\":24}],\"metadata\":null,"
                       "\"error\":null}\n");
}

TEST(CliInspect, TextOfBasicF32) {
  const RunResult r = cli({"inspect", basic_f32()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "file         " + basic_f32() +
                "\n"
                "format       safetensors\n"
                "size         96 bytes\n"
                "header       64 bytes; data starts at byte 72\n"
                "tensors      1, 24 bytes of data\n"
                "\n"
                "  #  dtype  shape   bytes  data offsets  file offset  name\n"
                "  0  F32    [2, 3]     24  [0, 24)                72  weight\n"
                "\n"
                "metadata     none\n"
                "\n"
                "verdict      valid\n");
}

TEST(CliInspect, TextShowsMetadataAndQuotesOddNames) {
  const RunResult r = cli({"inspect", kRealDir + "/names_and_escapes.safetensors"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("metadata     3 entries\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  tab\\tkey = line1\\nline2\n"), std::string::npos);
  EXPECT_NE(r.out.find("  emoji = \xF0\x9F\x99\x82\\x00nul\n"), std::string::npos);
  EXPECT_NE(r.out.find("  \"\"\n"), std::string::npos) << "the empty name";
  EXPECT_NE(r.out.find("  \" leading and trailing space \"\n"), std::string::npos);
  EXPECT_NE(r.out.find("  \"quote\\\"back\\\\slash/solidus\"\n"), std::string::npos);
}

TEST(CliInspect, InvalidFileShowsWhatWasReadAndTheVerdict) {
  TempDir dir;
  const std::string full = read_file(basic_f32());
  const std::string p = dir.file("short.safetensors");
  write_file(p, full.substr(0, 80));
  const RunResult r = cli({"inspect", "--json", p});
  EXPECT_EQ(r.exit_code, 1);
  const Json j = parse_json(r.out);
  EXPECT_FALSE(j["valid"].boolean);
  EXPECT_EQ(j["header_size"].u64(), 64u);
  EXPECT_EQ(j["tensors"].items.size(), 1u) << "the header was complete";
  EXPECT_EQ(j["error"]["code"].str(), "TruncatedData");
  EXPECT_EQ(j["error"]["offset"].u64(), 80u);
}

// --- chunking ----------------------------------------------------------------------------------

TEST(CliChunking, OutputDoesNotDependOnTheChunkSize) {
  TempDir dir;
  std::vector<std::string> files = real_files();
  for (const std::string& g : gguf_files()) files.push_back(g);
  files.push_back(kTinyLlama);
  files.push_back(kShardedIndex);
  const std::string full = read_file(basic_f32());
  write_file(dir.file("trunc.safetensors"), full.substr(0, 90));
  write_file(dir.file("trail.safetensors"), full + "x");
  write_file(dir.file("tiny.safetensors"), "abc");
  write_file(dir.file("json.safetensors"), u64le(8) + "{\"a\":1} ");
  for (const char* f : {"trunc.safetensors", "trail.safetensors", "tiny.safetensors", "json.safetensors"})
    files.push_back(dir.file(f));
  // GGUF: a BitNet file, and rejections whose messages quote values read back from the header
  // (type ids, tensor offsets, keys), however the fields were split across pieces.
  GgufBuilder bitnet;
  bitnet.kv_string("general.architecture", "bitnet-b1.58")
      .kv_string_array("tokens", {"a", "bb", "", "ccc"})
      .tensor("w", {256, 2}, 36, 512 / 4 + 32);
  GgufBuilder offset;
  offset.kv_string("general.architecture", "llama").tensor("a", {5}, 0, 20).tensor("b", {8}, 0, 32, 20);
  GgufBuilder retired;
  retired.kv_string("general.architecture", "llama").tensor("a", {8}, 0, 32).tensor("q", {32}, 4, 20);
  GgufBuilder dup;
  dup.kv_string("general.architecture", "llama").kv_u32("n", 1).kv_u32("n", 2);
  const std::string good = bitnet.bytes();
  const std::vector<std::pair<std::string, std::string>> gguf = {
      {"bitnet.gguf", good},
      {"offset.gguf", offset.bytes()},
      {"retired.gguf", retired.bytes()},
      {"dup.gguf", dup.bytes()},
      {"cut.gguf", good.substr(0, good.size() - 3)},
      {"be.gguf", "GGUF" + std::string("\0\0\0\x03", 4) + good.substr(8)},
  };
  for (const auto& g : gguf) {
    write_file(dir.file(g.first), g.second);
    files.push_back(dir.file(g.first));
  }

  for (const std::string& f : files) {
    for (const std::vector<std::string>& mode :
         {std::vector<std::string>{"inspect", "--json"}, {"inspect"}, {"validate", "--json"}}) {
      std::vector<std::string> args = mode;
      args.push_back(f);
      const RunResult base = cli(args);
      ASSERT_NE(base.exit_code, -1);
      for (const char* chunk : {"1", "7", "4096"}) {
        std::vector<std::string> chunked = args;
        chunked.push_back("--chunk-size");
        chunked.push_back(chunk);
        const RunResult r = cli(chunked);
        EXPECT_EQ(r.exit_code, base.exit_code) << f << " chunk " << chunk;
        EXPECT_EQ(r.out, base.out) << f << " chunk " << chunk;
      }
    }
  }
}

// --- arena retry and standard input ------------------------------------------------------------

TEST(CliArena, TooSmallArenaIsRetriedWithTheMeasuredSize) {
  const std::string f = kRealDir + "/many_tensors_2001.safetensors";
  const RunResult base = cli({"inspect", "--json", f});
  const RunResult small = cli({"inspect", "--json", "--arena-size", "64", f});
  EXPECT_EQ(small.exit_code, 0) << small.out;
  EXPECT_EQ(small.out, base.out);
}

// `cat FILE | weightstream ARGS...`: a pipe, which cannot be read twice.
RunResult cli_from_pipe(const std::string& file, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "cat \"$0\" | \"$@\"", file, kCli};
  argv.insert(argv.end(), args.begin(), args.end());
  return clitest::run(argv);
}

TEST(CliArena, PipeCannotBeReReadSoTheMessageGivesTheSize) {
  const std::string f = kRealDir + "/many_tensors_2001.safetensors";
  const RunResult r = cli_from_pipe(f, {"validate", "--json", "--arena-size", "64", "-"});
  EXPECT_EQ(r.exit_code, 1);
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["error"]["code"].str(), "ArenaExhausted");
  const std::string& msg = j["error"]["message"].str();
  const std::string marker = "Rerun with --arena-size ";
  const size_t at = msg.find(marker);
  ASSERT_NE(at, std::string::npos) << msg;
  const std::string size = msg.substr(at + marker.size(), msg.find('.', at) - at - marker.size());
  EXPECT_NE(msg.find("(" + size + " bytes needed; the arena has 64)"), std::string::npos) << msg;
  // The advice works: exactly that size suffices.
  const RunResult again = cli_from_pipe(f, {"validate", "--json", "--arena-size", size, "-"});
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(again.out, "{\"file\":\"-\",\"valid\":true,\"format\":\"safetensors\",\"tensors\":2001,\"error\":null}\n");
}

TEST(CliArena, RedirectedFileOnStdinIsRetriedLikeAFile) {
  const std::string f = kRealDir + "/many_tensors_2001.safetensors";
  const RunResult r = cli({"validate", "--json", "--arena-size", "64", "-"}, f);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(CliStdin, DashReadsStandardInput) {
  const RunResult r = cli({"inspect", "--json", "-"}, basic_f32());
  const RunResult file = cli({"inspect", "--json", basic_f32()});
  EXPECT_EQ(r.exit_code, 0);
  std::string expected = file.out;
  expected.replace(expected.find(basic_f32()), basic_f32().size(), "-");
  EXPECT_EQ(r.out, expected);
  const RunResult piped = cli_from_pipe(basic_f32(), {"inspect", "--json", "-"});
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.out, expected);
  // Without the size in advance, a short input is found where it ends, with the same verdict.
  const RunResult short_pipe = cli_from_pipe(kRealDir + "/../../../README.md", {"validate", "--json", "-"});
  EXPECT_EQ(short_pipe.exit_code, 1);
}

// --- sharded models ----------------------------------------------------------------------------

// weight_map of the committed sample index: tensor → shard.
std::map<std::string, std::string> sample_weight_map() {
  const Json index = parse_json(read_file(kShardedIndex));
  std::map<std::string, std::string> m;
  for (const auto& e : index["weight_map"].members) m[e.first] = e.second.str();
  return m;
}

// A copy of the sharded sample in a temp dir, with the index text passed through `edit`.
std::string copy_sharded(const TempDir& dir, const std::string& from, const std::string& to) {
  for (const auto& e : fs::directory_iterator(kSamplesDir + "/sharded"))
    fs::copy_file(e.path(), dir.file(e.path().filename().string()));
  const std::string index_path = dir.file("model.safetensors.index.json");
  std::string index = read_file(index_path);
  if (!from.empty()) {
    const size_t at = index.find(from);
    EXPECT_NE(at, std::string::npos) << "the sample index changed: " << from;
    if (at != std::string::npos) index.replace(at, from.size(), to);
  }
  write_file(index_path, index);
  return index_path;
}

TEST(CliSharded, SampleIndexValidates) {
  const RunResult r = cli({"validate", "--json", kShardedIndex});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "{\"file\":\"" + kShardedIndex + "\",\"valid\":true,\"format\":\"safetensors\",\"tensors\":" +
                       std::to_string(sample_weight_map().size()) + ",\"error\":null}\n");
  const RunResult text = cli({"validate", kShardedIndex});
  EXPECT_EQ(text.out, kShardedIndex + ": valid (safetensors, 3 shards, " +
                          std::to_string(sample_weight_map().size()) + " tensors)\n");
}

TEST(CliSharded, InspectListsShardsWithTheirTensorCountsAndSizes) {
  const Json index = parse_json(read_file(kShardedIndex));
  std::map<std::string, uint64_t> per_shard;
  for (const auto& e : sample_weight_map()) ++per_shard[e.second];
  uint64_t sum_of_shard_tensor_bytes = 0;
  std::map<std::string, uint64_t> bytes_per_shard;
  for (const auto& s : per_shard) {
    const Json shard = parse_json(cli({"inspect", "--json", kSamplesDir + "/sharded/" + s.first}).out);
    for (const Json& t : shard["tensors"].items) bytes_per_shard[s.first] += t["bytes"].u64();
    sum_of_shard_tensor_bytes += bytes_per_shard[s.first];
  }
  EXPECT_EQ(sum_of_shard_tensor_bytes, index["metadata"]["total_size"].u64());

  const RunResult r = cli({"inspect", "--json", kShardedIndex});
  EXPECT_EQ(r.exit_code, 0);
  const Json j = parse_json(r.out);
  EXPECT_TRUE(j["valid"].boolean);
  EXPECT_EQ(j["tensors"].u64(), sample_weight_map().size());
  EXPECT_EQ(j["total_size"].u64(), index["metadata"]["total_size"].u64());
  ASSERT_EQ(j["shards"].items.size(), per_shard.size());
  size_t i = 0;
  for (const auto& s : per_shard) {  // std::map: file-name order, as the CLI lists them
    EXPECT_EQ(j["shards"][i]["file"].str(), s.first);
    EXPECT_EQ(j["shards"][i]["tensors"].u64(), s.second);
    EXPECT_EQ(j["shards"][i]["bytes"].u64(), bytes_per_shard[s.first]);
    ++i;
  }

  const RunResult text = cli({"inspect", kShardedIndex});
  EXPECT_NE(text.out.find("format       safetensors, 3 shards\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  0       10  107008  model-00001-of-00003.safetensors\n"), std::string::npos);
  EXPECT_NE(text.out.find("\nverdict      valid\n"), std::string::npos);
}

TEST(CliSharded, TensorInTheWrongShardIsNamed) {
  TempDir dir;
  const std::string index = copy_sharded(dir, "\"model.norm.weight\": \"model-00003-of-00003.safetensors\"",
                                         "\"model.norm.weight\": \"model-00001-of-00003.safetensors\"");
  const std::string shard3 = read_file(dir.file("model-00003-of-00003.safetensors"));
  const size_t entry = shard3.find("\"model.norm.weight\"");
  const RunResult r = cli({"validate", "--json", index});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "{\"file\":\"" + index + "\",\"valid\":false,\"format\":\"safetensors\",\"tensors\":" +
                std::to_string(sample_weight_map().size()) +
                ",\"error\":{\"code\":\"ShardTensorWrongShard\",\"offset\":" + std::to_string(entry) +
                ",\"tensor\":\"model.norm.weight\",\"message\":\"" + desc(ws::Status::ShardTensorWrongShard) +
                " (the index places it in model-00001-of-00003.safetensors). The index's weight_map "
                "points this tensor at another shard: regenerate the index, or check that the shards "
                "belong to this index.\",\"shard\":\"model-00003-of-00003.safetensors\"}}\n");
  const RunResult text = cli({"validate", index});
  EXPECT_EQ(text.out.rfind(index + ": invalid: ShardTensorWrongShard at byte " + std::to_string(entry) +
                               " of model-00003-of-00003.safetensors in tensor \"model.norm.weight\": ",
                           0),
            0u)
      << text.out;
}

TEST(CliSharded, IndexEntryNoShardHoldsIsMissing) {
  TempDir dir;
  const std::string index = copy_sharded(dir, "\"weight_map\": {\n",
                                         "\"weight_map\": {\n    \"extra.weight\": \"model-00002-of-00003.safetensors\",\n");
  const RunResult r = cli({"validate", "--json", index});
  EXPECT_EQ(r.exit_code, 1);
  const Json e = parse_json(r.out)["error"];
  EXPECT_EQ(e["code"].str(), "ShardTensorMissing");
  EXPECT_EQ(e["tensor"].str(), "extra.weight");
  EXPECT_EQ(e["offset"].u64(), read_file(index).find("\"extra.weight\""));
  EXPECT_TRUE(e["shard"].is_null()) << "the offset is in the index";
  EXPECT_NE(e["message"].str().find("(the index places it in model-00002-of-00003.safetensors)"),
            std::string::npos);
}

TEST(CliSharded, TensorTheIndexDoesNotListIsReported) {
  TempDir dir;
  const std::string index =
      copy_sharded(dir, "    \"model.layers.2.input_layernorm.weight\": \"model-00003-of-00003.safetensors\",\n", "");
  const RunResult r = cli({"validate", "--json", index});
  EXPECT_EQ(r.exit_code, 1);
  const Json e = parse_json(r.out)["error"];
  EXPECT_EQ(e["code"].str(), "ShardTensorNotInIndex");
  EXPECT_EQ(e["tensor"].str(), "model.layers.2.input_layernorm.weight");
  EXPECT_EQ(e["shard"].str(), "model-00003-of-00003.safetensors");
}

TEST(CliSharded, WrongTotalSizeIsReportedWithBothNumbers) {
  const uint64_t total = parse_json(read_file(kShardedIndex))["metadata"]["total_size"].u64();
  TempDir dir;
  const std::string index = copy_sharded(dir, "\"total_size\": " + std::to_string(total),
                                         "\"total_size\": " + std::to_string(total + 2));
  const RunResult r = cli({"validate", "--json", index});
  EXPECT_EQ(r.exit_code, 1);
  const Json e = parse_json(r.out)["error"];
  EXPECT_EQ(e["code"].str(), "IndexTotalSizeMismatch");
  EXPECT_NE(e["message"].str().find("(the index says " + std::to_string(total + 2) +
                                    " bytes; the tensors hold " + std::to_string(total) + ")"),
            std::string::npos)
      << e["message"].str();
}

TEST(CliSharded, MissingShardIsAnIoErrorNamingTheShard) {
  TempDir dir;
  const std::string index = copy_sharded(dir, "", "");
  fs::remove(dir.file("model-00002-of-00003.safetensors"));
  const RunResult r = cli({"validate", index});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, index + ": error: model-00002-of-00003.safetensors: cannot open: No such file or "
                           "directory. The index names this shard: is the download complete?\n");
}

TEST(CliSharded, ShardsOutsideTheIndexDirectoryAreNotOpened) {
  for (const std::string& name : {std::string("../model-00002-of-00003.safetensors"), std::string("/etc/passwd"),
                                  std::string("sub/../../x.safetensors")}) {
    TempDir dir;
    const std::string index = copy_sharded(dir, "\"model-00002-of-00003.safetensors\"", "\"" + name + "\"");
    const RunResult r = cli({"validate", "--json", index});
    EXPECT_EQ(r.exit_code, 1) << name;
    const Json e = parse_json(r.out)["error"];
    EXPECT_EQ(e["code"].str(), "UnsafeShardPath") << name;
    EXPECT_TRUE(e["shard"].is_null()) << "never opened";
    EXPECT_TRUE(e["tensor"].is_null());
    EXPECT_NE(e["message"].str().find("(\"" + name + "\")"), std::string::npos) << e["message"].str();
  }
}

TEST(CliSharded, BrokenIndexJsonIsReportedInTheIndex) {
  TempDir dir;
  const std::string index = copy_sharded(dir, "\"weight_map\": {", "\"weight_map\": [");
  const RunResult r = cli({"validate", "--json", index});
  EXPECT_EQ(r.exit_code, 1);
  const Json j = parse_json(r.out);
  EXPECT_TRUE(j["format"].is_null()) << "the index did not parse";
  EXPECT_TRUE(j["error"]["shard"].is_null());
  EXPECT_EQ(j["error"]["offset"].u64(), read_file(index).find('['));
}

// --- samples ---------------------------------------------------------------------------------------

TEST(Samples, GeneratorReproducesTheCommittedSamplesByteForByte) {
  TempDir dir;
  const RunResult r = clitest::run({kMakeSamples, dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  auto listing = [](const std::string& root) {
    std::set<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() != ".md")
        files.insert(fs::relative(e.path(), root).string());
    return files;
  };
  const std::set<std::string> committed = listing(kSamplesDir), generated = listing(dir.path());
  EXPECT_EQ(generated, committed);
  EXPECT_EQ(committed.size(), 5u);
  for (const std::string& f : committed) {
    if (!generated.count(f)) continue;
    const std::string a = read_file(kSamplesDir + "/" + f), b = read_file(dir.path() + "/" + f);
    EXPECT_EQ(a.size(), b.size()) << f;
    EXPECT_TRUE(a == b) << f << " differs from the generator's output";
  }
}

TEST(Samples, TinyLlamaIsAValidMixedDtypeLlama) {
  const RunResult r = cli({"inspect", "--json", kTinyLlama});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = parse_json(r.out);
  EXPECT_EQ(j["metadata"]["format"].str(), "pt");
  std::set<std::string> names, dtypes;
  uint64_t expected_begin = 0;
  for (const Json& t : j["tensors"].items) {
    names.insert(t["name"].str());
    dtypes.insert(t["dtype"].str());
    EXPECT_EQ(t["data_offsets"][0].u64(), expected_begin) << "back to back from 0";
    expected_begin = t["data_offsets"][1].u64();
  }
  EXPECT_EQ(dtypes, (std::set<std::string>{"BF16", "F16", "F32"}));
  for (const char* n : {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight",
                        "model.layers.1.self_attn.v_proj.weight", "model.layers.1.mlp.down_proj.weight",
                        "model.layers.0.post_attention_layernorm.weight"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(j["data_start"].u64() % 8, 0u) << "header padded to a multiple of 8";
  const uint64_t size = fs::file_size(kTinyLlama);
  EXPECT_GT(size, 2000000u);
  EXPECT_LT(size, 3000000u);
}

}  // namespace

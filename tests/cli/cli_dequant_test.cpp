// tests/cli — `weightstream dequant`: output bytes checked exactly against values from outside
// the CLI (ggml's vectors for the GGUF quant types, conversions written here from the bit layouts
// for safetensors dtypes, BitNet I2_S from FORMATS.md §5), plus the file naming of --all, the
// --json description, errors, and the pieces (file names, close names) as unit tests.
#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <filesystem>
#include <string>
#include <vector>

#include "dequant_output.h"
#include "model_dequant.h"
#include "gguf_builder.h"
#include "mini_json.h"
#include "process.h"

namespace {

namespace fs = std::filesystem;
using clitest::GgufBuilder;
using clitest::cli;
using clitest::Json;
using clitest::parse_json;
using clitest::read_file;
using clitest::RunResult;
using clitest::TempDir;
using clitest::write_file;

const std::string kShared = WS_SHARED_DIR;
const std::string kAllQuant = kShared + "/testdata/synthetic/gguf/all_quant_types.gguf";
const std::string kVectors = kShared + "/testdata/vectors/ggml/";
const std::string kDtypes = kShared + "/testdata/real/safetensors/dtypes.safetensors";

uint32_t f32_bits(const std::string& bytes, size_t i) {
  uint32_t u;
  memcpy(&u, bytes.data() + 4 * i, 4);
  return u;
}

std::string f32_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

// Equal f32 arrays; NaNs by "is NaN" and sign.
::testing::AssertionResult same_f32(const std::string& expected, const std::string& got) {
  if (expected.size() != got.size())
    return ::testing::AssertionFailure() << "sizes " << expected.size() << " and " << got.size();
  for (size_t i = 0; i < expected.size() / 4; ++i) {
    const uint32_t e = f32_bits(expected, i), g = f32_bits(got, i);
    const bool e_nan = (e & 0x7FFFFFFFu) > 0x7F800000u, g_nan = (g & 0x7FFFFFFFu) > 0x7F800000u;
    if (e_nan ? !(g_nan && (e >> 31) == (g >> 31)) : e != g)
      return ::testing::AssertionFailure() << "value " << i << ": expected 0x" << std::hex << e << ", got 0x" << g;
  }
  return ::testing::AssertionSuccess();
}

// The stored bytes of a safetensors tensor, by its data offsets from the reference crate.
std::string safetensors_data(const std::string& path, const std::string& name) {
  const Json j = parse_json(read_file(path + ".expect.json"));
  const std::string file = read_file(path);
  for (const Json& t : j["tensors"].items)
    if (t["name"].str() == name) {
      const uint64_t b = t["data_offsets"][0].u64(), e = t["data_offsets"][1].u64();
      return file.substr(j["data_start"].u64() + b, e - b);
    }
  ADD_FAILURE() << "no tensor " << name;
  return "";
}

// --- conversions from the bit layouts (not the library's) ---

float fp16_value(uint16_t h) {
  const int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return float(sign ? -v : v);
}

float e4m3fn_value(uint8_t b) {
  const int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return sign ? -NAN : NAN;
  const double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
  return float(sign ? -v : v);
}

float e5m2_value(uint8_t b) {
  const int sign = b >> 7, e = (b >> 2) & 31, m = b & 3;
  const double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -16) : ldexp(4 + m, e - 17);
  return float(sign ? -v : v);
}

float e8m0fnu_value(uint8_t b) { return b == 0xFF ? NAN : float(ldexp(1.0, int(b) - 127)); }

// --- GGUF ---

// Every tensor of all_quant_types.gguf that has a vector: the output is ggml's output, byte for
// byte (the file holds exactly the vector's blocks).
TEST(CliDequant, GgufTensorsEqualGgmlVectors) {
  TempDir dir;
  const RunResult r = cli({"dequant", kAllQuant, "--tensor", "q4_0", "-o", dir.file("q4_0.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.file("q4_0.bin")), read_file(kVectors + "Q4_0.f32.bin"));
  EXPECT_EQ(r.out, "q4_0: Q4_0 [4, 4096] -> 16384 f32 values, 65536 bytes (65.5 kB) in " + dir.file("q4_0.bin") + "\n");
  EXPECT_EQ(r.err, "");

  const RunResult all = cli({"dequant", kAllQuant, "--all", "-o", dir.file("all")});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const Json map = parse_json(read_file(kShared + "/testdata/synthetic/gguf/all_quant_types.tensor_vectors.json"));
  size_t compared = 0;
  for (const Json& e : map.items) {
    const std::string expected = read_file(kShared + "/testdata/synthetic/gguf/" + e["expected_file"].str());
    EXPECT_TRUE(same_f32(expected, read_file(dir.file("all/" + e["tensor"].str() + ".bin")))) << e["tensor"].str();
    ++compared;
  }
  EXPECT_EQ(compared, 28u);
  // Integer tensors are named with their reason; everything else was written.
  EXPECT_NE(all.out.find("\ni64: skipped: I64 holds integers, which have no float decoding\n"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\nf64: skipped: weightstream has no decoder for F64 tensors\n"), std::string::npos);
  EXPECT_NE(all.out.find("\n29 tensors, 1835072 bytes (1.8 MB), written to " + dir.file("all") + "; 5 skipped\n"),
            std::string::npos)
      << all.out;
  EXPECT_FALSE(fs::exists(dir.file("all/i64.bin")));
}

// The f32 tensor of all_quant_types: ne = [4, 4] in the file, values 0..15 as gguf-py wrote them.
TEST(CliDequant, GgufShapeIsNeReversed) {
  const Json j = parse_json(cli({"dequant", kAllQuant, "--all", "--json"}).out);
  const Json expect = parse_json(read_file(kAllQuant + ".expect.json"));
  ASSERT_EQ(j["tensors"].items.size(), expect["tensors"].items.size());
  for (size_t i = 0; i < j["tensors"].items.size(); ++i) {
    const Json& t = j["tensors"][i];
    const Json& e = expect["tensors"][i];
    EXPECT_EQ(t["name"].str(), e["name"].str());
    EXPECT_EQ(t["stored"].str(), e["type_name"].str());
    EXPECT_EQ(t["ggml_type"].u64(), e["type"].u64());
    ASSERT_EQ(t["shape"].items.size(), e["ne"].items.size());
    for (size_t k = 0; k < t["shape"].items.size(); ++k)
      EXPECT_EQ(t["shape"][k].u64(), e["ne"][e["ne"].items.size() - 1 - k].u64()) << t["name"].str();
    EXPECT_EQ(t["elements"].u64(), e["n_elements"].u64());
    EXPECT_EQ(t["stored_bytes"].u64(), e["n_bytes"].u64());
    EXPECT_EQ(t["data_offset"].u64(), e["data_offset_absolute"].u64());
    EXPECT_TRUE(t["output_file"].is_null()) << "--json without -o writes nothing";
    EXPECT_EQ(t["written"].boolean, false);
    if (t["format"].is_null()) {
      EXPECT_EQ(t["output_bytes"].u64(), 0u);
      EXPECT_FALSE(t["skipped"].is_null());
    } else {
      EXPECT_EQ(t["output_bytes"].u64(), 4 * e["n_elements"].u64());
      EXPECT_TRUE(t["skipped"].is_null());
    }
  }
}

TEST(CliDequant, JsonOfOneTensorWritten) {
  TempDir dir;
  const RunResult r = cli({"dequant", kAllQuant, "--tensor", "q4_k", "--to", "f16", "-o", dir.file("q.bin"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"file\":\"" + kAllQuant + "\",\"format\":\"gguf\",\"to\":\"f16\",\"tensors\":[{\"name\":\"q4_k\","
                   "\"stored\":\"Q4_K\",\"ggml_type\":12,\"format\":\"Q4_K\",\"block\":{\"elements\":256,\"bytes\":144},"
                   "\"shape\":[4,4096],\"elements\":16384,\"stored_bytes\":9216,\"data_offset\":140704,"
                   "\"output_bytes\":32768,\"output_file\":\"" + dir.file("q.bin") + "\",\"written\":true,"
                   "\"skipped\":null}],\"error\":null}\n");
  EXPECT_EQ(read_file(dir.file("q.bin")).size(), 32768u);
}

// The f16 nearest to f (ties to even), through doubles: |f| over the unit of its last place as a
// half, rounded by nearbyint (to even), then re-encoded.
uint16_t half_rne(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000);
  if (isnan(f)) return uint16_t(sign | 0x7E00);
  const double a = fabs(double(f));
  if (isinf(a)) return uint16_t(sign | 0x7C00);
  if (a == 0) return sign;
  int e;
  frexp(a, &e);
  const int exp = e - 1 < -14 ? -14 : e - 1;
  const double v = nearbyint(a / ldexp(1.0, exp - 10)) * ldexp(1.0, exp - 10);
  if (v >= 65536.0) return uint16_t(sign | 0x7C00);
  if (v < ldexp(1.0, -14)) return uint16_t(sign | uint16_t(v / ldexp(1.0, -24)));
  frexp(v, &e);
  return uint16_t(sign | ((e - 1 + 15) << 10) | (uint16_t(v / ldexp(1.0, e - 11)) - 1024));
}

// f16 output is the round-to-nearest-even of the f32 output: Q2_K's values (d * sc * q - dmin *
// m) are not all halves, so rounding shows.
TEST(CliDequant, F16OutputIsTheRoundedF32) {
  TempDir dir;
  ASSERT_EQ(cli({"dequant", kAllQuant, "--tensor", "q2_k", "--to", "f16", "-o", dir.file("h.bin")}).exit_code, 0);
  const std::string h = read_file(dir.file("h.bin")), f = read_file(kVectors + "Q2_K.f32.bin");
  ASSERT_EQ(h.size() * 2, f.size());
  size_t bad = 0, inexact = 0;
  for (size_t i = 0; i < h.size() / 2; ++i) {
    uint16_t got;
    memcpy(&got, h.data() + 2 * i, 2);
    float v;
    memcpy(&v, f.data() + 4 * i, 4);
    const uint16_t want = half_rne(v);
    if (double(fp16_value(want)) != double(v)) ++inexact;
    if (got != want && ++bad <= 3) ADD_FAILURE() << "value " << i << ": " << v << " gave 0x" << std::hex << got << ", want 0x" << want;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(inexact, 1000u) << "the test needs values that round";
}

TEST(CliDequant, ChunkSizeDoesNotChangeTheOutput) {
  TempDir dir;
  const std::string expected = read_file(kVectors + "Q5_K.f32.bin");
  for (const char* chunk : {"1", "7", "144", "1M"}) {
    const std::string out = dir.file(std::string("q5k_") + chunk);
    const RunResult r = cli({"dequant", kAllQuant, "--tensor", "q5_k", "--chunk-size", chunk, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << chunk << r.err;
    EXPECT_EQ(read_file(out), expected) << chunk;
  }
  // Standard input (a redirected regular file) gives the same.
  const RunResult r = cli({"dequant", "-", "--tensor", "q5_k", "-o", dir.file("stdin.bin")}, kAllQuant);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.file("stdin.bin")), expected);
}

TEST(CliDequant, DashWritesTheValuesToStandardOutput) {
  const RunResult r = cli({"dequant", kAllQuant, "--tensor", "iq4_nl", "-o", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(kVectors + "IQ4_NL.f32.bin"));
  EXPECT_EQ(r.err, "iq4_nl: IQ4_NL [4, 4096] -> 16384 f32 values, 65536 bytes (65.5 kB) to standard output\n");
}

// --- safetensors ---

TEST(CliDequant, SafetensorsBf16F16AndF8EqualConversionsFromTheBits) {
  TempDir dir;
  struct Case {
    const char* name;
    size_t width;  // stored bytes per value
    float (*value)(uint32_t bits);
  } cases[] = {
      {"bf16", 2, [](uint32_t b) { float f; uint32_t u = b << 16; memcpy(&f, &u, 4); return f; }},
      {"f16", 2, [](uint32_t b) { return fp16_value(uint16_t(b)); }},
      {"f8_e4m3", 1, [](uint32_t b) { return e4m3fn_value(uint8_t(b)); }},
      {"f8_e5m2", 1, [](uint32_t b) { return e5m2_value(uint8_t(b)); }},
      {"f8_e8m0", 1, [](uint32_t b) { return e8m0fnu_value(uint8_t(b)); }},
  };
  for (const Case& c : cases) {
    const std::string stored = safetensors_data(kDtypes, c.name);
    std::vector<float> expected;
    for (size_t i = 0; i < stored.size(); i += c.width) {
      uint32_t bits = uint8_t(stored[i]);
      if (c.width == 2) bits |= uint32_t(uint8_t(stored[i + 1])) << 8;
      expected.push_back(c.value(bits));
    }
    const RunResult r = cli({"dequant", kDtypes, "--tensor", c.name, "-o", dir.file(c.name)});
    ASSERT_EQ(r.exit_code, 0) << c.name << r.err;
    EXPECT_TRUE(same_f32(f32_bytes(expected), read_file(dir.file(c.name)))) << c.name;
  }
  // F32 is copied as it is stored.
  ASSERT_EQ(cli({"dequant", kDtypes, "--tensor", "f32", "-o", dir.file("f32")}).exit_code, 0);
  EXPECT_EQ(read_file(dir.file("f32")), safetensors_data(kDtypes, "f32"));
}

// dtypes.safetensors' F8_E4M3 tensor holds all 256 bytes: 0x7F and 0xFF are NaN in the tensor
// dtype (torch.float8_e4m3fn), not MLX's ±480.
TEST(CliDequant, SafetensorsF8E4M3NaNPatterns) {
  TempDir dir;
  ASSERT_EQ(cli({"dequant", kDtypes, "--tensor", "f8_e4m3", "-o", dir.file("e4m3")}).exit_code, 0);
  const std::string stored = safetensors_data(kDtypes, "f8_e4m3"), out = read_file(dir.file("e4m3"));
  size_t nans = 0;
  for (size_t i = 0; i < stored.size(); ++i) {
    float v;
    memcpy(&v, out.data() + 4 * i, 4);
    if (isnan(v)) {
      ++nans;
      EXPECT_EQ(uint8_t(stored[i]) & 0x7F, 0x7F);
    }
  }
  EXPECT_EQ(nans, 2u);
}

TEST(CliDequant, UnsupportedDtypeSaysSoAndWritesNothing) {
  TempDir dir;
  const RunResult r = cli({"dequant", kDtypes, "--tensor", "i64", "-o", dir.file("x")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "weightstream: " + kDtypes + ": tensor \"i64\" cannot be decoded: I64 holds integers, which have no float decoding\n");
  EXPECT_FALSE(fs::exists(dir.file("x")));
  const RunResult c = cli({"dequant", kDtypes, "--tensor", "c64", "-o", dir.file("x")});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("C64 holds complex numbers"), std::string::npos) << c.err;
}

TEST(CliDequant, MissingTensorListsCloseNames) {
  TempDir dir;
  RunResult r = cli({"dequant", kDtypes, "--tensor", "F8_E4M3", "-o", dir.file("x")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "weightstream: " + kDtypes + ": no tensor named \"F8_E4M3\" among the 17 tensors of the file; "
                   "close names: \"f8_e4m3\", \"f8_e5m2\", \"f8_e8m0\"\n");
  r = cli({"dequant", kDtypes, "--tensor", "nothing-like-it", "-o", dir.file("x")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "weightstream: " + kDtypes + ": no tensor named \"nothing-like-it\" among the 17 tensors of the "
                   "file (weightstream inspect lists them)\n");
  const Json j = parse_json(cli({"dequant", kDtypes, "--tensor", "bf61", "--json"}).out);
  EXPECT_EQ(j["error"]["code"].str(), "TensorNotFound");
  EXPECT_EQ(j["error"]["tensor"].str(), "bf61");
  EXPECT_EQ(j["tensors"].items.size(), 0u);
  EXPECT_FALSE(fs::exists(dir.file("x")));
}

// A safetensors file written here, with names that need sanitizing; every tensor is F32 [1].
std::string safetensors_with_names(const std::vector<std::string>& names) {
  std::string header = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    header += (i ? "," : "") + std::string("\"") + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string data;
  for (size_t i = 0; i < names.size(); ++i) {
    const float v = float(i) + 0.5f;
    data.append(reinterpret_cast<const char*>(&v), 4);
  }
  return clitest::u64le(header.size()) + header + data;
}

TEST(CliDequant, AllNamesFilesSafely) {
  TempDir dir;
  const std::vector<std::string> names = {"a/b", "A/b", ".hidden", "", "x y", "..", "ok.Name-1_2", "../up"};
  write_file(dir.file("m.safetensors"), safetensors_with_names(names));
  const RunResult r = cli({"dequant", dir.file("m.safetensors"), "--all", "-o", dir.file("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> files = {"a_b", "A_b~2", "_.hidden", "_", "x_y", "_..", "ok.Name-1_2", "_.._up"};
  for (size_t i = 0; i < names.size(); ++i) {
    const float v = float(i) + 0.5f;
    EXPECT_EQ(read_file(dir.file("out/" + files[i] + ".bin")), std::string(reinterpret_cast<const char*>(&v), 4))
        << files[i];
  }
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir.file("out"))) {
    (void)e;
    ++n;
  }
  EXPECT_EQ(n, names.size()) << "nothing outside the directory, nothing else in it";
  EXPECT_FALSE(fs::exists(dir.file("up.bin")));
}

// --- BitNet I2_S ---

// A BitNet file with one I2_S tensor ne = [256, 2]: 512 codes in 4 groups of 128 (32 bytes each:
// value j of a group in byte j % 32 at shift 6 - 2 (j / 32)), then the 32-byte tail holding the
// f32 scale. Codes 0, 1, 2 are -1, 0, +1 (FORMATS.md §5).
struct I2sFile {
  std::string bytes;
  std::vector<float> expected;
};

I2sFile i2s_file(float scale) {
  const uint64_t n = 512;
  GgufBuilder b;
  b.kv_string("general.architecture", "bitnet-b1.58").tensor("blk.0.ffn_down.weight", {256, 2}, 36, n / 4 + 32);
  I2sFile f;
  f.bytes = b.bytes();
  const size_t data = f.bytes.size() - (n / 4 + 32);  // the only tensor is last
  std::vector<int> codes(n);
  for (uint64_t i = 0; i < n; ++i) codes[i] = int((i * 7 + i / 5) % 3);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t group = i / 128, j = i % 128;
    const size_t at = data + group * 32 + j % 32;
    f.bytes[at] = char(uint8_t(f.bytes[at]) | uint8_t(codes[i] << (6 - 2 * (j / 32))));
    f.expected.push_back(float(codes[i] - 1) * scale);
  }
  memcpy(&f.bytes[data + n / 4], &scale, 4);
  return f;
}

TEST(CliDequant, BitNetI2SReadsItsScaleFromTheTail) {
  TempDir dir;
  const I2sFile f = i2s_file(0.625f);
  write_file(dir.file("b.gguf"), f.bytes);
  const RunResult r = cli({"dequant", dir.file("b.gguf"), "--tensor", "blk.0.ffn_down.weight", "-o", dir.file("w.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.file("w.bin")), f32_bytes(f.expected));
  EXPECT_EQ(r.out, "blk.0.ffn_down.weight: I2_S [2, 256] -> 512 f32 values, 2048 bytes (2.0 kB) in " + dir.file("w.bin") + "\n");

  const Json j = parse_json(cli({"dequant", dir.file("b.gguf"), "--all", "--json"}).out);
  EXPECT_EQ(j["tensors"][0]["stored"].str(), "I2_S");
  EXPECT_EQ(j["tensors"][0]["format"].str(), "I2_S");
  EXPECT_EQ(j["tensors"][0]["i2s_scale"].text, "0.625");
  EXPECT_EQ(j["tensors"][0]["stored_bytes"].u64(), 160u);

  // From standard input the tail cannot be read ahead of the codes.
  const RunResult s = cli({"dequant", "-", "--tensor", "blk.0.ffn_down.weight", "-o", dir.file("s.bin")}, dir.file("b.gguf"));
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("is I2_S, whose scale follows its codes"), std::string::npos) << s.err;
  EXPECT_FALSE(fs::exists(dir.file("s.bin")));
}

// --- invalid data ---

// A Q8_0 tensor whose block 3 has an inf scale: ggml's row validation rejects it; the CLI says
// where and leaves no partial output behind.
TEST(CliDequant, InvalidBlockIsReportedAtItsOffsetAndNoPartialFileRemains) {
  TempDir dir;
  GgufBuilder b;
  b.tensor("w", {32 * 8}, 8, 34 * 8);
  std::string bytes = b.bytes();
  const size_t data = bytes.size() - 34 * 8;
  for (int k = 0; k < 8; ++k) {  // d = 1.0 everywhere, then inf in block 3
    bytes[data + 34 * k] = 0x00;
    bytes[data + 34 * k + 1] = 0x3C;
  }
  bytes[data + 34 * 3 + 1] = 0x7C;
  write_file(dir.file("bad.gguf"), bytes);
  const RunResult r = cli({"dequant", dir.file("bad.gguf"), "--tensor", "w", "-o", dir.file("w.bin"), "--chunk-size", "40"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("weightstream: " + dir.file("bad.gguf") + ": invalid: InvalidBlockData at byte " +
                            std::to_string(data + 34 * 3) + " in tensor \"w\": ",
                        0),
            0u)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.file("w.bin")));
}

TEST(CliDequant, InvalidFileIsExitOne) {
  TempDir dir;
  std::string bytes = read_file(kAllQuant);
  bytes.resize(bytes.size() - 100);
  write_file(dir.file("short.gguf"), bytes);
  const RunResult r = cli({"dequant", dir.file("short.gguf"), "--tensor", "q4_0", "-o", dir.file("x")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("invalid: TruncatedData"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("x")));
  EXPECT_EQ(cli({"dequant", dir.file("missing.gguf"), "--all", "-o", dir.file("d")}).exit_code, 2);
}

// --- usage ---

TEST(CliDequant, UsageErrors) {
  const struct {
    std::vector<std::string> args;
    const char* message;
  } cases[] = {
      {{"dequant", kAllQuant, "-o", "x"}, "dequant needs either --tensor NAME or --all"},
      {{"dequant", kAllQuant, "--all", "--tensor", "q4_0", "-o", "x"}, "dequant needs either --tensor NAME or --all"},
      {{"dequant", kAllQuant, "--tensor", "q4_0"}, "dequant --tensor needs -o FILE"},
      {{"dequant", kAllQuant, "--all"}, "dequant --all needs -o DIR"},
      {{"dequant", kAllQuant, "--all", "-o", "-"}, "-o - (standard output) takes one tensor, not --all"},
      {{"dequant", kAllQuant, "--tensor", "q4_0", "--to", "f64", "-o", "x"}, "--to wants f32 or f16, not 'f64'"},
      {{"dequant", kAllQuant, kAllQuant, "--all", "-o", "x"}, "dequant takes one file"},
      {{"validate", kAllQuant, "--all"}, "--all is an option of dequant"},
      {{"inspect", kAllQuant, "--to", "f16"}, "--to is an option of dequant"},
  };
  for (const auto& c : cases) {
    const RunResult r = cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_EQ(r.err.rfind(std::string("weightstream: ") + c.message + "\n\nusage:", 0), 0u) << r.err;
  }
}

// --- the pieces ---

TEST(CliDequantUnit, OutputFileStems) {
  std::vector<std::string> taken;
  EXPECT_EQ(wscli::output_file_stem("model.layers.0.mlp.up_proj.weight", &taken), "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(wscli::output_file_stem("a/b", &taken), "a_b");
  EXPECT_EQ(wscli::output_file_stem("a:b", &taken), "a_b~2");
  EXPECT_EQ(wscli::output_file_stem("A_B", &taken), "A_B~3") << "case-insensitive filesystems";
  EXPECT_EQ(wscli::output_file_stem("", &taken), "_");
  EXPECT_EQ(wscli::output_file_stem("..", &taken), "_..");
  EXPECT_EQ(wscli::output_file_stem("\xc3\xa9t\xc3\xa9", &taken), "__t__") << "bytes, not characters";
  EXPECT_EQ(wscli::output_file_stem(std::string(300, 'x'), &taken), std::string(200, 'x'));
}

TEST(CliDequantUnit, CloseNames) {
  const std::vector<std::string> names = {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.1.attn_q.weight",
                                          "output.weight", "token_embd.weight"};
  EXPECT_EQ(wscli::close_names("blk.0.attn_q.weigth", names, 5),
            (std::vector<std::string>{"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.1.attn_q.weight"}));
  EXPECT_EQ(wscli::close_names("OUTPUT.weight", names, 5), (std::vector<std::string>{"output.weight"}));
  EXPECT_EQ(wscli::close_names("token_embd", names, 5), (std::vector<std::string>{"token_embd.weight"}));
  EXPECT_EQ(wscli::close_names("zzz", names, 5), std::vector<std::string>{});
  EXPECT_EQ(wscli::close_names("blk.0.attn_q.weigth", names, 1), (std::vector<std::string>{"blk.0.attn_q.weight"}));
}

TEST(CliDequantUnit, NoDecodingReasons) {
  EXPECT_EQ(wscli::no_decoding_reason("U32", false), "U32 holds integers, which have no float decoding");
  EXPECT_EQ(wscli::no_decoding_reason("F4", false),
            "weightstream has no decoder for F4 (it decodes F32, F16, BF16, F8_E4M3, F8_E5M2 and F8_E8M0)");
  EXPECT_NE(wscli::no_decoding_reason("TL2", true).find("pre-tiled"), std::string::npos);
  EXPECT_NE(wscli::no_decoding_reason("Q8_1", true).find("no dequantizer"), std::string::npos);
}

}  // namespace

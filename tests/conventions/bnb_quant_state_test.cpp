// bitsandbytes' packed quant state JSON (lib/src/conventions/bnb_quant_state.h): the documents
// QuantState.as_dict(packed=True) writes (json.dumps: ", " and ": " separators, the keys in
// as_dict's order) parsed whole and in every 1-byte and random chunking, and each malformed
// neighbour refused with BnbQuantStateInvalid at its byte.
#include "../../lib/src/conventions/bnb_quant_state.h"

#include <gtest/gtest.h>
#include <string.h>

#include <random>
#include <string>

namespace {

using ws::BnbQuantStateParser;
using ws::Status;

// What json.dumps writes for a [4096, 4096] bf16 weight, nf4, double quantization (the offset as
// Python prints an f32's value: the shortest decimal of the double).
const char kNested[] =
    "{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [4096, 4096], "
    "\"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": 0.018633905798196793}";
const char kPlain[] = "{\"quant_type\": \"fp4\", \"blocksize\": 128, \"dtype\": \"float16\", \"shape\": [3, 96]}";

struct Parsed {
  Status status;
  uint64_t pos;
  ws::BnbQuantState state;
};

// Fed in pieces of `piece` bytes (0: whole), or of random sizes with `seed`.
Parsed parse(const std::string& text, size_t piece = 0, uint32_t seed = 0) {
  BnbQuantStateParser p;
  std::mt19937 rng(seed);
  const uint8_t* d = reinterpret_cast<const uint8_t*>(text.data());
  size_t at = 0;
  Status s = Status::Ok;
  while (at < text.size() && s == Status::Ok) {
    size_t n = piece ? piece : seed ? 1 + rng() % 9 : text.size();
    if (n > text.size() - at) n = text.size() - at;
    s = p.feed(d + at, n);
    at += n;
  }
  if (s == Status::Ok) s = p.finish();
  return {s, p.error_pos(), p.state()};
}

TEST(BnbQuantState, TheDocumentsBitsandbytesWrites) {
  for (int cut = 0; cut < 3; ++cut) {
    const Parsed n = parse(kNested, cut == 1 ? 1 : 0, cut == 2 ? 17 : 0);
    ASSERT_EQ(n.status, Status::Ok) << cut << " at " << n.pos;
    EXPECT_FALSE(n.state.fp4);
    EXPECT_EQ(n.state.blocksize, 64u);
    EXPECT_EQ(n.state.dtype, ws::DType::BF16);
    ASSERT_EQ(n.state.rank, 2u);
    EXPECT_EQ(n.state.shape[0], 4096u);
    EXPECT_EQ(n.state.shape[1], 4096u);
    EXPECT_TRUE(n.state.nested);
    EXPECT_EQ(n.state.nested_blocksize, 256u);
    EXPECT_EQ(n.state.nested_offset, 0.018633905798196793f);
    const Parsed p = parse(kPlain, cut == 1 ? 1 : 0, cut == 2 ? 5 : 0);
    ASSERT_EQ(p.status, Status::Ok) << cut;
    EXPECT_TRUE(p.state.fp4);
    EXPECT_EQ(p.state.blocksize, 128u);
    EXPECT_EQ(p.state.dtype, ws::DType::F16);
    EXPECT_EQ(p.state.rank, 2u);
    EXPECT_EQ(p.state.shape[1], 96u);
    EXPECT_FALSE(p.state.nested);
  }
}

// nested_offset: the f32 whose Python repr (shortest round trip of the double) is written.
TEST(BnbQuantState, NestedOffsetIsTheF32Written) {
  struct C {
    const char* text;
    uint32_t bits;
  } cases[] = {
      {"0.018633905798196793", 0},  // the compiler's f32 literal (below)
      {"0.1", 0x3DCCCCCDu},
      {"-0.5", 0xBF000000u},
      {"1e-05", 0x3727C5ACu},
      {"1.401298464324817e-45", 0x00000001u},  // the smallest f32 subnormal
      {"3.4028234663852886e+38", 0x7F7FFFFFu},  // the largest f32
      {"0.0", 0x00000000u},
      {"12", 0x41400000u},
  };
  float lit = 0.018633905798196793f;
  memcpy(&cases[0].bits, &lit, 4);
  for (const C& c : cases) {
    const std::string doc = std::string("{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"float32\", \"shape\": [2], "
                                        "\"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": ") +
                            c.text + "}";
    for (size_t piece : {size_t(0), size_t(1), size_t(3)}) {
      const Parsed p = parse(doc, piece);
      ASSERT_EQ(p.status, Status::Ok) << c.text;
      uint32_t bits;
      memcpy(&bits, &p.state.nested_offset, 4);
      EXPECT_EQ(bits, c.bits) << c.text << " piece " << piece;
    }
  }
}

// Each neighbour: BnbQuantStateInvalid at the byte that is wrong.
TEST(BnbQuantState, MalformedNeighbours) {
  const std::string head = "{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [8, 8]";
  struct C {
    std::string text;
    std::string at;  // the text at the error position (empty: the end)
  } cases[] = {
      {head, ""},                                                          // not closed
      {head + "} x", "x"},                                                  // trailing
      {"[" + head.substr(1) + "]", "["},                                    // not an object
      {head + ", \"absmax\": 1}", "\"absmax\""},                            // a key from_dict does not know
      {"{\"quant_type\": \"nf5\"" + head.substr(20) + "}", "\"nf5\""},      // quant_type
      {"{\"quant_type\": \"nf4\", \"blocksize\": -64" + head.substr(38) + "}", "-64"},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64.0" + head.substr(38) + "}", "64.0"},
      {"{\"quant_type\": \"nf4\", \"blocksize\": \"64\"" + head.substr(38) + "}", "\"64\""},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"float64\", \"shape\": [8, 8]}", "\"float64\""},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": null}", "null"},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": []}", "]"},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [8, 0]}", "0]"},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [1, 2, 3, 4, 5]}", "5]"},
      {"{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [[8], 8]}", "[8]"},
      {"{\"blocksize\": 64, \"dtype\": \"bfloat16\", \"shape\": [8, 8]}", ""},  // no quant_type
      {head + ", \"nested_blocksize\": 256}", ""},                          // nested items: all or none
      {head + ", \"nested_blocksize\": 256, \"nested_dtype\": \"float16\", \"nested_offset\": 0.5}", "\"float16\""},
      {head + ", \"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": 1e39}", "1e39"},
      {head + ", \"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": \"0.5\"}", "\"0.5\""},
      {head + ", \"quant_type\": true}", "true"},
      {"{\"quant_type\": \"nf4\" \"blocksize\": 64}", "\"blocksize\""},  // JSON syntax: the lexer's position
      {"", ""},
  };
  for (const C& c : cases) {
    const size_t want = c.at.empty() ? c.text.size() : c.text.find(c.at);
    ASSERT_NE(want, std::string::npos) << c.text;
    for (int cut = 0; cut < 3; ++cut) {
      const Parsed p = parse(c.text, cut == 1 ? 1 : 0, cut == 2 ? 3 : 0);
      EXPECT_EQ(p.status, Status::BnbQuantStateInvalid) << c.text << " cut " << cut;
      EXPECT_EQ(p.pos, want) << c.text << " cut " << cut;
    }
  }
}

}  // namespace

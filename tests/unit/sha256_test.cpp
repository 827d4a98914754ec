// ws::Sha256 (lib/src/core/sha256.cpp): the NIST vectors (FIPS 180-4 examples; SHA256ShortMsg.rsp of
// the CAVS suite), every split of a message into two updates and random chunkings giving the same
// digest, every length around the block and padding boundaries against the tests' own independent
// implementation (tests/conformance/sha256.cpp), and the hex helpers.
#include "weightstream/sha256.h"

#include <gtest/gtest.h>
#include <string.h>

#include <string>
#include <vector>

#include "sha256.h"

namespace {

std::string hex_of(const uint8_t d[32]) {
  char h[65];
  ws::sha256_to_hex(d, h);
  return h;
}

std::string digest(const std::string& m) {
  uint8_t d[32];
  ws::sha256(m.data(), m.size(), d);
  return hex_of(d);
}

std::string unhex(const char* h) {
  std::string out;
  for (size_t i = 0; h[i] && h[i + 1]; i += 2) out.push_back(char(std::stoi(std::string(h + i, 2), nullptr, 16)));
  return out;
}

TEST(Sha256, NistExamples) {
  // FIPS 180-4 / its example document (one block, two blocks, the 896-bit message).
  EXPECT_EQ(digest(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, NistShortMessages) {
  // SHA256ShortMsg.rsp, Len = 8, 16, 24, 32.
  EXPECT_EQ(digest(unhex("d3")), "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1");
  EXPECT_EQ(digest(unhex("11af")), "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98");
  EXPECT_EQ(digest(unhex("b4190e")), "dff2e73091f6c05e528896c4c831b9448653dc2ff043528f6769437bc7b975c2");
  EXPECT_EQ(digest(unhex("74ba2521")), "b16aa56be3880d18cd41e68384cf1ec8c17680c45a02b1575dc1518923ae8b0e");
}

TEST(Sha256, OneMillionAsInPiecesOfEverySize) {
  // FIPS 180-4 example: one million 'a'. Fed in pieces of 1, 3, 63, 64, 65 and 1000 bytes.
  const std::string m(1000000, 'a');
  for (size_t piece : {size_t(1), size_t(3), size_t(63), size_t(64), size_t(65), size_t(1000), m.size()}) {
    ws::Sha256 h;
    for (size_t at = 0; at < m.size(); at += piece) h.update(m.data() + at, std::min(piece, m.size() - at));
    EXPECT_EQ(h.bytes(), m.size());
    uint8_t d[32];
    h.finish(d);
    EXPECT_EQ(hex_of(d), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") << piece;
  }
}

TEST(Sha256, EveryLengthAroundTheBlocksAgreesWithAnIndependentImplementation) {
  std::string m;
  for (size_t n = 0; n <= 300; ++n) {
    EXPECT_EQ(digest(m), wstest::sha256_hex(m.data(), m.size())) << n;
    m.push_back(char(n * 37 + 11));
  }
}

TEST(Sha256, EverySplitIntoTwoUpdatesGivesTheSameDigest) {
  std::string m;
  for (int i = 0; i < 200; ++i) m.push_back(char(i * 7));
  const std::string want = digest(m);
  for (size_t cut = 0; cut <= m.size(); ++cut) {
    ws::Sha256 h;
    h.update(m.data(), cut);
    h.update(m.data() + cut, m.size() - cut);
    uint8_t d[32];
    h.finish(d);
    EXPECT_EQ(hex_of(d), want) << cut;
  }
}

TEST(Sha256, ResetStartsOver) {
  ws::Sha256 h;
  h.update("garbage", 7);
  uint8_t d[32];
  h.finish(d);
  h.reset();
  h.update("abc", 3);
  h.finish(d);
  EXPECT_EQ(hex_of(d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, Hex) {
  uint8_t d[32], back[32];
  ws::sha256("abc", 3, d);
  char h[65];
  ws::sha256_to_hex(d, h);
  EXPECT_EQ(strlen(h), 64u);
  ASSERT_TRUE(ws::sha256_from_hex(h, 64, back));
  EXPECT_EQ(memcmp(d, back, 32), 0);
  std::string upper = h;
  for (char& c : upper) c = char(toupper(c));
  ASSERT_TRUE(ws::sha256_from_hex(upper.data(), 64, back));
  EXPECT_EQ(memcmp(d, back, 32), 0);
  // Wrong lengths and non-hex digits leave the output alone.
  uint8_t untouched[32];
  memset(untouched, 0x5a, 32);
  EXPECT_FALSE(ws::sha256_from_hex(h, 63, untouched));
  EXPECT_FALSE(ws::sha256_from_hex(h, 65, untouched));
  std::string bad = h;
  bad[63] = 'g';
  EXPECT_FALSE(ws::sha256_from_hex(bad.data(), 64, untouched));
  EXPECT_FALSE(ws::sha256_from_hex(nullptr, 64, untouched));
  for (uint8_t b : untouched) EXPECT_EQ(b, 0x5a);
}

}  // namespace

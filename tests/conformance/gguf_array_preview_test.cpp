// Limits::gguf_array_full / gguf_array_head: a long GGUF string array hands out only its first
// elements and its last; the ones between are still read and checked, and counted in
// Event::string_bytes. Checked against the same file read without the preview, under every
// chunking, and with an error inside a skipped element (same status, same offset).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf_writer.h"
#include "weightstream/reader.h"

namespace {

using namespace wsgguf;

struct Piece {
  uint64_t kv, index, offset, string_bytes;
  bool first, last;
  std::string bytes;
  bool operator==(const Piece& o) const {
    return kv == o.kv && index == o.index && offset == o.offset && string_bytes == o.string_bytes &&
           first == o.first && last == o.last && bytes == o.bytes;
  }
};

struct Seen {
  std::vector<Piece> pieces;       // KvBytes of string arrays, pieces of one element joined
  std::vector<uint64_t> end_bytes;  // KvEnd's string_bytes, per KV
  ws::Status status = ws::Status::Ok;
  uint64_t error_offset = 0;
  bool header_ready = false;
};

// Reads `b` in pieces of `step` bytes (0: whole); a string element's pieces are joined.
Seen read(const std::string& b, const ws::Limits& limits, size_t step) {
  static uint8_t arena[1 << 20];
  ws::Reader r(arena, sizeof arena, limits);
  Seen s;
  size_t at = 0;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (at == b.size()) {
        r.finish();
        continue;
      }
      size_t n = step == 0 || b.size() - at < step ? b.size() - at : step;
      r.feed(b.data() + at, n);
      at += n;
      continue;
    }
    if (e.type == ws::EventType::KvBytes && e.value_type == ws::GgufType::Array) {
      if (e.first) s.pieces.push_back(Piece{e.kv, e.index, e.offset, 0, true, false, std::string()});
      Piece& p = s.pieces.back();
      p.bytes.append(reinterpret_cast<const char*>(e.data), e.size);
      p.last = e.last;
      p.string_bytes = e.string_bytes;
      continue;
    }
    if (e.type == ws::EventType::KvEnd) s.end_bytes.push_back(e.string_bytes);
    if (e.type == ws::EventType::HeaderReady) {
      s.header_ready = true;
      return s;
    }
    if (e.type == ws::EventType::Error) {
      s.status = r.error().code;
      s.error_offset = r.error().offset;
      return s;
    }
  }
}

std::vector<std::string> vocab(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back(i % 7 == 3 ? std::string() : "tok" + std::to_string(i * 31));
  return v;
}

ws::Limits preview(uint64_t full, uint64_t head) {
  ws::Limits l;
  l.gguf_array_full = full;
  l.gguf_array_head = head;
  return l;
}

TEST(GgufArrayPreview, OnlyTheHeadAndTheLastOfALongArray) {
  Spec spec;
  const std::vector<std::string> tokens = vocab(100);
  spec.kvs = {kv_str("general.architecture", "llama"), kv_arr_str("tokenizer.ggml.tokens", tokens),
              kv_arr_str("short", {"a", "bb", "ccc"}), kv_arr("scores", kF32, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18})};
  const Built b = build(spec);
  uint64_t total = 0;
  for (const std::string& t : tokens) total += t.size();

  const Seen all = read(b.bytes, ws::Limits(), 0);
  ASSERT_TRUE(all.header_ready);
  ASSERT_EQ(all.pieces.size(), 100u + 3u);
  EXPECT_EQ(all.pieces[99].string_bytes, total);
  EXPECT_EQ(all.end_bytes[1], total);
  EXPECT_EQ(all.end_bytes[2], 6u);
  EXPECT_EQ(all.end_bytes[0], 0u);  // a plain string value: no array count

  for (size_t step : {size_t(0), size_t(1), size_t(7), size_t(64)}) {
    const Seen p = read(b.bytes, preview(16, 5), step);
    ASSERT_TRUE(p.header_ready) << step;
    // tokens: elements 0..4 and 99, exactly as read without the preview; "short" (3 <= 16) whole.
    ASSERT_EQ(p.pieces.size(), 6u + 3u) << step;
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(p.pieces[i], all.pieces[i]) << "element " << i << ", step " << step;
    EXPECT_EQ(p.pieces[5], all.pieces[99]) << step;
    EXPECT_EQ(p.pieces[5].string_bytes, total);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(p.pieces[6 + i], all.pieces[100 + i]) << step;
    EXPECT_EQ(p.end_bytes, all.end_bytes) << step;
  }
  // A head of 0: the last element alone.
  const Seen last = read(b.bytes, preview(16, 0), 3);
  ASSERT_EQ(last.pieces.size(), 1u + 3u);
  EXPECT_EQ(last.pieces[0], all.pieces[99]);
}

TEST(GgufArrayPreview, ASkippedElementIsStillChecked) {
  Spec spec;
  spec.kvs = {kv_arr_str("tokenizer.ggml.tokens", vocab(50))};
  Built b = build(spec);
  // Element 20's length runs past the end of the file: GgufStringTooLong at its length field.
  b.patch(Field::StrLen, 0, uint64_t(1) << 40, 20);
  const Seen all = read(b.bytes, ws::Limits(), 0);
  ASSERT_EQ(all.status, ws::Status::GgufStringTooLong);
  EXPECT_EQ(all.error_offset, b.field(Field::StrLen, 0, 20).begin);
  for (size_t step : {size_t(0), size_t(1), size_t(13)}) {
    const Seen p = read(b.bytes, preview(16, 5), step);
    EXPECT_EQ(p.status, all.status) << step;
    EXPECT_EQ(p.error_offset, all.error_offset) << step;
  }
  // Cut inside a skipped element's bytes: the same truncation either way.
  Built c = build(spec);
  c.bytes.resize(c.field(Field::StrBytes, 0, 30).begin + 2);
  const Seen cut_all = read(c.bytes, ws::Limits(), 0);
  const Seen cut_preview = read(c.bytes, preview(16, 5), 1);
  EXPECT_NE(cut_all.status, ws::Status::Ok);
  EXPECT_EQ(cut_preview.status, cut_all.status);
  EXPECT_EQ(cut_preview.error_offset, cut_all.error_offset);
}

}  // namespace

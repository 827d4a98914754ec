// ModelLoaderOptions::gguf_array_full / gguf_array_head: a long GGUF string array hands out only
// its first elements and its last as Kv events; the reader still reads and checks the ones between,
// and ModelLoader::kv_string_bytes() counts them. Checked against the same file loaded without the
// preview, under several chunkings, and with an error inside a skipped element (same status, same
// offset).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gguf_writer.h"
#include "weightstream/model_loader.h"

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
  std::vector<Piece> pieces;       // KvBytes of string arrays, the pieces of one element joined
  std::vector<uint64_t> end_bytes;  // string_bytes at each KvEnd
  ws::Status status = ws::Status::Ok;
  uint64_t error_offset = 0;
  bool done = false;
};

// Loads `file` (headers only) answering each read with at most `step` bytes (0: as asked).
Seen load(const std::string& file, uint64_t full, uint64_t head, size_t step) {
  static uint64_t arena[1 << 17];
  ws::ModelLoaderOptions opt;
  opt.mode = ws::ModelLoadMode::Headers;
  opt.gguf_array_full = full;
  opt.gguf_array_head = head;
  ws::ModelLoader L(arena, sizeof arena, opt);
  Seen s;
  if (L.open(ws::ModelEntry::File, "m.gguf", 6) != ws::Status::Ok) {
    s.status = ws::Status::UsageError;
    return s;
  }
  for (;;) {
    const ws::ModelEvent e = L.next();
    if (e.type == ws::ModelEventType::NeedRead) {
      if (e.offset >= file.size()) {
        L.end_of_file();
        continue;
      }
      size_t n = std::min<uint64_t>(e.length, file.size() - e.offset);
      if (step) n = std::min(n, step);
      L.feed(reinterpret_cast<const uint8_t*>(file.data()) + e.offset, n);
      continue;
    }
    if (e.type == ws::ModelEventType::Kv) {
      const ws::Event& k = *e.kv;
      if (k.type == ws::EventType::KvBytes && k.value_type == ws::GgufType::Array && k.elem_type == ws::GgufType::String) {
        if (k.first) s.pieces.push_back(Piece{k.kv, k.index, k.offset, 0, true, false, std::string()});
        Piece& p = s.pieces.back();
        p.bytes.append(reinterpret_cast<const char*>(k.data), k.size);
        p.last = k.last;
        p.string_bytes = L.kv_string_bytes();
      } else if (k.type == ws::EventType::KvEnd) {
        s.end_bytes.push_back(L.kv_string_bytes());
      }
      continue;
    }
    if (e.type == ws::ModelEventType::Error) {
      s.status = L.error().code;
      s.error_offset = L.error().offset;
      return s;
    }
    if (e.type == ws::ModelEventType::Done) {
      s.done = true;
      return s;
    }
  }
}

std::vector<std::string> vocab(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back(i % 7 == 3 ? std::string() : "tok" + std::to_string(i * 31));
  return v;
}

constexpr uint64_t kAll = ~uint64_t(0);

TEST(GgufArrayPreview, OnlyTheHeadAndTheLastOfALongArray) {
  Spec spec;
  const std::vector<std::string> tokens = vocab(100);
  std::vector<uint64_t> scores;
  for (uint64_t i = 1; i <= 18; ++i) scores.push_back(i);
  spec.kvs = {kv_str("general.architecture", "llama"), kv_arr_str("tokenizer.ggml.tokens", tokens),
              kv_arr_str("short", {"a", "bb", "ccc"}), kv_arr("scores", kF32, scores)};
  const Built b = build(spec);
  uint64_t total = 0;
  for (const std::string& t : tokens) total += t.size();

  const Seen all = load(b.bytes, kAll, kAll, 0);
  ASSERT_TRUE(all.done);
  ASSERT_EQ(all.pieces.size(), 100u + 3u);
  EXPECT_EQ(all.pieces[99].string_bytes, total);
  ASSERT_EQ(all.end_bytes.size(), 4u);
  EXPECT_EQ(all.end_bytes[0], 0u);  // a plain string value
  EXPECT_EQ(all.end_bytes[1], total);
  EXPECT_EQ(all.end_bytes[2], 6u);
  EXPECT_EQ(all.end_bytes[3], 0u);  // numbers

  for (size_t step : {size_t(0), size_t(1), size_t(7), size_t(64)}) {
    const Seen p = load(b.bytes, 16, 5, step);
    ASSERT_TRUE(p.done) << step;
    // tokens: elements 0..4 and 99, as loaded without the preview; "short" (3 <= 16) and the
    // numbers whole.
    ASSERT_EQ(p.pieces.size(), 6u + 3u) << step;
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(p.pieces[i], all.pieces[i]) << "element " << i << ", step " << step;
    EXPECT_EQ(p.pieces[5], all.pieces[99]) << step;
    EXPECT_EQ(p.pieces[5].string_bytes, total);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(p.pieces[6 + i], all.pieces[100 + i]) << step;
    EXPECT_EQ(p.end_bytes, all.end_bytes) << step;
  }
  // A head of 0: the last element alone.
  const Seen last = load(b.bytes, 16, 0, 3);
  ASSERT_TRUE(last.done);
  EXPECT_EQ(last.pieces[0], all.pieces[99]);
  EXPECT_EQ(last.pieces[1], all.pieces[100]);
}

TEST(GgufArrayPreview, ASkippedElementIsStillChecked) {
  Spec spec;
  spec.kvs = {kv_arr_str("tokenizer.ggml.tokens", vocab(50))};
  Built b = build(spec);
  // Element 20's length runs past the end of the file: GgufStringTooLong at its length field.
  b.patch(Field::StrLen, 0, uint64_t(1) << 40, 20);
  const Seen all = load(b.bytes, kAll, kAll, 0);
  ASSERT_EQ(all.status, ws::Status::GgufStringTooLong);
  EXPECT_EQ(all.error_offset, b.field(Field::StrLen, 0, 20).begin);
  for (size_t step : {size_t(0), size_t(1), size_t(13)}) {
    const Seen p = load(b.bytes, 16, 5, step);
    EXPECT_EQ(p.status, all.status) << step;
    EXPECT_EQ(p.error_offset, all.error_offset) << step;
  }
  // Cut inside a skipped element's bytes: the same truncation either way.
  Built c = build(spec);
  c.bytes.resize(c.field(Field::StrBytes, 0, 30).begin + 2);
  const Seen cut_all = load(c.bytes, kAll, kAll, 0);
  const Seen cut_preview = load(c.bytes, 16, 5, 1);
  EXPECT_NE(cut_all.status, ws::Status::Ok);
  EXPECT_EQ(cut_preview.status, cut_all.status);
  EXPECT_EQ(cut_preview.error_offset, cut_all.error_offset);
}

}  // namespace

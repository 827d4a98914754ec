// tests/cli — unit tests of the CLI's building blocks (linked directly, no process): JSON
// escaping, terminal-safe text, argument parsing, the fix-hint table and GGUF error details, the
// GGUF key-value collector, renderer and tensor-info copy, progress text, chunked reading; and of
// the sample generator's float conversions.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cli_args.h"
#include "connection_policy.h"
#include "error_text.h"
#include "file_source.h"
#include "gguf_builder.h"
#include "weightstream/conventions.h"
#include "gguf_infos.h"
#include "gguf_kv.h"
#include "gguf_render.h"
#include "metadata_render.h"
#include "half_float.h"
#include "json_writer.h"
#include "process.h"
#include "progress.h"
#include "text_format.h"
#include "weightstream/status.h"

namespace {

std::string json_string(const std::string& s) {
  std::string out;
  wscli::append_json_string(&out, s);
  return out;
}

TEST(JsonWriter, EscapesWhatJsonRequires) {
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string("q\"b\\s/"), "\"q\\\"b\\\\s/\"");
  EXPECT_EQ(json_string(std::string("\n\t\r\b\f\x01\x1f", 7)), "\"\\n\\t\\r\\b\\f\\u0001\\u001f\"");
  EXPECT_EQ(json_string(std::string("a\0b", 3)), "\"a\\u0000b\"");
  EXPECT_EQ(json_string("\x7f"), "\"\x7f\"");  // DEL is legal in JSON strings
}

TEST(JsonWriter, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(json_string("\xC3\xA9\xE6\xBC\xA2\xF0\x9F\x99\x82"), "\"\xC3\xA9\xE6\xBC\xA2\xF0\x9F\x99\x82\"");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(json_string("a\xFF" "b"), "\"a" + fffd + "b\"");
  EXPECT_EQ(json_string("\xC0\xAF"), "\"" + fffd + fffd + "\"");          // overlong '/'
  EXPECT_EQ(json_string("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"");  // a surrogate
  EXPECT_EQ(json_string("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");  // > U+10FFFF
  EXPECT_EQ(json_string("\xE6\xBC"), "\"" + fffd + fffd + "\"");  // cut short
}

TEST(JsonWriter, InsertsCommasAndColons) {
  wscli::JsonWriter w;
  w.begin_object();
  w.key("a").number(1);
  w.key("b").begin_array().number(2).boolean(true).null().begin_object().end_object().end_array();
  w.key("c").begin_object().key("d").string("e").end_object();
  w.key("f").number(18446744073709551615ull);
  w.end_object();
  EXPECT_EQ(w.str(), "{\"a\":1,\"b\":[2,true,null,{}],\"c\":{\"d\":\"e\"},\"f\":18446744073709551615}");
}

TEST(TextFormat, DisplayTextNeutralisesTerminalControls) {
  EXPECT_EQ(wscli::display_text("ok.name"), "ok.name");
  EXPECT_EQ(wscli::display_text("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(wscli::display_text("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(wscli::display_text("\xC2\x9B" "2J"), "\\xc2\\x9b2J");  // C1 CSI
  EXPECT_EQ(wscli::display_text("\xC2\xA0\xF0\x9F\x99\x82"), "\xC2\xA0\xF0\x9F\x99\x82");
  EXPECT_EQ(wscli::display_text("\xFF"), "\\xff");
  EXPECT_EQ(wscli::quoted("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
}

TEST(TextFormat, ShapesAndSizes) {
  EXPECT_EQ(wscli::shape_text({}), "[]");
  EXPECT_EQ(wscli::shape_text({4096, 4096}), "[4096, 4096]");
  EXPECT_EQ(wscli::human_bytes(999), "999 B");
  EXPECT_EQ(wscli::human_bytes(2365368), "2.4 MB");
  EXPECT_EQ(wscli::real_text(0.1, false), "0.1");  // shortest text that reads back the same
  EXPECT_EQ(wscli::real_text(0.12345678901234568, false), "0.12345678901234568");
  EXPECT_EQ(wscli::real_text(0.12345679104328156, true), "0.12345679");  // a float, widened
  EXPECT_EQ(wscli::real_text(1e-05f, true), "1e-05");
  EXPECT_EQ(wscli::bytes_text(1), "1 byte");
  EXPECT_EQ(wscli::bytes_text(96), "96 bytes");
  EXPECT_EQ(wscli::bytes_text(288512), "288512 bytes (288.5 kB)");
  EXPECT_EQ(wscli::pad_left("\xC3\xA9", 3), "  \xC3\xA9");  // width counts characters, not bytes
}

ws::Event kv_event(ws::EventType type) {
  ws::Event e;
  e.type = type;
  return e;
}

TEST(GgufKv, GathersScalarsStringsAndArrayHeads) {
  wscli::GgufKvCollector c;
  // A string value in two pieces.
  ws::Event b = kv_event(ws::EventType::KvBegin);
  b.key = {"general.name", 12};
  b.value_type = ws::GgufType::String;
  c.on_event(b);
  ws::Event p = kv_event(ws::EventType::KvBytes);
  p.value_type = ws::GgufType::String;
  p.data = reinterpret_cast<const uint8_t*>("tiny");
  p.size = 4;
  p.first = true;
  c.on_event(p);
  p.data = reinterpret_cast<const uint8_t*>("llama");
  p.size = 5;
  p.first = false;
  p.last = true;
  c.on_event(p);
  c.on_event(kv_event(ws::EventType::KvEnd));

  // A signed scalar.
  b.key = {"x", 1};
  b.value_type = ws::GgufType::I32;
  c.on_event(b);
  ws::Event sc = kv_event(ws::EventType::KvScalar);
  sc.value_type = ws::GgufType::I32;
  sc.i = -7;
  c.on_event(sc);
  c.on_event(kv_event(ws::EventType::KvEnd));

  // An INT16 array of 20 elements in two runs, the second starting at element 3.
  b.key = {"arr", 3};
  b.value_type = ws::GgufType::Array;
  b.elem_type = ws::GgufType::I16;
  b.count = 20;
  c.on_event(b);
  std::vector<uint8_t> le;
  for (int v = 0; v < 20; ++v) {
    const int16_t x = static_cast<int16_t>(-v);
    le.push_back(static_cast<uint8_t>(x & 0xFF));
    le.push_back(static_cast<uint8_t>((x >> 8) & 0xFF));
  }
  ws::Event a = kv_event(ws::EventType::KvBytes);
  a.value_type = ws::GgufType::Array;
  a.elem_type = ws::GgufType::I16;
  a.data = le.data();
  a.size = 6;
  a.index = 0;
  c.on_event(a);
  a.data = le.data() + 6;
  a.size = le.size() - 6;
  a.index = 3;
  c.on_event(a);
  c.on_event(kv_event(ws::EventType::KvEnd));

  const std::vector<wscli::MetadataRow> rows = c.take();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].key, "general.name");
  EXPECT_EQ(rows[0].type, "STRING");
  EXPECT_EQ(rows[0].value.text, "tinyllama");
  EXPECT_EQ(rows[1].value.kind, wscli::MetaValue::Kind::Signed);
  EXPECT_EQ(rows[1].value.i, -7);
  EXPECT_EQ(rows[2].type, "ARRAY");
  EXPECT_EQ(rows[2].value.elem_type, "INT16");
  EXPECT_EQ(rows[2].value.count, 20u);
  ASSERT_EQ(rows[2].value.head.size(), wscli::kKeptArrayElements);
  for (size_t k = 0; k < wscli::kKeptArrayElements; ++k) EXPECT_EQ(rows[2].value.head[k].i, -int64_t(k));
  ASSERT_EQ(rows[2].value.last.size(), 1u) << "the last element, from the second run";
  EXPECT_EQ(rows[2].value.last[0].i, -19);
  EXPECT_EQ(wscli::gguf_value_text(rows[2].value),
            "[int16 \xC3\x97 20] 0, -1, -2, -3, -4, -5, -6, -7, \xE2\x80\xA6");
  EXPECT_EQ(wscli::gguf_value_text(rows[0].value), "\"tinyllama\"");

  wscli::JsonWriter w;
  wscli::write_metadata_value_json(&w, rows[2].value);
  EXPECT_EQ(w.str(), "{\"type\":\"ARRAY\",\"elem_type\":\"INT16\",\"count\":20,\"head\":[0,-1,-2,-3,-4,"
                     "-5,-6,-7,-8,-9,-10,-11,-12,-13,-14,-15]}");
}

// A string array streams past element by element, in pieces, as the CLI's loader hands it out
// (ModelLoaderOptions::gguf_array_*: the first kKeptArrayElements and the last; the loader counts
// the bytes of all, ModelLoader::kv_string_bytes()); the collector keeps those and reports the count.
TEST(GgufKv, StringArraysKeepTheirEndsAndCountTheirBytes) {
  wscli::GgufKvCollector c;
  ws::Event b = kv_event(ws::EventType::KvBegin);
  b.key = {"tokenizer.ggml.tokens", 21};
  b.offset = 596;
  b.value_type = ws::GgufType::Array;
  b.elem_type = ws::GgufType::String;
  b.count = 40;
  c.on_event(b);
  uint64_t total = 0;
  for (uint64_t k = 0; k < 40; ++k) {
    const std::string token = "tok" + std::to_string(k);
    total += token.size();
    if (k >= wscli::kKeptArrayElements && k != 39) continue;  // the preview's skipped middle
    // Each element in two pieces: the first letter, then the rest.
    for (int piece = 0; piece < 2; ++piece) {
      ws::Event e = kv_event(ws::EventType::KvBytes);
      e.value_type = ws::GgufType::Array;
      e.elem_type = ws::GgufType::String;
      e.count = 40;
      e.index = k;
      e.data = reinterpret_cast<const uint8_t*>(token.data()) + (piece ? 1 : 0);
      e.size = piece ? token.size() - 1 : 1;
      e.first = piece == 0;
      e.last = piece == 1;
      c.on_event(e, total - (piece ? 0 : token.size() - 1));
    }
  }
  c.on_event(kv_event(ws::EventType::KvEnd));
  const std::vector<wscli::MetadataRow> rows = c.take();
  ASSERT_EQ(rows.size(), 1u);
  const wscli::MetaValue& v = rows[0].value;
  EXPECT_EQ(rows[0].offset, 596u);
  EXPECT_EQ(v.string_bytes, total);
  ASSERT_EQ(v.head.size(), wscli::kKeptArrayElements) << "the middle elements are not kept";
  for (size_t k = 0; k < v.head.size(); ++k) EXPECT_EQ(v.head[k].text, "tok" + std::to_string(k));
  ASSERT_EQ(v.last.size(), 1u);
  EXPECT_EQ(v.last[0].text, "tok39");
  EXPECT_EQ(v.last[0].full_size, 5u);
  EXPECT_EQ(wscli::gguf_value_text(v), "[string \xC3\x97 40]");

  wscli::JsonWriter w;
  wscli::write_gguf_kv_json(&w, rows);
  EXPECT_EQ(w.str(), "[{\"key\":\"tokenizer.ggml.tokens\",\"offset\":596,\"type\":\"ARRAY\","
                     "\"element_type\":\"STRING\",\"count\":40,\"string_bytes\":" +
                         std::to_string(total) +
                         ",\"head\":[\"tok0\",\"tok1\",\"tok2\",\"tok3\",\"tok4\"],\"last\":\"tok39\"}]");
}

wscli::MetaValue scalar(wscli::MetaValue::Kind kind) {
  wscli::MetaValue v;
  v.kind = kind;
  return v;
}

TEST(GgufRender, ScalarsExactlyStringsQuotedAndCut) {
  wscli::MetaValue u = scalar(wscli::MetaValue::Kind::Unsigned);
  u.u = 18446744073709551615ull;  // 2^64 - 1: no double holds it
  EXPECT_EQ(wscli::gguf_value_text(u), "18446744073709551615");
  u.u = 9007199254740993ull;  // 2^53 + 1
  EXPECT_EQ(wscli::gguf_value_text(u), "9007199254740993");
  wscli::MetaValue i = scalar(wscli::MetaValue::Kind::Signed);
  i.i = INT64_MIN;
  EXPECT_EQ(wscli::gguf_value_text(i), "-9223372036854775808");
  wscli::MetaValue f = scalar(wscli::MetaValue::Kind::Float);
  f.f = static_cast<double>(1e-5f);
  f.f32 = true;
  EXPECT_EQ(wscli::gguf_value_text(f), "1e-05") << "the shortest text that reads back as the float";
  f.f = 0.1;
  f.f32 = false;
  EXPECT_EQ(wscli::gguf_value_text(f), "0.1");
  f.f = 0.1 + 0.2;
  EXPECT_EQ(wscli::gguf_value_text(f), "0.30000000000000004");
  wscli::MetaValue t = scalar(wscli::MetaValue::Kind::Bool);
  t.u = 1;
  EXPECT_EQ(wscli::gguf_value_text(t), "true");

  wscli::MetaValue s;
  s.text = "say \"hi\"\n\x1b[2J";
  s.full_size = s.text.size();
  EXPECT_EQ(wscli::gguf_value_text(s), "\"say \\\"hi\\\"\\n\\x1b[2J\"");
  // Cut after 100 bytes, at a character boundary (the 100th byte is inside "é").
  s.text = std::string(99, 'a') + "\xC3\xA9" + std::string(200, 'b');
  s.full_size = 5000;  // the collector kept only part of it
  EXPECT_EQ(wscli::gguf_value_text(s),
            "\"" + std::string(99, 'a') + "\"\xE2\x80\xA6 (5000 bytes)");
  wscli::JsonWriter w;
  std::vector<wscli::MetadataRow> rows(1);
  rows[0].key = "tokenizer.chat_template";
  rows[0].type = "STRING";
  rows[0].offset = 24;
  rows[0].value = s;
  wscli::write_gguf_kv_json(&w, rows);
  EXPECT_EQ(w.str(), "[{\"key\":\"tokenizer.chat_template\",\"offset\":24,\"type\":\"STRING\","
                     "\"value\":\"" + std::string(99, 'a') + "\xC3\xA9" + std::string(200, 'b') +
                         "\",\"value_bytes\":5000}]")
      << "a string longer than the CLI keeps says how long it is";
}

// An array of `n` elements 0, 1, 2, ... of kind Signed, as the collector leaves it.
wscli::MetaValue int_array(uint64_t n) {
  wscli::MetaValue v = scalar(wscli::MetaValue::Kind::Array);
  v.elem_type = "INT32";
  v.count = n;
  for (uint64_t k = 0; k < n && k < wscli::kKeptArrayElements; ++k) {
    v.head.push_back(scalar(wscli::MetaValue::Kind::Signed));
    v.head.back().i = int64_t(k);
  }
  if (n) {
    v.last.push_back(scalar(wscli::MetaValue::Kind::Signed));
    v.last.back().i = int64_t(n - 1);
  }
  return v;
}

TEST(GgufRender, ArraysAreSummarizedByTypeAndCount) {
  EXPECT_EQ(wscli::gguf_value_text(int_array(0)), "[int32 \xC3\x97 0]");
  EXPECT_EQ(wscli::gguf_value_text(int_array(3)), "[int32 \xC3\x97 3] 0, 1, 2");
  EXPECT_EQ(wscli::gguf_value_text(int_array(8)), "[int32 \xC3\x97 8] 0, 1, 2, 3, 4, 5, 6, 7");
  EXPECT_EQ(wscli::gguf_value_text(int_array(32000)),
            "[int32 \xC3\x97 32000] 0, 1, 2, 3, 4, 5, 6, 7, \xE2\x80\xA6");

  wscli::MetaValue strings = scalar(wscli::MetaValue::Kind::Array);
  strings.elem_type = "STRING";
  for (const char* t : {"a", "", "\xC3\xBC\n"}) {
    strings.head.emplace_back();
    strings.head.back().text = t;
  }
  strings.count = 3;
  EXPECT_EQ(wscli::gguf_value_text(strings), "[string \xC3\x97 3] \"a\", \"\", \"\xC3\xBC\\n\"");
  strings.count = 128256;  // a vocabulary: its first tokens say nothing, the summary all
  EXPECT_EQ(wscli::gguf_value_text(strings), "[string \xC3\x97 128256]");

  // JSON: listed whole up to 16 elements, otherwise the first 5 and the last.
  std::vector<wscli::MetadataRow> rows(2);
  rows[0].key = "sixteen";
  rows[0].type = "ARRAY";
  rows[0].value = int_array(16);
  rows[1].key = "seventeen";
  rows[1].type = "ARRAY";
  rows[1].offset = 99;
  rows[1].value = int_array(17);
  wscli::JsonWriter w;
  wscli::write_gguf_kv_json(&w, rows);
  EXPECT_EQ(w.str(),
            "[{\"key\":\"sixteen\",\"offset\":0,\"type\":\"ARRAY\",\"element_type\":\"INT32\","
            "\"count\":16,\"values\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},"
            "{\"key\":\"seventeen\",\"offset\":99,\"type\":\"ARRAY\",\"element_type\":\"INT32\","
            "\"count\":17,\"head\":[0,1,2,3,4],\"last\":16}]");
}

// The tensor-info copy, fed a file in 3-byte pieces (each piece passed twice, as the scan may).
TEST(GgufInfoCopy, ReadsFieldsBackAndComputesExpectedOffsets) {
  clitest::GgufBuilder b;
  b.kv_string("general.architecture", "llama")
      .tensor("a", {5}, 0, 20)                   // F32: 20 bytes, next at 32
      .tensor("q", {64, 2}, 8, 2 * 2 * 34)       // Q8_0: 4 blocks of 34 bytes, at 32
      .tensor("c", {1}, 0, 4, 12345);            // wrong: expected 32 + 136 → 192
  const std::string file = b.bytes();
  wscli::GgufInfoCopy copy;
  const uint64_t infos_start = b.kv_offset(0) + 8 + 20 + 4 + 8 + 5;  // after the one key-value
  copy.start(infos_start);
  for (size_t at = 0; at < file.size(); at += 3) {
    const size_t n = std::min<size_t>(3, file.size() - at);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(file.data()) + at;
    copy.keep(p, n, at);
    copy.keep(p, n, at);
  }
  uint32_t type = 0;
  ASSERT_TRUE(copy.read_u32(b.type_field(1), &type));
  EXPECT_EQ(type, 8u);
  uint64_t found = 0, expected = 1;
  ASSERT_TRUE(copy.read_u64(b.offset_field(2), &found));
  EXPECT_EQ(found, 12345u);
  ASSERT_TRUE(copy.expected_data_offset(b.offset_field(0), 32, ws::GgmlDialect::Upstream, &expected));
  EXPECT_EQ(expected, 0u);
  ASSERT_TRUE(copy.expected_data_offset(b.offset_field(1), 32, ws::GgmlDialect::Upstream, &expected));
  EXPECT_EQ(expected, 32u);
  ASSERT_TRUE(copy.expected_data_offset(b.offset_field(2), 32, ws::GgmlDialect::Upstream, &expected));
  EXPECT_EQ(expected, 192u);
  EXPECT_FALSE(copy.read_u32(infos_start - 1, &type)) << "before the section";
  EXPECT_FALSE(copy.read_u64(file.size() - 4, &found)) << "past the end";
  EXPECT_FALSE(copy.expected_data_offset(b.offset_field(2) + 1, 32, ws::GgmlDialect::Upstream,
                                         &expected))
      << "not an offset field";
  copy.stop();
  EXPECT_FALSE(copy.read_u32(b.type_field(1), &type)) << "dropped once the header is done";
}

TEST(MetadataRender, LongStringsAreCutForPeopleOnly) {
  wscli::MetaValue v;
  v.text = std::string(300, 'a');
  v.full_size = 300;
  EXPECT_EQ(wscli::metadata_value_text(v), std::string(160, 'a') + "... (300 bytes)");
  wscli::JsonWriter w;
  wscli::write_metadata_value_json(&w, v);
  EXPECT_EQ(w.str(), "\"" + std::string(300, 'a') + "\"");
}

TEST(CliArgs, ParseSize) {
  size_t v = 0;
  EXPECT_TRUE(wscli::parse_size("1", 1 << 30, &v));
  EXPECT_EQ(v, 1u);
  EXPECT_TRUE(wscli::parse_size("64k", 1 << 30, &v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(wscli::parse_size("1M", 1 << 30, &v));
  EXPECT_EQ(v, 1048576u);
  EXPECT_TRUE(wscli::parse_size("1G", 1 << 30, &v));
  EXPECT_FALSE(wscli::parse_size("2G", 1 << 30, &v));
  for (const char* bad : {"", "0", "0k", "-1", "k", "12x", "1kk", "1.5", " 1", "99999999999999999999999"})
    EXPECT_FALSE(wscli::parse_size(bad, 1 << 30, &v)) << bad;
}

TEST(CliArgs, ParsesCommandsOptionsAndFiles) {
  wscli::CliOptions o;
  std::string err;
  const char* argv1[] = {"weightstream", "validate", "a", "--json", "--chunk-size", "7", "b", "--", "--c"};
  ASSERT_TRUE(wscli::parse_args(9, argv1, &o, &err)) << err;
  EXPECT_EQ(o.command, wscli::Command::Validate);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.scan.chunk_size, 7u);
  EXPECT_EQ(o.scan.arena_size, wscli::kDefaultArenaSize);
  EXPECT_EQ(o.files, (std::vector<std::string>{"a", "b", "--c"}));

  const char* argv2[] = {"weightstream", "inspect", "-", "--arena-size=4k", "--no-progress"};
  ASSERT_TRUE(wscli::parse_args(5, argv2, &o, &err)) << err;
  EXPECT_EQ(o.command, wscli::Command::Inspect);
  EXPECT_EQ(o.scan.arena_size, 4096u);
  EXPECT_FALSE(o.scan.progress);
  EXPECT_EQ(o.scan.chunk_size, wscli::kDefaultChunkSize);
  EXPECT_EQ(o.files, (std::vector<std::string>{"-"}));

  const char* argv3[] = {"weightstream", "inspect"};
  EXPECT_FALSE(wscli::parse_args(2, argv3, &o, &err));
  EXPECT_EQ(err, "inspect needs a file");
}

// The hints are the library's (ws::status_hint, lib/src/core/status_hint.cpp): one row per status.
TEST(ErrorText, EveryStatusHasOneRowInTheLibrarysHintTable) {
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < ws::status_hint_rows(); ++i) {
    const ws::Status s = ws::status_hint_row(i);
    EXPECT_LT(static_cast<uint32_t>(s), static_cast<uint32_t>(ws::Status::Count_)) << "row " << i;
    EXPECT_TRUE(seen.insert(static_cast<uint32_t>(s)).second) << "two rows for " << ws::status_name(s);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(ws::Status::Count_));
  for (uint32_t i = 0; i < static_cast<uint32_t>(ws::Status::Count_); ++i) {
    const ws::Status s = static_cast<ws::Status>(i);
    // Every rejection of an input comes with advice; only Ok and Aborted (the caller's own doing)
    // have nothing to add.
    if (s != ws::Status::Ok && s != ws::Status::Aborted) {
      EXPECT_STRNE(ws::status_hint(s), "") << ws::status_name(s);
    }
  }
}

// A status several conventions raise is worded for the one that raised it (issue #25: the hints
// spoke of MLX for GPTQ's and AWQ's bits too); without one, or for a convention with no wording
// of its own, the library's text.
TEST(ErrorText, ConventionStatusesAreWordedForTheirConvention) {
  const ws::Convention gptq{8}, awq{9}, ct{7}, plain{0};
  const auto hint = [](ws::Status s, ws::Convention c) { return std::string(ws::status_hint(s, c)); };
  EXPECT_NE(hint(ws::Status::ConventionBitsNotAllowed, ws::Convention::Mlx).find("MLX"), std::string::npos);
  EXPECT_NE(hint(ws::Status::ConventionBitsNotAllowed, gptq).find("GPTQ packs 2, 3, 4 or 8 bits"), std::string::npos);
  EXPECT_NE(hint(ws::Status::ConventionBitsNotAllowed, awq).find("4 bits"), std::string::npos);
  EXPECT_NE(hint(ws::Status::ConventionUnknownParams, ct).find("num_bits"), std::string::npos);
  EXPECT_NE(hint(ws::Status::ConventionUnknownParams, gptq).find("quantize_config.json"), std::string::npos);
  for (ws::Convention c : {gptq, awq, ct, plain, ws::Convention::Uqff, ws::Convention::Ollama})
    EXPECT_EQ(hint(ws::Status::ConventionBitsNotAllowed, c).find("MLX"), std::string::npos) << ws::convention_name(c);
  EXPECT_EQ(hint(ws::Status::ConventionBitsNotAllowed, plain), ws::status_hint(ws::Status::ConventionBitsNotAllowed));
  EXPECT_EQ(hint(ws::Status::ConventionBitsNotAllowed, ws::Convention{0xFF}),
            ws::status_hint(ws::Status::ConventionBitsNotAllowed));
  EXPECT_EQ(hint(ws::Status::HeaderTooLarge, gptq), ws::status_hint(ws::Status::HeaderTooLarge));
  // The message ends with the convention's words when the error names it.
  wscli::ErrorFacts f;
  f.code = ws::Status::ConventionBitsNotAllowed;
  f.convention = 8;
  EXPECT_EQ(wscli::error_message(f), std::string(ws::status_description(f.code)) + ". " + hint(f.code, gptq));
}

TEST(ErrorText, MessageCombinesDescriptionDetailsAndHint) {
  wscli::ErrorFacts f;
  f.code = ws::Status::HeaderTooLarge;
  f.declared_header = 4294967296ull;
  f.prefix = std::string("\0\0\0\0\1\0\0\0", 8);
  EXPECT_EQ(wscli::error_message(f),
            std::string(ws::status_description(ws::Status::HeaderTooLarge)) +
                " (header says 4294967296 bytes; the limit is 100000000). Is this really a "
                "safetensors file?");

  wscli::ErrorFacts a;
  a.code = ws::Status::ArenaExhausted;
  a.arena_size = 1024;
  a.arena_needed = 5000;
  EXPECT_EQ(wscli::error_message(a), std::string(ws::status_description(ws::Status::ArenaExhausted)) +
                                         " (5000 bytes needed; the arena has 1024). Rerun with "
                                         "--arena-size 5000.");

  wscli::ErrorFacts h;
  h.code = ws::Status::HeaderTooLarge;
  h.prefix = "<!DOCTYP";
  h.declared_header = 0x505954434f44213cull;
  EXPECT_EQ(wscli::error_message(h),
            std::string(ws::status_description(ws::Status::HeaderTooLarge)) +
                " (header says 5789751444030890300 bytes; the limit is 100000000). This looks like "
                "an HTML or XML page: did the download save an error page instead of the model?");

  wscli::ErrorFacts t;
  t.code = ws::Status::TrailingBytes;
  t.offset = 96;
  t.input_size = 100;
  EXPECT_NE(wscli::error_message(t).find("(the data ends at byte 96)"), std::string::npos)
      << "a stream's length is not known: no count";
  t.input_size_exact = true;
  EXPECT_NE(wscli::error_message(t).find("(4 bytes follow the end of the data at byte 96)"),
            std::string::npos);
}

TEST(ErrorText, GgufDetailsCarryTheValuesInvolved) {
  const auto msg = [](const wscli::ErrorFacts& f) {
    const std::string m = wscli::error_message(f);
    const std::string d = ws::status_description(f.code);
    EXPECT_EQ(m.compare(0, d.size(), d), 0) << m;
    return m.substr(d.size());
  };
  wscli::ErrorFacts v;
  v.code = ws::Status::GgufVersionTooNew;
  v.prefix = std::string("GGUF\x04\0\0\0", 8);
  EXPECT_EQ(msg(v), " (version 4). The file is newer than this reader: update weightstream.");

  wscli::ErrorFacts r;
  r.code = ws::Status::GgufRetiredType;
  r.ggml_type_id = 32;
  r.ggml_type_name = "Q4_0_4_8";
  EXPECT_EQ(msg(r), " (type id 32 was Q4_0_4_8). llama.cpp no longer loads this quantization type: "
                    "re-quantize from the original weights with a current llama-quantize.");
  r.ggml_type_name.clear();
  EXPECT_EQ(msg(r).substr(0, 15), " (type id 32). ");

  wscli::ErrorFacts o;
  o.code = ws::Status::GgufInvalidTensorOffset;
  o.tensor_offset_found = 100;
  o.tensor_offset_expected = 128;
  o.gguf_alignment = 64;
  EXPECT_EQ(msg(o).substr(0, 81),
            " (expected 128, found 100: the end of the tensor before it, rounded up to a multi");
  EXPECT_NE(msg(o).find("multiple of 64)."), std::string::npos);
  o.tensor_offset_found.reset();
  EXPECT_EQ(msg(o).substr(0, 2), ". ") << "no numbers, no parentheses";
}

TEST(ErrorText, ContentGuesses) {
  EXPECT_NE(wscli::content_guess("<!DOCTYP").find("HTML"), std::string::npos);
  EXPECT_NE(wscli::content_guess("version ").find("git lfs pull"), std::string::npos);
  EXPECT_NE(wscli::content_guess("PK\x03\x04").find("zip"), std::string::npos);
  EXPECT_NE(wscli::content_guess("\x80\x02}q").find("pickle"), std::string::npos);
  EXPECT_EQ(wscli::content_guess(std::string("\x40\0\0\0\0\0\0\0", 8)), "");
}

TEST(Progress, LineShowsBytesPercentAndRate) {
  EXPECT_EQ(wscli::progress_line("m.safetensors", 50000000, 100000000, 0.5),
            "m.safetensors  [############            ]   50%  50.0 MB / 100.0 MB  100.0 MB/s");
  EXPECT_EQ(wscli::progress_line("x", 100000000, 100000000, 0.0),
            "x  [########################]  100%  100.0 MB / 100.0 MB  0.0 MB/s");
}

TEST(ChunkedFile, HandsOutPiecesOfTheChunkSize) {
  clitest::TempDir dir;
  std::string data(3000000, '\0');  // spans several 1 MiB read blocks
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + (i >> 11));
  clitest::write_file(dir.file("f"), data);
  for (size_t chunk : {size_t(1), size_t(1000), size_t(65536), size_t(5000000)}) {
    wscli::ChunkedFile f;
    ASSERT_TRUE(f.open(dir.file("f")));
    ASSERT_TRUE(f.size_known());
    EXPECT_EQ(f.size(), data.size());
    std::string got;
    const uint8_t* p;
    size_t n;
    while (f.next(chunk, &p, &n) == wscli::ChunkedFile::Result::Piece) {
      ASSERT_GE(n, 1u);
      ASSERT_LE(n, chunk);
      got.append(reinterpret_cast<const char*>(p), n);
      ASSERT_EQ(f.position(), got.size());
    }
    EXPECT_TRUE(got == data) << "chunk " << chunk;
    ASSERT_TRUE(f.rewind());
    ASSERT_EQ(f.next(chunk, &p, &n), wscli::ChunkedFile::Result::Piece);
    EXPECT_EQ(p[0], static_cast<uint8_t>(data[0]));
  }
  wscli::ChunkedFile missing;
  EXPECT_FALSE(missing.open(dir.file("nope")));
  EXPECT_EQ(missing.error(), "No such file or directory");
}

TEST(SampleFloats, F16RoundsToNearestEven) {
  using samplegen::float_to_f16;
  EXPECT_EQ(float_to_f16(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_f16(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7BFF);   // largest finite
  EXPECT_EQ(float_to_f16(65520.0f), 0x7C00);   // rounds up to infinity
  EXPECT_EQ(float_to_f16(6.103515625e-05f), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_f16(5.9604645e-08f), 0x0001);    // smallest subnormal, 2^-24
  EXPECT_EQ(float_to_f16(2.98023224e-08f), 0x0000);   // 2^-25: tie, to even (zero)
  EXPECT_EQ(float_to_f16(1.0f + 1.0f / 2048.0f), 0x3C00);  // tie between 0x3C00 and 0x3C01: even
  EXPECT_EQ(float_to_f16(1.0f + 3.0f / 2048.0f), 0x3C02);  // tie between 0x3C01 and 0x3C02: even
}

TEST(SampleFloats, Bf16RoundsToNearestEven) {
  using samplegen::float_to_bf16;
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-1.0f), 0xBF80);
  EXPECT_EQ(float_to_bf16(1.0f / 3.0f), 0x3EAB);
  EXPECT_EQ(float_to_bf16(1.00390625f), 0x3F80);   // 1 + 2^-8: tie, to even
  EXPECT_EQ(float_to_bf16(1.01171875f), 0x3F82);   // 1 + 3·2^-8: tie, to even
}

}  // namespace

// The adaptive connection count (issue #31), as the JS package's parallel-ranges.mjs decides it.
TEST(ConnectionPolicy, GrowsWhileFivePercentFasterThenDropsTheLastAndSettles) {
  wscli::ConnectionPolicy p(0, 4);
  EXPECT_EQ(p.target(), 1u);
  EXPECT_FALSE(p.settled());
  p.sample(100, 1, false);  // the first sample: one more
  EXPECT_EQ(p.target(), 2u);
  p.sample(190, 1, false);  // +90 %: one more
  EXPECT_EQ(p.target(), 3u);
  p.sample(199, 1, false);  // +4.7 %: under 5 %, back to 2 for good
  EXPECT_EQ(p.target(), 2u);
  EXPECT_TRUE(p.settled());
  EXPECT_EQ(p.last_rate(), 190);  // the better count's rate is kept
  p.sample(1000, 1, false);  // settled: samples change nothing
  EXPECT_EQ(p.target(), 2u);
}

TEST(ConnectionPolicy, ExactlyFivePercentAddsAndTheCapSettles) {
  wscli::ConnectionPolicy p(0, 3);
  p.sample(100, 1, false);
  p.sample(105, 1, false);  // exactly +5 %: pays
  EXPECT_EQ(p.target(), 3u);
  EXPECT_FALSE(p.settled());
  p.sample(200, 1, false);  // faster still, but at the cap
  EXPECT_EQ(p.target(), 3u);
  EXPECT_TRUE(p.settled());
}

TEST(ConnectionPolicy, AReaderThatHardlyWaitedOrAFullBudgetSettles) {
  wscli::ConnectionPolicy a(0, 4);
  a.sample(100, 1, false);
  a.sample(300, 0.09, false);  // waited 9 % of the time: the consumer sets the pace
  EXPECT_EQ(a.target(), 2u);
  EXPECT_TRUE(a.settled());
  wscli::ConnectionPolicy b(0, 4);
  b.sample(100, 1, false);
  b.sample(300, 0.10, false);  // 10 %: not starved, grows
  EXPECT_EQ(b.target(), 3u);
  b.sample(400, 1, true);  // the budget held a block back: the last one goes
  EXPECT_EQ(b.target(), 2u);
  EXPECT_TRUE(b.settled());
}

TEST(ConnectionPolicy, ThrottleHalvesAndCaps) {
  wscli::ConnectionPolicy p(0, 4);
  p.sample(100, 1, false);
  p.sample(200, 1, false);
  p.sample(300, 1, false);
  EXPECT_EQ(p.target(), 4u);
  p.throttled(4);
  EXPECT_EQ(p.target(), 2u);
  EXPECT_EQ(p.cap(), 2u);
  EXPECT_TRUE(p.settled());
  p.throttled(1);  // never below one
  EXPECT_EQ(p.target(), 1u);
  p.throttled(0);
  EXPECT_EQ(p.target(), 1u);
  wscli::ConnectionPolicy pinned(3, 4);  // pinned: 3, settled from the start; 429 still halves
  EXPECT_EQ(pinned.target(), 3u);
  EXPECT_TRUE(pinned.settled());
  pinned.sample(1, 1, false);
  EXPECT_EQ(pinned.target(), 3u);
  pinned.throttled(3);
  EXPECT_EQ(pinned.target(), 1u);
  wscli::ConnectionPolicy near(0, 4);  // settle() keeps the count
  near.sample(100, 1, false);
  near.settle(500);
  EXPECT_EQ(near.target(), 2u);
  EXPECT_TRUE(near.settled());
  EXPECT_TRUE(wscli::ConnectionPolicy::worth_probing(1001, 1000, 0.5));
  EXPECT_FALSE(wscli::ConnectionPolicy::worth_probing(1000, 1000, 0.5));
}

TEST(ConnectionPolicy, ServerWaitFromRetryAfterAndRateLimit) {
  using wscli::server_wait_ms;
  EXPECT_EQ(server_wait_ms("", "", "", ""), -1);
  EXPECT_EQ(server_wait_ms("2", "", "", ""), 2000);
  EXPECT_EQ(server_wait_ms(" 1.5 ", "", "", ""), 1500);
  EXPECT_EQ(server_wait_ms("Wed, 21 Oct 2026 07:28:00 GMT", "", "", ""), 1000);  // a date: a second
  EXPECT_EQ(server_wait_ms("", "\"default\";r=0;t=5", "", ""), 5000);           // draft 08+
  EXPECT_EQ(server_wait_ms("", "\"default\";r=3;t=5", "", ""), -1);             // requests remain
  EXPECT_EQ(server_wait_ms("", "\"a\";r=4;t=9, \"b\";r=0;t=7", "", ""), 7000);   // any exhausted policy
  EXPECT_EQ(server_wait_ms("", "limit=10, remaining=0, reset=5", "", ""), 5000);  // an earlier draft
  EXPECT_EQ(server_wait_ms("", "limit=10, remaining=2, reset=5", "", ""), -1);
  EXPECT_EQ(server_wait_ms("", "", "0", "3"), 3000);  // RateLimit-Remaining / RateLimit-Reset
  EXPECT_EQ(server_wait_ms("", "", "1", "3"), -1);
  EXPECT_EQ(server_wait_ms("", "\"q\";r=0", "", ""), 0);  // no reset said: no wait
  EXPECT_EQ(server_wait_ms("", "xr=0;t=5", "", ""), -1);    // 'r' must be a parameter's name
}

TEST(CliArgs, ConnectionsAndInflightBudget) {
  wscli::CliOptions o;
  std::string error;
  const char* a[] = {"weightstream", "validate", "x", "--connections", "3", "--max-inflight-bytes", "4M", "--verbose"};
  ASSERT_TRUE(wscli::parse_args(8, a, &o, &error)) << error;
  EXPECT_EQ(o.scan.http.connections, 3u);
  EXPECT_EQ(o.scan.http.max_inflight, uint64_t(4) << 20);
  EXPECT_TRUE(o.scan.http.verbose);
  wscli::CliOptions d;
  const char* b[] = {"weightstream", "validate", "x", "--connections", "auto"};
  ASSERT_TRUE(wscli::parse_args(5, b, &d, &error)) << error;
  EXPECT_EQ(d.scan.http.connections, 0u);
  EXPECT_EQ(d.scan.http.max_inflight, uint64_t(16) << 20);
  for (const char* bad : {"0", "17", "two", "", "3x", "-1"}) {
    wscli::CliOptions e;
    const char* c[] = {"weightstream", "validate", "x", "--connections", bad};
    EXPECT_FALSE(wscli::parse_args(5, c, &e, &error)) << bad;
    EXPECT_EQ(error, std::string("--connections wants 'auto' or a count from 1 to 16, not '") + bad + "'");
  }
  wscli::CliOptions f;
  const char* c[] = {"weightstream", "validate", "x", "--max-inflight-bytes", "100k"};
  EXPECT_FALSE(wscli::parse_args(5, c, &f, &error));
  EXPECT_EQ(error, "--max-inflight-bytes wants a byte count from 512k to 4G, not '100k'");
}

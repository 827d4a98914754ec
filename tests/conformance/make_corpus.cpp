// ws-make-corpus OUTDIR — writes the malformed-input corpus for safetensors and its expected.json.
//
// Every case states, by construction, the status the reader must report, the absolute byte offset
// where it must report it and the tensor it must name. Offsets are computed from the bytes written
// here (e.g. `8 + header.find(...)`), never by running the library, so the corpus is an
// independent oracle. The committed copy lives in tests/corpus/safetensors/ and a CTest test
// regenerates it and compares byte for byte, so this program and the corpus never drift.
//
// Conventions (also in tests/corpus/README.md):
//   * An error is reported at the first byte, in file order, where the input becomes invalid.
//   * Number errors (JsonInvalidNumber, InvalidInteger) are reported at the number's first byte;
//     a value of the wrong JSON type at that value's first byte.
//   * Entry-level checks that need the whole entry (missing field, overflow, misaligned, size,
//     reversed offsets) are reported at the entry's closing '}'.
//   * Table-level checks (duplicate tensor names, offset gaps and overlaps) run when the header is
//     complete and are reported at the offending tensor's key (its opening quote), naming it: for
//     duplicates the second occurrence in header order; for gaps/overlaps the first tensor, in
//     data-offset order, whose begin differs from the previous tensor's end.
//   * Duplicate field / metadata key / __metadata__: at the opening quote of the second key.
//   * Input ending too early (HeaderTooSmall, TruncatedData): offset = file length; but
//     InvalidHeaderLength at 0, the length prefix that is wrong (reader.cpp: the same offset
//     whether or not the input size was declared). TrailingBytes: the first byte after the last
//     tensor.
//   * "tensor" is the tensor whose entry was being read when the error was found — from the moment
//     its key is complete until its value ends —, the offending tensor of a table check, or the
//     tensor whose data is cut off; otherwise null (root level, inside a key, inside
//     __metadata__, framing).
//   * Status Ok: "offset" is the file length (Reader::position() at End) and "expect" holds the
//     table the reader must produce (tensors in data-offset order, ties in header order).
#include <stdint.h>
#include <stdio.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& why) {
  fprintf(stderr, "ws-make-corpus: %s\n", why.c_str());
  exit(1);
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = char((v >> (8 * i)) & 0xFF);
  return s;
}

// A safetensors file: u64 LE header length, header, data.
std::string st(const std::string& header, const std::string& data = std::string()) {
  return le64(header.size()) + header + data;
}

// Deterministic, non-constant data bytes, so a reader that mixes up tensors is caught.
std::string data_bytes(uint64_t n) {
  std::string s(n, '\0');
  for (uint64_t i = 0; i < n; ++i) s[i] = char((i * 37 + 11) & 0xFF);
  return s;
}

// Absolute offset (8 + position in the header) of the k-th occurrence (1-based) of `needle`.
uint64_t at(const std::string& header, const std::string& needle, int k = 1) {
  size_t pos = std::string::npos, from = 0;
  for (int i = 0; i < k; ++i) {
    pos = header.find(needle, from);
    if (pos == std::string::npos) die("needle not found: " + needle);
    from = pos + 1;
  }
  return 8 + pos;
}

// One tensor entry `"name":{"dtype":..,"shape":[..],"data_offsets":[b,e]}`; name and shape are
// raw JSON text.
std::string E(const std::string& name, const std::string& dtype, const std::string& shape,
              uint64_t b, uint64_t e) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + shape +
         "],\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
}

// Pads a header with spaces to a multiple of 8, as the reference writer does.
std::string pad8(std::string h) {
  while (h.size() % 8) h += ' ';
  return h;
}

struct TensorSpec {
  std::string name;  // decoded UTF-8
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin, end;
};

struct Expect {
  std::vector<TensorSpec> tensors;  // data-offset order, ties in header order
  bool has_metadata = false;
  std::vector<std::pair<std::string, std::string>> metadata;  // decoded
};

struct Case {
  std::string file, bytes, status;
  uint64_t offset;
  bool has_tensor;
  std::string tensor;
  std::string description;
  bool ok;
  Expect expect;
  uint64_t header_len;
  std::string crate;  // the reference crate's verdict and the source that decides it (issue #26)
};

std::string json_escape(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"') o += "\\\"";
    else if (c == '\\') o += "\\\\";
    else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else o += char(c);
  }
  return o + "\"";
}

class Corpus {
 public:
  // An input the reader must reject.
  void bad(const std::string& file, const std::string& bytes, const char* status, uint64_t offset,
           const char* tensor, const std::string& description) {
    Case c{file + ".safetensors", bytes, status, offset, tensor != nullptr,
           tensor ? tensor : "", description, false, Expect(), 0, ""};
    push(std::move(c));
  }
  // A valid input without __metadata__: `header` plus data for the expected tensors.
  void good(const std::string& file, const std::string& header,
            const std::vector<TensorSpec>& tensors, const std::string& description) {
    Expect e;
    e.tensors = tensors;
    good_meta(file, header, e, description);
  }
  // A valid input: the header and data are built from `header` and the expected table.
  void good_meta(const std::string& file, const std::string& header, const Expect& expect,
                 const std::string& description) {
    uint64_t end = 0;
    for (const TensorSpec& t : expect.tensors) end = t.end > end ? t.end : end;
    std::string bytes = st(header, data_bytes(end));
    Case c{file + ".safetensors", bytes, "Ok", bytes.size(), false, "", description, true, expect,
           header.size(), ""};
    push(std::move(c));
  }

  // The reference crate's verdict on the case just added, with the line of its source (or of
  // serde's, which it reads through) that decides it: written as the case's "crate".
  void crate(const std::string& verdict) { cases_.back().crate = verdict; }

  void write(const std::string& dir) const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) die("cannot create " + dir);
    for (const Case& c : cases_) {
      std::string path = dir + "/" + c.file;
      FILE* f = fopen(path.c_str(), "wb");
      if (!f) die("cannot write " + path);
      if (!c.bytes.empty() && fwrite(c.bytes.data(), 1, c.bytes.size(), f) != c.bytes.size())
        die("short write " + path);
      fclose(f);
    }
    std::string j = "{\"cases\":[\n";
    for (size_t i = 0; i < cases_.size(); ++i) {
      const Case& c = cases_[i];
      j += " {\"file\":" + json_escape(c.file) + ",\"status\":" + json_escape(c.status) +
           ",\"offset\":" + std::to_string(c.offset) +
           ",\"tensor\":" + (c.has_tensor ? json_escape(c.tensor) : std::string("null")) +
           ",\"description\":" + json_escape(c.description);
      if (!c.crate.empty()) j += ",\"crate\":" + json_escape(c.crate);
      if (c.ok) j += ",\"expect\":" + expect_json(c);
      j += i + 1 < cases_.size() ? "},\n" : "}\n";
    }
    j += "]}\n";
    std::string path = dir + "/expected.json";
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(j.data(), 1, j.size(), f) != j.size()) die("cannot write " + path);
    fclose(f);
    printf("ws-make-corpus: %zu cases written to %s\n", cases_.size(), dir.c_str());
  }

 private:
  void push(Case c) {
    if (!names_.insert(c.file).second) die("duplicate case file " + c.file);
    cases_.push_back(std::move(c));
  }
  // Same schema as the real files' <file>.expect.json, so one comparison serves both.
  static std::string expect_json(const Case& c) {
    const Expect& e = c.expect;
    std::string j = "{\"header_len\":" + std::to_string(c.header_len) +
                    ",\"data_start\":" + std::to_string(8 + c.header_len) +
                    ",\"n_tensors\":" + std::to_string(e.tensors.size()) + ",\"metadata\":";
    if (!e.has_metadata) {
      j += "null";
    } else {
      j += "{";
      for (size_t i = 0; i < e.metadata.size(); ++i)
        j += (i ? "," : "") + json_escape(e.metadata[i].first) + ":" +
             json_escape(e.metadata[i].second);
      j += "}";
    }
    j += ",\"tensors\":[";
    for (size_t i = 0; i < e.tensors.size(); ++i) {
      const TensorSpec& t = e.tensors[i];
      j += std::string(i ? "," : "") + "{\"name\":" + json_escape(t.name) +
           ",\"dtype\":" + json_escape(t.dtype) + ",\"shape\":[";
      for (size_t k = 0; k < t.shape.size(); ++k)
        j += (k ? "," : "") + std::to_string(t.shape[k]);
      j += "],\"data_offsets\":[" + std::to_string(t.begin) + "," + std::to_string(t.end) + "]}";
    }
    return j + "]}";
  }

  std::vector<Case> cases_;
  std::set<std::string> names_;
};

const uint64_t kU64Max = 18446744073709551615ull;

// ---------------------------------------------------------------------------------------------
// FORMATS.md §1 checks 1–3: framing.
void framing(Corpus& c) {
  c.bad("framing_empty_file", "", "HeaderTooSmall", 0, nullptr,
        "check 1: empty input; reported at finish, offset = file length 0");
  c.bad("framing_1_byte", std::string("\x02", 1), "HeaderTooSmall", 1, nullptr,
        "check 1: 1-byte input, offset = file length");
  c.bad("framing_7_bytes", std::string("\x02\0\0\0\0\0\0", 7), "HeaderTooSmall", 7, nullptr,
        "check 1: 7-byte input (one short of the length prefix), offset = file length");
  c.bad("framing_header_cap_plus_1", le64(100000001) + "{}", "HeaderTooLarge", 0, nullptr,
        "check 2: n = 100,000,001 > cap; at the length prefix (0), before the file-length check");
  c.bad("framing_header_u64_max", le64(kU64Max) + "{}", "HeaderTooLarge", 0, nullptr,
        "check 2: n = 2^64-1 (8+n would overflow); the cap check comes first");
  c.bad("framing_header_exactly_cap", le64(100000000) + "{}", "InvalidHeaderLength", 0, nullptr,
        "check 2/3: n = 100,000,000 passes the cap; the 10-byte file then ends inside the header "
        "(reported at the length prefix)");
  c.bad("framing_header_past_end_empty", le64(2), "InvalidHeaderLength", 0, nullptr,
        "check 3: n = 2 but the file is only the 8-byte prefix");
  {
    std::string full = "{" + E("a", "U8", "1", 0, 1) + "," + E("b", "U8", "1", 1, 2) + "}";
    std::string cut = "{" + E("a", "U8", "1", 0, 1) + ",";
    c.bad("framing_header_past_end_mid_json", le64(full.size()) + cut, "InvalidHeaderLength", 0,
          nullptr,
          "check 3: the file ends after a valid prefix of the declared header (outside any "
          "entry): the length prefix is what is wrong");
  }
  {
    std::string h = "{}";
    c.bad("framing_header_past_end_complete_json", le64(64) + h, "InvalidHeaderLength", 0,
          nullptr,
          "check 3: the JSON `{}` is complete but n = 64 runs past the 10-byte file");
  }
}

// Check 4: UTF-8. Bad bytes inside a tensor name (no tensor named: the key is incomplete).
void utf8(Corpus& c) {
  struct U {
    const char* file;
    std::string bad;  // inserted between "a" and "b" in the name
    int error_index;  // index in `bad` of the first byte that makes the input invalid
    const char* why;
  };
  const U cases[] = {
      {"utf8_overlong_2byte", "\xC0\xAF", 0, "C0 is never a valid lead byte (overlong '/')"},
      {"utf8_overlong_3byte", "\xE0\x80\xAF", 1,
       "after E0 the next byte must be A0..BF (overlong 3-byte form)"},
      {"utf8_overlong_4byte", "\xF0\x8F\xBF\xBF", 1,
       "after F0 the next byte must be 90..BF (overlong 4-byte form)"},
      {"utf8_surrogate_encoded", "\xED\xA0\x80", 1,
       "after ED the next byte must be 80..9F (UTF-8-encoded surrogate U+D800)"},
      {"utf8_above_10ffff", "\xF4\x90\x80\x80", 1,
       "after F4 the next byte must be 80..8F (U+110000 is above U+10FFFF)"},
      {"utf8_lead_f5", "\xF5\x80\x80\x80", 0, "F5 is never a valid lead byte"},
      {"utf8_truncated_sequence", "\xE2\x82", 2,
       "E2 82 needs one more continuation byte; the next byte (the closing quote) is invalid"},
      {"utf8_bare_continuation", "\x80", 0, "a continuation byte without a lead byte"},
      {"utf8_byte_ff", "\xFF", 0, "FF never occurs in UTF-8"},
  };
  for (const U& u : cases) {
    std::string name = "a" + u.bad;
    // The truncated case ends the name right after the bad bytes so the quote is the culprit.
    if (u.error_index < int(u.bad.size())) name += "b";
    std::string h = "{" + E(name, "U8", "1", 0, 1) + "}";
    uint64_t off = at(h, "\"a") + 2 + u.error_index;
    c.bad(u.file, st(h, data_bytes(1)), "InvalidUtf8", off, nullptr,
          std::string("check 4 (name): ") + u.why);
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":\"v\xC3(\"}," + E("t", "U8", "1", 0, 1) + "}";
    c.bad("utf8_in_metadata_value", st(h, data_bytes(1)), "InvalidUtf8", at(h, "\xC3") + 1,
          nullptr, "check 4: C3 followed by '(' inside a __metadata__ value");
  }
  {
    std::string h = "{\"t\":{\"dtype\":\"U8\",\"x\":\"\xC1\x81\",\"shape\":[1],"
                    "\"data_offsets\":[0,1]}}";
    c.bad("utf8_in_unknown_field", st(h, data_bytes(1)), "InvalidUtf8", at(h, "\xC1"), "t",
          "check 4: the reference validates UTF-8 of the whole header, so a bad byte in an "
          "ignored field's string is rejected too (C1 is never valid); inside entry t");
  }
  {
    // U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF: every boundary.
    std::string name = "\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF"
                       "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF";
    std::string h = pad8("{" + E(name, "U8", "2", 0, 2) + "}");
    c.good("ok_utf8_boundaries", h, {{name, "U8", {2}, 0, 2}},
           "valid: a name made of the UTF-8 boundary code points U+0080..U+10FFFF");
  }
}

// Check 5: JSON structure and the root.
void json_structure(Corpus& c) {
  c.bad("json_bom", st("\xEF\xBB\xBF{}"), "JsonSyntax", 8, nullptr,
        "a UTF-8 BOM before the object: EF cannot start a JSON value (the lexer rejects it "
        "before the schema sees a value), so JsonSyntax at 8");
  c.bad("json_nul_padding", st(std::string("{}\0\0\0\0\0\0", 8)), "JsonTrailingCharacters", 10,
        nullptr, "header padded with NUL instead of spaces: the first NUL after the object");
  {
    std::string h = "{" + E("a", "U8", "1", 0, 1) + "} x  ";
    c.bad("json_trailing_garbage", st(h, data_bytes(1)), "JsonTrailingCharacters", at(h, "x"),
          nullptr, "a non-whitespace byte after the object inside the header");
  }
  c.bad("json_two_objects", st("{}{}    "), "JsonTrailingCharacters", 10, nullptr,
        "a second object after the first");
  c.bad("json_root_array", st("[]      "), "HeaderNotObject", 8, nullptr,
        "root is an array: at its '['");
  c.bad("json_root_string", st(" \"abc\"  "), "HeaderNotObject", 9, nullptr,
        "root is a string: at its opening quote (after one space)");
  c.bad("json_root_null", st("null    "), "HeaderNotObject", 8, nullptr,
        "root is the literal null: at its first byte");
  c.bad("json_root_number", st("42      "), "HeaderNotObject", 8, nullptr,
        "root is a number: at its first byte");
  c.bad("json_root_garbage", st("x}      "), "JsonSyntax", 8, nullptr,
        "root starts with a byte that starts no JSON value");
  c.bad("json_empty_header", st(""), "JsonUnexpectedEnd", 8, nullptr,
        "n = 0: the header ends before any value; offset 8 + n");
  c.bad("json_whitespace_header", st(" \t\r\n"), "JsonUnexpectedEnd", 12, nullptr,
        "header of whitespace only; offset 8 + n");
  c.bad("json_open_brace_only", st("{"), "JsonUnexpectedEnd", 9, nullptr,
        "header `{`; offset 8 + n");
  {
    std::string h = "{" + E("a", "U8", "1", 0, 1) + ",";
    c.bad("json_ends_after_comma", st(h, data_bytes(1)), "JsonUnexpectedEnd", 8 + h.size(),
          nullptr,
          "the header region (n bytes) ends after a comma at root level; data bytes follow "
          "but are not JSON; offset 8 + n");
  }
  {
    std::string h = "{\"ab";
    c.bad("json_ends_in_key", st(h, "xxxx"), "JsonUnexpectedEnd", 8 + h.size(), nullptr,
          "the header ends inside a key; offset 8 + n");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1]";
    c.bad("json_ends_in_entry", st(h, "xxxx"), "JsonUnexpectedEnd", 8 + h.size(), "a",
          "the header ends inside entry a (its key is complete, so a is named); offset 8 + n");
  }
  {
    std::string h = "{" + E("a", "U8", "1", 0, 1) + ",}";
    c.bad("json_trailing_comma_object", st(h, data_bytes(1)), "JsonSyntax", at(h, ",}") + 1,
          nullptr, "trailing comma in the root object: at the '}' where a key was expected");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,],\"data_offsets\":[0,1]}}";
    c.bad("json_trailing_comma_array", st(h, data_bytes(1)), "JsonSyntax", at(h, ",]") + 1, "a",
          "trailing comma in shape: at the ']' where a value was expected (inside entry a)");
  }
  {
    std::string h = "{\"a\" {\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    c.bad("json_missing_colon", st(h, data_bytes(1)), "JsonSyntax", at(h, " {") + 1, "a",
          "missing ':' after the root key: at the '{' (whitespace is fine); the key a is "
          "complete, so a is named");
  }
  {
    std::string h = "{" + E("a", "U8", "1", 0, 1) + " " + E("b", "U8", "1", 1, 2) + "}";
    c.bad("json_missing_comma", st(h, data_bytes(2)), "JsonSyntax", at(h, "\"b\""), nullptr,
          "missing ',' between two entries: at the next key's quote");
  }
  c.bad("json_single_quotes", st("{'a':{}}"), "JsonSyntax", 9, nullptr,
        "single-quoted key: at the quote");
  {
    std::string h = "{\"__metadata__\":nuLL}";
    c.bad("json_bad_literal", st(h), "JsonSyntax", at(h, "nuLL") + 2, nullptr,
          "misspelled literal `nuLL`: at the first byte that departs from `null`");
  }
  {
    std::string h = " \t\n\r{" + E("a", "U8", "3", 0, 3) + "}\r\n\t ";
    c.good("ok_whitespace_around", h, {{"a", "U8", {3}, 0, 3}},
           "valid: space, tab, LF, CR before and after the object");
  }
  c.good("ok_empty_object", "{}      ", {},
         "valid: no tensors, no metadata, padded like the reference writer");
  {
    std::string h = "{" + E("b", "U8", "2", 2, 4) + "," + E("a", "U8", "2", 0, 2) + "}";
    c.good("ok_unpadded_unsorted", h, {{"a", "U8", {2}, 0, 2}, {"b", "U8", {2}, 2, 4}},
           "valid: header not padded and keys not in data order (like the MLX writer); the "
           "table comes out in data-offset order");
  }
}

// Which error comes first: a string of the wrong type is wrong from its opening quote on, so
// that is where the input becomes invalid — before any bad byte inside the string. (Found by
// chunking_fuzz_test: a reader that checks a whole string's bytes before its type reports the
// later error when the string arrives in one piece, and the earlier one when it is split.)
void error_order(Corpus& c) {
  {
    std::string h = "{\"a\":\"U\xEE\"}";
    c.bad("order_entry_string_bad_utf8", st(h), "TensorEntryNotObject", at(h, "\"U"), "a",
          "entry a is a string (wrong from its quote on) that also holds invalid UTF-8 "
          "(EE then '\"'): the type error comes first");
  }
  {
    std::string h = " \"ab\x01\"  ";
    c.bad("order_root_string_control_char", st(h), "HeaderNotObject", 9, nullptr,
          "root is a string that also holds a raw 0x01: the type error at its quote comes first");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":\"4\xFF\",\"data_offsets\":[0,4]}}";
    c.bad("order_shape_string_bad_utf8", st(h, data_bytes(4)), "InvalidShape", at(h, "\"4"), "a",
          "shape is a string that also holds FF: the type error at its quote comes first");
  }
  {
    std::string h = "{\"__metadata__\":\"x\\q\"}";
    c.bad("order_metadata_string_bad_escape", st(h), "MetadataNotObject", at(h, "\"x"), nullptr,
          "__metadata__ is a string that also holds the bad escape \\q: the type error at its "
          "quote comes first");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":[\"v\xC0\"]}}";
    c.bad("order_metadata_value_array_bad_utf8", st(h), "MetadataValueNotString", at(h, "[\""),
          nullptr, "a metadata value that is an array holding C0: the type error at its '[' "
                   "comes first");
  }
}

// Check 5: the tensor entry schema.
void entry_schema(Corpus& c) {
  {
    std::string h = "{\"a\":[\"U8\",[4],[0,4]]}";
    c.bad("entry_array", st(h, data_bytes(4)), "TensorEntryNotObject", at(h, "["), "a",
          "Policy: an entry written as a JSON array (serde accepts it) is rejected at its '['");
  }
  {
    std::string h = "{\"a\":\"U8\"}";
    c.bad("entry_string", st(h), "TensorEntryNotObject", at(h, "\"U8"), "a",
          "an entry that is a string: at its opening quote");
  }
  {
    std::string h = "{\"a\":{\"shape\":[4],\"data_offsets\":[0,4]}}";
    c.bad("entry_missing_dtype", st(h, data_bytes(4)), "MissingDtype", at(h, "]}") + 1, "a",
          "no dtype: at the entry's closing '}'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,4]}}";
    c.bad("entry_missing_shape", st(h, data_bytes(4)), "MissingShape", at(h, "]}") + 1, "a",
          "no shape: at the entry's closing '}'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4]}}";
    c.bad("entry_missing_data_offsets", st(h, data_bytes(4)), "MissingDataOffsets",
          at(h, "]}") + 1, "a", "no data_offsets: at the entry's closing '}'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"F32\",\"shape\":[0]}}";
    c.bad("entry_missing_data_offsets_zero_size", st(h), "MissingDataOffsets", at(h, "]}") + 1,
          "a", "data_offsets is required even for a zero-size tensor");
  }
  {
    std::string h = "{\"a\":{}}";
    c.bad("entry_empty_object", st(h), "MissingDtype", at(h, "}"), "a",
          "an empty entry: all three fields missing; dtype is reported first (declaration "
          "order dtype, shape, data_offsets), at the entry's '}'");
  }
  {
    std::string h =
        "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"dtype\":\"U8\",\"data_offsets\":[0,4]}}";
    c.bad("entry_duplicate_dtype", st(h, data_bytes(4)), "DuplicateField", at(h, "\"dtype\"", 2),
          "a", "dtype twice in one entry (same value): at the second key's quote");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4],"
                    "\"data_offsets\":[0,4]}}";
    c.bad("entry_duplicate_data_offsets", st(h, data_bytes(4)), "DuplicateField",
          at(h, "\"data_offsets\"", 2), "a", "data_offsets twice: at the second key's quote");
  }
  {
    std::string h =
        "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"d\\u0074ype\":\"U8\",\"data_offsets\":[0,4]}}";
    c.bad("entry_duplicate_escaped_field", st(h, data_bytes(4)), "DuplicateField",
          at(h, "\"d\\u0074ype\""), "a",
          "\"d\\u0074ype\" decodes to dtype, so it is a duplicate field: at its quote");
  }
  {
    std::string h = "{\"a\":{\"x\":null,\"dtype\":\"U8\",\"y\":[1,{\"z\":\"w\",\"q\":[]}],"
                    "\"shape\":[4],\"b\":true,\"f\":-1.5e3,\"s\":\"\\u00e9\\n\",\"o\":{},"
                    "\"data_offsets\":[0,4],\"dtype_\":false}}";
    c.good("ok_unknown_fields", pad8(h), {{"a", "U8", {4}, 0, 4}},
           "valid: unknown fields of every JSON type (null, array, object, bool, number, string "
           "with escapes) are accepted and ignored");
  }
  {
    // Field names around the lengths of the real ones: prefixes, extensions, a 16-byte name.
    std::string h = "{\"a\":{\"data_offsets_extra\":[9,9],\"dtyp\":1,\"dtypee\":2,"
                    "\"shapes\":[[1]],\"data_offset\":[],\"0123456789abcdef\":{},"
                    "\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4],"
                    "\"data_offsetsdata_offsets\":null}}";
    c.good("ok_unknown_fields_near_names", pad8(h), {{"a", "U8", {4}, 0, 4}},
           "valid: unknown fields that are prefixes or extensions of dtype/shape/data_offsets, and "
           "one of exactly 16 bytes, are ignored");
  }
  {
    std::string h = " { \"b\" :\t{ \"data_offsets\" : [ 4 , 6 ] , \"dtype\"\n:\r\"U8\" ,"
                    " \"shape\" : [ 2 ] } ,\n\"a\": {\"shape\":[ ],\"dtype\":\"F32\","
                    "\"data_offsets\":[0,4] } } ";
    c.good("ok_whitespace_everywhere", h, {{"a", "F32", {}, 0, 4}, {"b", "U8", {2}, 4, 6}},
           "valid: whitespace between every token of the entries, fields in any order");
  }
  {
    std::string h = "{\"__metadata__\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    c.bad("entry_named_metadata", st(h, data_bytes(1)), "MetadataValueNotString", at(h, "[1]"),
          nullptr, "a 'tensor' named __metadata__ is the metadata object: its shape value [1] is "
                   "not a string");
  }
  {
    std::string h = "{\"a\":{\"\\u0064type\":\"U8\",\"sh\\u0061pe\":[4],"
                    "\"data_\\u006fffsets\":[0,4]}}";
    c.good("ok_escaped_field_names", pad8(h), {{"a", "U8", {4}, 0, 4}},
           "valid: field names spelled with \\u escapes are the same fields (\\u006f is 'o')");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0]}}";
    c.bad("offsets_one_element", st(h, data_bytes(4)), "InvalidDataOffsets", at(h, "0]") + 1, "a",
          "data_offsets with 1 element: at its ']'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4,4]}}";
    c.bad("offsets_three_elements", st(h, data_bytes(4)), "InvalidDataOffsets",
          at(h, "4,4]") + 2, "a", "data_offsets with 3 elements: at the third element");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[]}}";
    c.bad("offsets_empty", st(h), "InvalidDataOffsets", at(h, "[]") + 1, "a",
          "data_offsets []: at its ']'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":4}}";
    c.bad("offsets_not_array", st(h, data_bytes(4)), "InvalidDataOffsets", at(h, ":4") + 1, "a",
          "data_offsets is a number: at its first byte");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":{},\"data_offsets\":[0,0]}}";
    c.bad("shape_object", st(h), "InvalidShape", at(h, "{}"), "a", "shape is an object: at '{'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":\"4\",\"data_offsets\":[0,4]}}";
    c.bad("shape_string", st(h, data_bytes(4)), "InvalidShape", at(h, "\"4\""), "a",
          "shape is a string: at its opening quote");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":null,\"data_offsets\":[0,1]}}";
    c.bad("shape_null", st(h, data_bytes(1)), "InvalidShape", at(h, "null"), "a",
          "shape is null: at its first byte");
  }
}

// Check 5: numbers in shape / data_offsets.
void numbers(Corpus& c) {
  struct N {
    const char* file;
    const char* status;
    const char* shape;    // raw JSON shape text, contains the bad number
    const char* offsets;  // raw JSON data_offsets text
    const char* needle;   // the bad value's first bytes (unique in the header)
    const char* why;
  };
  const N cases[] = {
      {"number_minus_zero", "InvalidInteger", "[-0]", "[0,0]", "-0",
       "-0 is valid JSON but not a plain non-negative integer"},
      {"number_negative", "InvalidInteger", "[-1]", "[0,0]", "-1", "negative dimension"},
      {"number_fraction", "InvalidInteger", "[4]", "[0,4.0]", "4.0", "4.0 in data_offsets"},
      {"number_zero_fraction", "InvalidInteger", "[0.0]", "[0,0]", "0.0", "0.0 in shape"},
      {"number_exponent", "InvalidInteger", "[1e1]", "[0,10]", "1e1", "1e1 (= 10) in shape"},
      {"number_quoted", "InvalidInteger", "[\"4\"]", "[0,4]", "\"4\"",
       "a quoted number in shape: at its quote"},
      {"number_quoted_offset", "InvalidInteger", "[4]", "[\"0\",4]", "\"0\"",
       "a quoted number in data_offsets"},
      {"number_2pow64", "InvalidInteger", "[4]", "[0,18446744073709551616]", "184467",
       "2^64 does not fit in u64"},
      {"number_30_digits", "InvalidInteger", "[100000000000000000000000000000]", "[0,0]", "1000",
       "a 30-digit dimension"},
      {"number_null_element", "InvalidInteger", "[null]", "[0,0]", "null",
       "null as a dimension: at its first byte"},
      {"number_nested_array", "InvalidInteger", "[[2]]", "[0,2]", "[2]",
       "an array as a dimension: at the inner '['"},
      {"number_leading_zero", "JsonInvalidNumber", "[01]", "[0,1]", "01",
       "01: a leading zero is a JSON grammar error; reported at the number's first byte"},
      {"number_minus_alone", "JsonInvalidNumber", "[-]", "[0,0]", "-]",
       "'-' without digits: at the number's first byte"},
      {"number_dot_no_digit", "JsonInvalidNumber", "[1.]", "[0,1]", "1.]",
       "'1.' without fraction digits: at the number's first byte"},
      {"number_exp_no_digit", "JsonInvalidNumber", "[1e]", "[0,1]", "1e]",
       "'1e' without exponent digits: at the number's first byte"},
      {"number_plus", "JsonSyntax", "[+1]", "[0,1]", "+1",
       "'+' cannot start a JSON value: at the '+'"},
  };
  for (const N& n : cases) {
    std::string h = std::string("{\"a\":{\"dtype\":\"U8\",\"shape\":") + n.shape +
                    ",\"data_offsets\":" + n.offsets + "}}";
    c.bad(n.file, st(h, data_bytes(4)), n.status, at(h, n.needle), "a", n.why);
  }
}

// Check 5: dtype strings.
void dtypes(Corpus& c) {
  struct D {
    const char* file;
    const char* dtype_json;  // raw JSON value of "dtype"
    const char* why;
  };
  const D cases[] = {
      {"dtype_lowercase", "\"f32\"", "dtypes are case-sensitive"},
      {"dtype_alias_e4m3fn", "\"F8_E4M3FN\"", "F8_E4M3FN is not a safetensors dtype"},
      {"dtype_empty", "\"\"", "empty dtype"},
      {"dtype_trailing_space", "\"F32 \"", "trailing space"},
      {"dtype_number", "32", "a number is not a dtype: at its first byte"},
      {"dtype_too_long", "\"F32F32F32F32F32F32F32F32F32F32F32F32\"",
       "a dtype string longer than any dtype name"},
  };
  for (const D& d : cases) {
    std::string h = std::string("{\"a\":{\"dtype\":") + d.dtype_json +
                    ",\"shape\":[1],\"data_offsets\":[0,4]}}";
    c.bad(d.file, st(h, data_bytes(4)), "InvalidDtype", at(h, d.dtype_json), "a",
          std::string(d.why) + "; at the dtype value's first byte");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"\\u0046\\u0033\\u0032\",\"shape\":[1],"
                    "\"data_offsets\":[0,4]}}";
    c.good("ok_dtype_escaped", pad8(h), {{"a", "F32", {1}, 0, 4}},
           "valid: dtype \"\\u0046\\u0033\\u0032\" decodes to F32");
  }
  {
    // One tensor per dtype, laid out back to back.
    struct B {
      const char* name;
      uint32_t bits;
    };
    const B all[] = {{"BOOL", 8},     {"F4", 4},          {"F6_E2M3", 6},     {"F6_E3M2", 6},
                     {"U8", 8},       {"I8", 8},          {"F8_E5M2", 8},     {"F8_E4M3", 8},
                     {"F8_E8M0", 8},  {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},
                     {"U16", 16},     {"F16", 16},        {"BF16", 16},       {"I32", 32},
                     {"U32", 32},     {"F32", 32},        {"C64", 64},        {"F64", 64},
                     {"I64", 64},     {"U64", 64}};
    Expect e;
    std::string h = "{";
    uint64_t off = 0;
    for (const B& b : all) {
      uint64_t count = 8;  // 8 elements: a whole number of bytes for every dtype
      uint64_t bytes = count * b.bits / 8;
      std::string name = std::string("t_") + b.name;
      if (h.size() > 1) h += ",";
      h += E(name, b.name, "2,4", off, off + bytes);
      e.tensors.push_back({name, b.name, {2, 4}, off, off + bytes});
      off += bytes;
    }
    h += "}";
    c.good("ok_all_dtypes", pad8(h), e.tensors, "valid: one [2,4] tensor of each of the 22 dtypes");
  }
}

// Checks 6–9: offsets, overflow, sub-byte alignment, sizes.
void table_checks(Corpus& c) {
  {
    std::string h = "{" + E("a", "U8", "4", 0, 4) + "," + E("b", "U8", "0", 4, 0) + "}";
    c.bad("offsets_reversed", st(h, data_bytes(4)), "DataOffsetsReversed", at(h, "]}", 2) + 1, "b",
          "b's data_offsets [4,0]: end before begin; at b's closing '}'");
  }
  {
    std::string h = "{" + E("a", "U8", "4", 0, 4) + "," + E("b", "U8", "4", 8, 12) + "}";
    c.bad("offsets_gap", st(h, data_bytes(12)), "DataOffsetGap", at(h, "\"b\""), "b",
          "hole [4,8) between a and b: at b's key");
  }
  {
    std::string h = "{" + E("a", "U8", "4", 4, 8) + "}";
    c.bad("offsets_gap_at_start", st(h, data_bytes(8)), "DataOffsetGap", at(h, "\"a\""), "a",
          "the first tensor does not start at 0");
  }
  {
    std::string h = "{" + E("b", "U8", "4", 8, 12) + "," + E("a", "U8", "4", 0, 4) + "}";
    c.bad("offsets_gap_header_order", st(h, data_bytes(12)), "DataOffsetGap", at(h, "\"b\""), "b",
          "hole [4,8): b is listed first in the header but is the first tensor in data order "
          "after the hole");
  }
  {
    std::string h = "{" + E("a", "F32", "2", 0, 8) + "," + E("b", "U8", "4", 4, 8) + "}";
    c.bad("offsets_overlap", st(h, data_bytes(8)), "DataOffsetOverlap", at(h, "\"b\""), "b",
          "b [4,8) overlaps a [0,8): at b's key");
  }
  {
    std::string h = "{" + E("a", "F32", "2", 0, 8) + "," + E("z", "U8", "0", 4, 4) + "}";
    c.bad("offsets_zero_size_inside", st(h, data_bytes(8)), "DataOffsetOverlap", at(h, "\"z\""),
          "z", "zero-size z at 4 lies inside a [0,8)");
  }
  {
    std::string h = "{" + E("a", "U8", "4", 0, 4) + "," + E("z", "U8", "0", 8, 8) + "}";
    c.bad("offsets_zero_size_past_end", st(h, data_bytes(4)), "DataOffsetGap", at(h, "\"z\""),
          "z", "zero-size z at 8 leaves a hole after a [0,4)");
  }
  {
    std::string h = "{" + E("a", "U8", "0", 0, 0) + "," + E("b", "U8", "0,7", 0, 0) + "," +
                    E("c", "F32", "1", 0, 4) + "," + E("d", "BOOL", "0", 4, 4) + "," +
                    E("e", "U8", "2", 4, 6) + "}";
    c.good("ok_zero_size_shared", pad8(h),
           {{"a", "U8", {0}, 0, 0},
             {"b", "U8", {0, 7}, 0, 0},
             {"c", "F32", {1}, 0, 4},
             {"d", "BOOL", {0}, 4, 4},
             {"e", "U8", {2}, 4, 6}},
           "valid: zero-size tensors share offsets with each other and their neighbours (a and "
           "b tie at [0,0]: header order)");
  }
  {
    std::string h = "{" + E("s32", "F32", "", 0, 4) + "," + E("s64", "I64", "", 4, 12) + "," +
                    E("sb", "BOOL", "", 12, 13) + "}";
    c.good("ok_zero_rank", pad8(h),
           {{"s32", "F32", {}, 0, 4}, {"s64", "I64", {}, 4, 12}, {"sb", "BOOL", {}, 12, 13}},
           "valid: 0-rank tensors hold one element");
  }
  {
    std::string h = "{" + E("", "U8", "2", 0, 2) + "}";
    c.good("ok_empty_name", pad8(h), {{"", "U8", {2}, 0, 2}}, "valid: the empty name \"\"");
  }
  // Overflow (check 7), policy: order-independent, any zero dimension means zero elements.
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],"
                    "\"data_offsets\":[0,0]}}";
    c.bad("overflow_2pow32_squared", st(h), "ShapeOverflow", at(h, "]}") + 1, "a",
          "2^32 * 2^32 elements overflow u64: at the entry's '}'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2305843009213693952],"
                    "\"data_offsets\":[0,2305843009213693952]}}";
    c.bad("overflow_bits_u8_2pow61", st(h), "ShapeOverflow", at(h, "]}") + 1, "a",
          "2^61 U8 elements: the count fits but count * 8 bits = 2^64 overflows (the reference "
          "checks the bit count, rows 7-8): at the entry's '}'");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],"
                    "\"data_offsets\":[0,0]}}";
    c.bad("overflow_bits_f32_2pow62", st(h), "ShapeOverflow", at(h, "]}") + 1, "a",
          "2^62 F32 elements: count * 32 bits overflows");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2305843009213693951],"
                    "\"data_offsets\":[0,2305843009213693951]}}";
    c.bad("overflow_none_truncated", st(h), "TruncatedData", 8 + h.size(), "a",
          "2^61-1 U8 elements is the largest U8 count whose bit count fits: the header is "
          "valid; the file then ends before a's data");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[0,18446744073709551615,"
                    "18446744073709551615],\"data_offsets\":[0,0]},"
                    "\"b\":{\"dtype\":\"F4\",\"shape\":[0,18446744073709551615],"
                    "\"data_offsets\":[0,0]}}";
    c.good("ok_overflow_zero_first", pad8(h),
           {{"a", "U8", {0, kU64Max, kU64Max}, 0, 0}, {"b", "F4", {0, kU64Max}, 0, 0}},
           "valid: [0, 2^64-1, 2^64-1] has zero elements (the reference accepts it too)");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[18446744073709551615,"
                    "18446744073709551615,0],\"data_offsets\":[0,0]},"
                    "\"b\":{\"dtype\":\"I64\",\"shape\":[9223372036854775808,"
                    "9223372036854775808,0],\"data_offsets\":[0,0]}}";
    c.good("ok_overflow_zero_last", pad8(h),
           {{"a", "U8", {kU64Max, kU64Max, 0}, 0, 0},
             {"b", "I64", {9223372036854775808ull, 9223372036854775808ull, 0}, 0, 0}},
           "valid by Policy (order-independent overflow): [2^64-1, 2^64-1, 0] and "
           "[2^63, 2^63, 0] have zero elements; the reference rejects these");
  }
  // Sub-byte dtypes (check 8).
  {
    std::string h = "{" + E("a", "F4", "3", 0, 2) + "}";
    c.bad("misaligned_f4_odd", st(h, data_bytes(2)), "MisalignedSlice", at(h, "]}") + 1, "a",
          "3 F4 elements = 12 bits: at the entry's '}'");
  }
  {
    std::string h = "{" + E("a", "F4", "", 0, 1) + "}";
    c.bad("misaligned_f4_scalar", st(h, data_bytes(1)), "MisalignedSlice", at(h, "]}") + 1, "a",
          "a 0-rank F4 is one element = 4 bits");
  }
  {
    std::string h = "{" + E("a", "F6_E2M3", "2", 0, 2) + "}";
    c.bad("misaligned_f6_two", st(h, data_bytes(2)), "MisalignedSlice", at(h, "]}") + 1, "a",
          "2 F6 elements = 12 bits");
  }
  {
    std::string h = "{" + E("a", "F6_E3M2", "2,3", 0, 5) + "}";
    c.bad("misaligned_f6_six", st(h, data_bytes(5)), "MisalignedSlice", at(h, "]}") + 1, "a",
          "6 F6 elements = 36 bits");
  }
  {
    std::string h = "{" + E("a", "F4", "2", 0, 1) + "," + E("b", "F6_E2M3", "4", 1, 4) + "," +
                    E("c", "F6_E3M2", "2,4", 4, 10) + "," + E("d", "F4", "0", 10, 10) + "," +
                    E("e", "F4", "3,2", 10, 13) + "}";
    c.good("ok_subbyte", pad8(h),
           {{"a", "F4", {2}, 0, 1},
             {"b", "F6_E2M3", {4}, 1, 4},
             {"c", "F6_E3M2", {2, 4}, 4, 10},
             {"d", "F4", {0}, 10, 10},
             {"e", "F4", {3, 2}, 10, 13}},
           "valid: sub-byte tensors whose bit counts are whole bytes");
  }
  // Sizes (check 9).
  {
    std::string h = "{" + E("a", "F32", "2,2", 0, 15) + "}";
    c.bad("size_mismatch", st(h, data_bytes(15)), "TensorSizeMismatch", at(h, "]}") + 1, "a",
          "F32 [2,2] needs 16 bytes, offsets give 15");
  }
  {
    std::string h = "{" + E("a", "F32", "", 0, 0) + "}";
    c.bad("size_mismatch_scalar", st(h), "TensorSizeMismatch", at(h, "]}") + 1, "a",
          "a 0-rank F32 needs 4 bytes, offsets give 0");
  }
  {
    std::string h = "{" + E("a", "U8", "0", 0, 1) + "}";
    c.bad("size_mismatch_zero_dim", st(h, data_bytes(1)), "TensorSizeMismatch", at(h, "]}") + 1,
          "a", "U8 [0] has no bytes, offsets give 1");
  }
}

// Check 10: the data section.
void data_section(Corpus& c) {
  {
    std::string h = pad8("{" + E("a", "U8", "4", 0, 4) + "}");
    c.bad("data_truncated_mid_tensor", st(h, data_bytes(2)), "TruncatedData", 8 + h.size() + 2,
          "a", "input ends 2 bytes into a's 4 bytes; offset = file length");
  }
  {
    std::string h = pad8("{" + E("a", "U8", "4", 0, 4) + "," + E("b", "U8", "4", 4, 8) + "}");
    c.bad("data_truncated_at_boundary", st(h, data_bytes(4)), "TruncatedData", 8 + h.size() + 4,
          "b", "input ends exactly after a: b is the tensor cut off");
  }
  {
    std::string h = pad8("{" + E("a", "F32", "4", 0, 16) + "}");
    c.bad("data_truncated_no_data", st(h), "TruncatedData", 8 + h.size(), "a",
          "input ends right after the header");
  }
  {
    std::string h = pad8("{" + E("z", "U8", "0", 0, 0) + "," + E("a", "U8", "4", 0, 4) + "}");
    c.bad("data_truncated_after_zero_size", st(h), "TruncatedData", 8 + h.size(), "a",
          "zero-size z is complete without input; a is the tensor cut off");
  }
  {
    std::string h = pad8("{" + E("a", "U8", "4", 0, 4) + "}");
    c.bad("data_trailing_byte", st(h, data_bytes(5)), "TrailingBytes", 8 + h.size() + 4, nullptr,
          "one byte after the last tensor (polyglot guard): at that byte");
  }
  {
    std::string h = pad8("{" + E("a", "U8", "4", 0, 4) + "," + E("z", "U8", "0", 4, 4) + "}");
    c.bad("data_trailing_after_zero_size", st(h, data_bytes(4) + "PK\x03\x04"), "TrailingBytes",
          8 + h.size() + 4, nullptr,
          "a zip signature after the data (last tensor zero-size): at its first byte");
  }
  c.bad("data_trailing_no_tensors", st("{}      ", "x"), "TrailingBytes", 16, nullptr,
        "no tensors, yet one byte after the header");
}

// Policy: duplicates and __metadata__.
void duplicates_and_metadata(Corpus& c) {
  {
    std::string h = "{" + E("a", "U8", "4", 0, 4) + "," + E("b", "U8", "4", 4, 8) + "," +
                    E("a", "U8", "4", 8, 12) + "}";
    c.bad("dup_tensor_name", st(h, data_bytes(12)), "DuplicateTensorName", at(h, "\"a\"", 2), "a",
          "Policy: a twice (offsets contiguous, so only the name is wrong): at the second key");
  }
  {
    std::string h = "{" + E("a", "U8", "4", 0, 4) + "," + E("\\u0061", "U8", "4", 4, 8) + "}";
    c.bad("dup_tensor_name_escaped", st(h, data_bytes(8)), "DuplicateTensorName",
          at(h, "\"\\u0061\""), "a", "\"\\u0061\" is the name a again: at the escaped key");
  }
  {
    std::string h = "{" + E("z", "U8", "0", 0, 0) + "," + E("z", "U8", "0", 0, 0) + "}";
    c.bad("dup_tensor_zero_size", st(h), "DuplicateTensorName", at(h, "\"z\"", 2), "z",
          "Policy: two identical zero-size entries; the reference silently keeps one");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":\"1\",\"j\":\"2\",\"k\":\"3\"}}";
    c.bad("meta_duplicate_key", st(h), "DuplicateMetadataKey", at(h, "\"k\"", 2), nullptr,
          "Policy: __metadata__ key k twice (serde keeps the last): at the second k");
  }
  {
    std::string h = "{\"__metadata__\":{\"a\":\"1\"}," + E("t", "U8", "1", 0, 1) +
                    ",\"__metadata__\":{\"b\":\"2\"}}";
    c.bad("meta_twice", st(h, data_bytes(1)), "DuplicateMetadata", at(h, "\"__metadata__\"", 2),
          nullptr, "__metadata__ twice: at the second key");
  }
  {
    std::string h = "{\"__metadata__\":{},\"\\u005f_metadata__\":{}}";
    c.bad("meta_twice_escaped", st(h), "DuplicateMetadata", at(h, "\"\\u005f"), nullptr,
          "\"\\u005f_metadata__\" is __metadata__ again: at the escaped key");
  }
  {
    std::string h = "{\"__metadata__\":null,\"__metadata__\":{}}";
    c.bad("meta_null_then_object", st(h), "DuplicateMetadata", at(h, "\"__metadata__\"", 2),
          nullptr, "a null __metadata__ still counts as present");
  }
  {
    std::string h = "{\"\\u005f_metadata__\":[]}";
    c.bad("meta_escaped_array", st(h), "MetadataNotObject", at(h, "[]"), nullptr,
          "the escaped spelling is __metadata__ (not a tensor): an array there is "
          "MetadataNotObject, at its '['");
  }
  {
    std::string h = "{\"__metadata__\":[]}";
    c.bad("meta_array", st(h), "MetadataNotObject", at(h, "[]"), nullptr,
          "__metadata__ is an array: at its '['");
  }
  {
    std::string h = "{\"__metadata__\":\"x\"}";
    c.bad("meta_string", st(h), "MetadataNotObject", at(h, "\"x\""), nullptr,
          "__metadata__ is a string: at its quote");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":1}}";
    c.bad("meta_value_number", st(h), "MetadataValueNotString", at(h, "1}"), nullptr,
          "a number as a __metadata__ value: at its first byte");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":\"v\",\"n\":null}}";
    c.bad("meta_value_null", st(h), "MetadataValueNotString", at(h, "null"), nullptr,
          "null as a __metadata__ value");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":{\"x\":\"y\"}}}";
    c.bad("meta_value_object", st(h), "MetadataValueNotString", at(h, "{\"x\""), nullptr,
          "an object as a __metadata__ value: at its '{'");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":[\"v\"]}}";
    c.bad("meta_value_array", st(h), "MetadataValueNotString", at(h, "[\"v\"]"), nullptr,
          "an array as a __metadata__ value: at its '['");
  }
  {
    std::string h = "{\"\\u005f_metadata__\":{\"k\":\"v\"}," + E("t", "U8", "1", 0, 1) + "}";
    Expect e{{{"t", "U8", {1}, 0, 1}}, true, {{"k", "v"}}};
    c.good_meta("ok_meta_escaped_key", pad8(h), e,
           "valid: \"\\u005f_metadata__\" is the __metadata__ key");
  }
  {
    std::string h = "{" + E("t", "U8", "1", 0, 1) + ",\"__metadata__\":null}";
    Expect e{{{"t", "U8", {1}, 0, 1}}, false, {}};
    c.good_meta("ok_meta_null", pad8(h), e, "valid: __metadata__ null means no metadata");
  }
  {
    std::string h = "{\"__metadata__\":{}}";
    Expect e{{}, true, {}};
    c.good_meta("ok_meta_empty", pad8(h), e, "valid: __metadata__ {} (present, no entries)");
  }
  {
    std::string h = "{" + E("a", "U8", "1", 0, 1) +
                    ",\"__metadata__\":{\"format\":\"pt\",\"json\":\"{\\\"x\\\":[1]}\","
                    "\"nul\":\"a\\u0000b\",\"\\ud83d\\ude42\":\"\",\"tab\\tkey\":\"line\\n\"}," +
                    E("b", "U8", "1", 1, 2) + "}";
    Expect e{{{"a", "U8", {1}, 0, 1}, {"b", "U8", {1}, 1, 2}},
             true,
             {{"format", "pt"},
              {"json", "{\"x\":[1]}"},
              {"nul", std::string("a\0b", 3)},
              {"\xF0\x9F\x99\x82", ""},
              {"tab\tkey", "line\n"}}};
    c.good_meta("ok_meta_between_tensors", pad8(h), e,
           "valid: __metadata__ between two tensors, with escapes, a NUL, an emoji key and an "
           "empty value");
  }
}

// Check 5: strings (control characters, escapes, surrogates).
void strings(Corpus& c) {
  {
    std::string h = "{" + E("a\x01" "b", "U8", "1", 0, 1) + "}";
    c.bad("string_control_char_name", st(h, data_bytes(1)), "JsonControlCharacter",
          at(h, "\x01"), nullptr, "raw 0x01 in a tensor name");
  }
  {
    std::string h = "{" + E("a\tb", "U8", "1", 0, 1) + "}";
    c.bad("string_raw_tab_name", st(h, data_bytes(1)), "JsonControlCharacter", at(h, "\t"),
          nullptr, "a raw TAB must be escaped inside a string");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":\"line1\nline2\"}}";
    c.bad("string_raw_newline_metadata", st(h), "JsonControlCharacter", at(h, "\n"), nullptr,
          "a raw LF inside a __metadata__ value");
  }
  {
    std::string h = "{\"a\":{\"dtype\":\"U8\x1f\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    c.bad("string_control_char_dtype", st(h, data_bytes(1)), "JsonControlCharacter",
          at(h, "\x1f"), "a", "raw 0x1F inside the dtype string of entry a");
  }
  {
    std::string h = "{" + E("a\\ud800", "U8", "1", 0, 1) + "}";
    c.bad("string_lone_high_surrogate", st(h, data_bytes(1)), "JsonLoneSurrogate",
          at(h, "\\ud800") + 6, nullptr,
          "\\ud800 followed by the closing quote: the quote is where a low surrogate was needed");
  }
  {
    std::string h = "{" + E("\\ud800x", "U8", "1", 0, 1) + "}";
    c.bad("string_lone_high_surrogate_then_char", st(h, data_bytes(1)), "JsonLoneSurrogate",
          at(h, "\\ud800") + 6, nullptr, "\\ud800 followed by 'x': at the 'x'");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":\"\\ud800\"}}";
    c.bad("string_lone_surrogate_metadata", st(h), "JsonLoneSurrogate", at(h, "\\ud800") + 6,
          nullptr, "a lone surrogate in a __metadata__ value (validated: it is kept)");
  }
  {
    std::string h = "{" + E("a\\xb", "U8", "1", 0, 1) + "}";
    c.bad("string_bad_escape", st(h, data_bytes(1)), "JsonInvalidEscape", at(h, "\\x") + 1,
          nullptr, "\\x is not a JSON escape: at the 'x'");
  }
  {
    std::string h = "{" + E("a\\u00g0", "U8", "1", 0, 1) + "}";
    c.bad("string_bad_unicode_hex", st(h, data_bytes(1)), "JsonInvalidEscape", at(h, "g0"),
          nullptr, "\\u00g0: 'g' is not a hex digit");
  }
  {
    std::string h = "{\"__metadata__\":{\"k\":\"\\'\"}}";
    c.bad("string_escaped_single_quote", st(h), "JsonInvalidEscape", at(h, "\\'") + 1, nullptr,
          "\\' is not a JSON escape");
  }
  {
    std::string h = pad8("{" + E("a\\u0000b", "U8", "1", 0, 1) + "}");
    c.good("ok_nul_escape_name", h, {{std::string("a\0b", 3), "U8", {1}, 0, 1}},
           "valid: \\u0000 inside a name is a NUL in the name");
  }
  {
    std::string h = pad8("{" + E("\\ud83d\\ude42", "U8", "1", 0, 1) + "," +
                         E("\\u00e9\\u6f22", "U8", "1", 1, 2) + "}");
    c.good("ok_surrogate_pair_name", h,
           {{"\xF0\x9F\x99\x82", "U8", {1}, 0, 1}, {"\xC3\xA9\xE6\xBC\xA2", "U8", {1}, 1, 2}},
           "valid: \\ud83d\\ude42 is U+1F642; \\u00e9\\u6f22 is 'é漢'");
  }
  {
    std::string h = pad8("{" + E("q\\\"b\\\\s\\/f\\bf\\fn\\nr\\rt\\t\x7f", "U8", "1", 0, 1) + "}");
    c.good("ok_all_escapes_name", h,
           {{"q\"b\\s/f\bf\fn\nr\rt\t\x7f", "U8", {1}, 0, 1}},
           "valid: every short escape, and a raw DEL (0x7F is not a control character in JSON)");
  }
}

// serde_json's nesting limit: its recursion counter starts at 128 and a container that brings it
// to 0 is rejected, so at most 127 containers may be open at once (serde_json's own tests: depth
// 127 parses, depth 128 fails). Depth counts every open container: the root object (1), the entry
// (2), then the unknown field's. FORMATS.md's "nesting limit is 128" is that counter.
void nesting(Corpus& c) {
  const std::string prefix = "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":";
  {
    std::string h = prefix + std::string(125, '[') + std::string(125, ']') + "}}";
    c.good("ok_nesting_127", pad8(h), {{"t", "U8", {1}, 0, 1}},
           "valid: 125 nested arrays in an unknown field = depth 127 with the root and the entry");
  }
  {
    std::string h = prefix + std::string(126, '[') + std::string(126, ']') + "}}";
    c.bad("nesting_128_arrays", st(h, data_bytes(1)), "NestingTooDeep", 8 + prefix.size() + 125,
          "t", "126 nested arrays in an unknown field of t = depth 128: at the 126th '[' (the "
               "128th open container)");
  }
  {
    std::string open, close;
    for (int i = 0; i < 126; ++i) open += "{\"a\":", close += "}";
    std::string h = prefix + open + "null" + close + "}}";
    c.bad("nesting_128_objects", st(h, data_bytes(1)), "NestingTooDeep",
          8 + prefix.size() + 125 * 5, "t",
          "126 nested objects in an unknown field of t = depth 128: at the 126th '{'");
  }
}


// Issue #26: the classes where weightstream and the reference crate (safetensors 24b0b285) read a
// file differently, each now read as the crate reads it. The crate deserializes the header into
// HashMetadata, whose tensors are a #[serde(flatten)] map (safetensors/src/tensor.rs, struct
// HashMetadata): serde buffers each tensor entry whole as Content before TensorInfo reads its
// fields, so every value of an entry — unknown fields too — is parsed as serde_json parses any
// value (strings validated, numbers into u64 / i64 / f64).
const char* const kCrateContent =
    "rejected by the crate: safetensors/src/tensor.rs SafeTensors::read_metadata, serde_json::from_str "
    "into HashMetadata, whose #[serde(flatten)] tensors buffer each entry as serde Content";
void crate_parity(Corpus& c) {
  const std::string known = "\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]";
  // Lone surrogates in unknown fields: serde_json's parse_str validates \u escapes
  // (src/read.rs parse_unicode_escape with validate = true).
  struct S {
    const char* file;
    std::string field;   // the unknown field's JSON, name and value
    const char* needle;  // where the error is, as the lexer reports it
    int after;           // bytes after the needle's start
    const char* why;
  };
  const S lone[] = {
      {"unknown_field_lone_high_surrogate", "\"x\":\"\\ud800\"", "\\ud800", 6,
       "\\ud800 then the closing quote in an unknown field's string: at the quote, where a low surrogate was needed"},
      {"unknown_field_lone_low_surrogate", "\"x\":\"a\\udc00\"", "\\udc00", 0,
       "a lone low surrogate \\udc00 in an unknown field's string: at its backslash"},
      {"unknown_field_high_then_bmp", "\"x\":\"\\ud800\\u0041\"", "\\u0041", 0,
       "\\ud800\\u0041: a high surrogate followed by a unit that is no low surrogate: at that unit's backslash"},
      {"unknown_field_lone_surrogate_in_array", "\"x\":[1,[true,\"\\ud800x\"]]", "\\ud800", 6,
       "\\ud800 then 'x' in a string inside nested arrays of an unknown field: at the 'x'"},
      {"unknown_field_lone_surrogate_in_key", "\"x\":{\"y\":{\"\\udc00\":1}}", "\\udc00", 0,
       "a lone \\udc00 in an object key two levels deep in an unknown field: at its backslash"},
  };
  for (const S& l : lone) {
    std::string h = "{\"t\":{" + known + "," + l.field + "}}";
    c.bad(l.file, st(h, data_bytes(1)), "JsonLoneSurrogate", at(h, l.needle) + l.after, "t", l.why);
    c.crate(std::string(kCrateContent) + "; serde_json src/read.rs parse_unicode_escape (validate): lone surrogate");
  }
  {
    std::string h = "{\"t\":{\"x\":\"\\udfff\"," + known + "}}";
    c.bad("unknown_field_lone_surrogate_first", st(h, data_bytes(1)), "JsonLoneSurrogate", at(h, "\\udfff"), "t",
          "an unknown field with a lone \\udfff before the known fields: at its backslash");
    c.crate(std::string(kCrateContent) + "; serde_json src/read.rs parse_unicode_escape (validate): lone surrogate");
  }
  // Numbers beyond the f64 range: serde_json src/de.rs f64_from_parts (NumberOutOfRange), reached
  // from parse_integer / parse_long_integer / parse_decimal / parse_exponent.
  struct N {
    const char* file;
    std::string value;
    const char* why;
  };
  const N out[] = {
      {"unknown_field_number_1e400", "1e400", "1e400 in an unknown field: beyond the f64 range"},
      {"unknown_field_number_minus_1e400", "[0,{\"k\":-1e400}]", "-1e400 inside an object in an array of an unknown field"},
      {"unknown_field_number_309_digits", "1" + std::string(309, '0'),
       "an integer of 310 digits (10^309): serde_json reads integers beyond u64 as f64; out of range"},
      {"unknown_field_number_exponent_overflow", "2e99999999999",
       "an exponent beyond i32 with a nonzero significand (serde_json parse_exponent_overflow)"},
  };
  for (const N& n : out) {
    std::string h = "{\"t\":{" + known + ",\"x\":" + n.value + "}}";
    const size_t first = n.value.find_first_of("-123456789");
    c.bad(n.file, st(h, data_bytes(1)), "JsonNumberOutOfRange", at(h, ",\"x\":") + 5 + first, "t",
          std::string(n.why) + ": at the number's first byte");
    c.crate(std::string(kCrateContent) + "; serde_json src/de.rs f64_from_parts: NumberOutOfRange");
  }
  {
    std::string h = "{\"t\":{" + known + ",\"a\":1e-400,\"b\":-1" + std::string(308, '0') +
                    ",\"c\":1.7976931348623157e308,\"d\":0e99999999999,\"e\":5e-99999999999,"
                    "\"f\":18446744073709551616,\"g\":-9223372036854775809,\"h\":0.000001e310}}";
    c.good("ok_unknown_field_numbers_in_range", pad8(h), {{"t", "U8", {1}, 0, 1}},
           "valid: unknown fields with numbers serde_json reads as finite f64: 1e-400 (0), -10^308, "
           "the largest double, a zero significand with an exponent beyond i32, a tiny exponent beyond "
           "i32, integers just past u64 and i64, 1e-6 * 10^310 = 10^304");
    c.crate("accepted by the crate: serde_json src/de.rs f64_from_parts returns a finite f64 for each");
  }
  {
    std::string h = "{\"t\":{" + known + ",\"x\":{\"\\ud83d\\ude42\":[\"\\u00e9\\ud800\\udc00\"]}}}";
    c.good("ok_unknown_field_surrogate_pairs", pad8(h), {{"t", "U8", {1}, 0, 1}},
           "valid: paired surrogates in an unknown field's key and string");
    c.crate("accepted by the crate: serde_json src/read.rs parse_unicode_escape joins the pairs");
  }
  // The dtype's object form: serde's externally tagged unit variant. Dtype is read through
  // serde's ContentRefDeserializer (serde src/private/de.rs): deserialize_enum takes a string or a
  // map with exactly one key, unit_variant takes that key's value only as null (Content::Unit).
  {
    std::string h = "{\"t\":{\"dtype\":{\"F32\":null},\"shape\":[2],\"data_offsets\":[0,8]}}";
    c.good("ok_dtype_object_form", pad8(h), {{"t", "F32", {2}, 0, 8}},
           "valid: dtype {\"F32\": null}, serde's externally tagged form of the unit variant F32");
    c.crate("accepted by the crate: serde src/private/de.rs ContentRefDeserializer::deserialize_enum "
            "(a map of one key) and VariantRefDeserializer::unit_variant (its value null)");
  }
  {
    std::string h = "{\"t\":{\"shape\":[2],\"dtype\" : { \"B\\u0046\\u0031\\u0036\" :\tnull } ,"
                    "\"data_offsets\":[0,4]}}";
    c.good("ok_dtype_object_form_escaped", pad8(h), {{"t", "BF16", {2}, 0, 4}},
           "valid: dtype {\"B\\u0046\\u0031\\u0036\": null} with whitespace: the key decodes to BF16");
    c.crate("accepted by the crate: the variant name is the decoded key (serde src/private/de.rs "
            "EnumRefDeserializer::variant_seed)");
  }
  struct O {
    const char* file;
    const char* dtype_json;
    const char* needle;
    const char* why;
  };
  const O bad_obj[] = {
      {"dtype_object_empty", "{}", "}", "an empty object: no variant; at its '}'"},
      {"dtype_object_array_value", "{\"F32\":[]}", "[]", "the variant's value [] is not a unit: at the '['"},
      {"dtype_object_object_value", "{\"F32\":{}}", "{}", "the variant's value {} is not a unit: at its '{'"},
      {"dtype_object_string_value", "{\"F32\":\"\"}", "\"\"", "the variant's value \"\" is not a unit: at its quote"},
      {"dtype_object_two_keys", "{\"F32\":null,\"F16\":null}", "\"F16\"", "two keys: at the second key's quote"},
      {"dtype_object_unknown_name", "{\"f32\":null}", "\"f32\"", "the key is no dtype name: at its quote"},
  };
  for (const O& o : bad_obj) {
    std::string h = std::string("{\"a\":{\"dtype\":") + o.dtype_json + ",\"shape\":[1],\"data_offsets\":[0,4]}}";
    const uint64_t off = at(h, std::string("\"dtype\":") + o.dtype_json) + 8 + std::string(o.dtype_json).find(o.needle);
    c.bad(o.file, st(h, data_bytes(4)), "InvalidDtype", off, "a", std::string("dtype ") + o.dtype_json + ": " + o.why);
    c.crate("rejected by the crate: serde src/private/de.rs ContentRefDeserializer::deserialize_enum "
            "(\"map with a single key\"), deserialize_unit (a unit only from null), or Dtype's unknown variant");
  }
  // A safetensors file whose length prefix's first byte is '{' (123) and whose header names a
  // tensor "layers": every host used to have to tell it from an Ollama manifest (file_kind.h).
  {
    std::string h = "{\"layers\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}";
    while (h.size() < 123) h += ' ';
    if (h.size() != 123) die("layers case: header is not 123 bytes");
    c.good("ok_header_length_123_tensor_layers", h, {{"layers", "U8", {4}, 0, 4}},
           "valid: header length 123 (its first byte 0x7B is '{') and a tensor named layers: a "
           "safetensors file, not an Ollama manifest");
    c.crate("accepted by the crate: nothing in safetensors/src/tensor.rs looks at what the length prefix's bytes spell");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ws-make-corpus OUTDIR\n");
    return 2;
  }
  Corpus c;
  framing(c);
  utf8(c);
  json_structure(c);
  entry_schema(c);
  error_order(c);
  numbers(c);
  dtypes(c);
  table_checks(c);
  data_section(c);
  duplicates_and_metadata(c);
  strings(c);
  nesting(c);
  crate_parity(c);
  c.write(argv[1]);
  return 0;
}

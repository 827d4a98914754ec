// weightstream CLI — text for humans: shapes, sizes, and names made safe for a terminal.
#pragma once

#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

namespace wscli {

// "[4096, 4096]"; "[]" for a 0-rank tensor.
std::string shape_text(const std::vector<uint64_t>& shape);

// Tensor names and metadata come from untrusted files: a name holding ESC sequences could rewrite
// the user's terminal. Printable UTF-8 passes through; control characters and invalid bytes come
// out as C-style escapes (\n, \t, \x1b, \xff).
std::string display_text(std::string_view s);

// The first `max` bytes of `s` or fewer, cut at a UTF-8 character boundary (display_text would
// turn half a character into escapes).
std::string cut_utf8(const std::string& s, size_t max);

// display_text in double quotes, with `"` and `\` escaped so the boundaries stay visible (names may
// be empty or carry spaces at either end).
std::string quoted(std::string_view s);

// Plain names print as they are; names (and GGUF keys) that need escaping, are empty or have
// spaces at either end are quoted so their boundaries show.
std::string name_text(const std::string& name);

// A table with one header row; every column is as wide as its widest cell, right-aligned where
// `right_align` says (numbers, so digits line up). Each line starts with two spaces.
std::string table_text(const std::vector<std::string>& head,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_align);

// "2.4 MB", "512 B": decimal units, as download sizes are usually quoted.
std::string human_bytes(uint64_t n);

// "96 bytes", "2365368 bytes (2.4 MB)": exact count first (it is what offsets are compared with),
// the rounded size only where it adds something.
std::string bytes_text(uint64_t n);

// Left- or right-pads to `width` display columns (counting UTF-8 code points, not bytes).
std::string pad_right(const std::string& s, size_t width);
std::string pad_left(const std::string& s, size_t width);
size_t display_width(const std::string& s);

}  // namespace wscli

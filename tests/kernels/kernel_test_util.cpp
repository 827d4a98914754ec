#include "kernel_test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <sstream>

namespace kernel_test {

std::string shared_path(const std::string& relative) { return std::string(WS_SHARED_DIR) + "/" + relative; }

bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  out->clear();
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
  bool ok = !ferror(f);
  fclose(f);
  if (!ok) out->clear();
  return ok;
}

std::vector<uint8_t> load_shared(const std::string& relative) {
  std::vector<uint8_t> out;
  if (!read_file(shared_path(relative), &out)) ADD_FAILURE() << "cannot read " << shared_path(relative);
  return out;
}

std::vector<std::string> json_string_values(const std::string& json, const std::string& key) {
  std::vector<std::string> values;
  const std::string quoted = "\"" + key + "\"";
  size_t pos = 0;
  while ((pos = json.find(quoted, pos)) != std::string::npos) {
    pos += quoted.size();
    size_t p = json.find_first_not_of(" \t\r\n", pos);
    if (p == std::string::npos || json[p] != ':') continue;  // the key text as a value, not a key
    p = json.find_first_not_of(" \t\r\n", p + 1);
    if (p == std::string::npos || json[p] != '"') continue;  // a non-string value
    size_t end = json.find('"', p + 1);
    if (end == std::string::npos) break;
    values.push_back(json.substr(p + 1, end - p - 1));
    pos = end + 1;
  }
  return values;
}

namespace {

template <typename Bits, typename IsNan, typename Neg>
::testing::AssertionResult compare_bits(const Bits* got, const Bits* want, size_t n, IsNan is_nan, Neg negative,
                                        int hex_width) {
  size_t mismatches = 0;
  std::ostringstream first;
  for (size_t i = 0; i < n; ++i) {
    bool same = got[i] == want[i] || (is_nan(got[i]) && is_nan(want[i]) && negative(got[i]) == negative(want[i]));
    if (same) continue;
    if (++mismatches <= 8) {
      char line[96];
      snprintf(line, sizeof line, "\n  [%zu] got 0x%0*llx, want 0x%0*llx", i, hex_width, (unsigned long long)got[i],
               hex_width, (unsigned long long)want[i]);
      first << line;
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << n << " values differ" << first.str();
}

}  // namespace

::testing::AssertionResult floats_identical(const float* got, const float* want, size_t n) {
  std::vector<uint32_t> g(n), w(n);
  if (n) {
    memcpy(g.data(), got, n * 4);
    memcpy(w.data(), want, n * 4);
  }
  return compare_bits(
      g.data(), w.data(), n, [](uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; },
      [](uint32_t u) { return (u >> 31) != 0; }, 8);
}

::testing::AssertionResult halves_identical(const uint16_t* got, const uint16_t* want, size_t n) {
  return compare_bits(
      got, want, n, [](uint16_t h) { return (h & 0x7FFF) > 0x7C00; }, [](uint16_t h) { return (h >> 15) != 0; }, 4);
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  if (!out.empty()) memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Rng::fill(uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t(next() >> 56);
}

std::vector<uint8_t> decode_in_pieces(const ws::DequantSpec& spec, const uint8_t* in, size_t in_size,
                                      const Pieces& pieces) {
  std::vector<uint8_t> out;
  ws::Dequantizer d;
  ws::Status s = d.init(spec);
  if (s != ws::Status::Ok) {
    ADD_FAILURE() << "init: " << ws::status_name(s);
    return out;
  }
  const size_t out_size = size_t(spec.elements) * (spec.out == ws::OutType::F16 ? 2 : 4);
  out.assign(out_size, 0xA5);  // a pattern no test expects, so unwritten bytes show
  const size_t cap_limit = pieces.out_blocks ? pieces.out_blocks * d.block_output_bytes() : out_size;
  Rng rng(pieces.seed);
  size_t fed = 0, written = 0;
  while (fed < in_size) {
    size_t piece = in_size - fed;
    if (pieces.kind == Pieces::Fixed && pieces.size < piece) piece = pieces.size;
    if (pieces.kind == Pieces::Random) {
      size_t r = 1 + size_t(rng.below(pieces.max_size));
      if (r < piece) piece = r;
    }
    // One piece may need several calls when the output capacity is the limit.
    size_t used_of_piece = 0;
    do {
      size_t cap = out_size - written;
      if (cap > cap_limit) cap = cap_limit;
      if (cap < d.block_output_bytes()) cap = d.block_output_bytes();  // never below one block
      size_t in_used = 0, out_written = 0;
      if (written + cap > out_size) {
        ADD_FAILURE() << "decoder produced more than the tensor at input byte " << fed + used_of_piece;
        return out;
      }
      s = d.decode(in + fed + used_of_piece, piece - used_of_piece, &in_used, out.data() + written, cap, &out_written);
      if (s != ws::Status::Ok) {
        ADD_FAILURE() << "decode: " << ws::status_name(s) << " at offset " << d.error().offset;
        return out;
      }
      used_of_piece += in_used;
      written += out_written;
      if (in_used == 0 && out_written == 0) {
        ADD_FAILURE() << "decoder made no progress at input byte " << fed + used_of_piece;
        return out;
      }
    } while (used_of_piece < piece);
    fed += piece;
  }
  EXPECT_TRUE(d.done()) << d.elements_done() << " of " << spec.elements << " elements decoded";
  EXPECT_EQ(written, out_size);
  return out;
}

}  // namespace kernel_test

// weightstream CLI — dequant's rows, JSON, text lines and output files (see dequant_output.h).
#include "dequant_output.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>

#include "json_writer.h"
#include "problem_text.h"
#include "file_report.h"
#include "text_format.h"

namespace wscli {
namespace {

constexpr size_t kMaxStem = 200;  // file names stay well below NAME_MAX (255)

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string to_name(bool f16) { return f16 ? "f16" : "f32"; }

void string_or_null(JsonWriter* w, const std::string& s) {
  if (s.empty())
    w->null();
  else
    w->string(s);
}

// One row. Stored tensors and logical weights share the leading and trailing keys; between them a
// stored tensor has its block, a logical weight its quantization, file and pieces. Key order is
// part of the interface, as for validate and inspect.
void write_row(JsonWriter* w, const DequantTensor& t, bool all) {
  w->begin_object();
  w->key("name").string(t.name);
  w->key("stored").string(t.stored);
  w->key("ggml_type");
  if (t.ggml_type)
    w->number(*t.ggml_type);
  else
    w->null();
  w->key("format");
  if (t.format)
    w->string(ws::quant_format_name(*t.format));
  else
    w->null();
  if (t.logical) {
    w->key("convention").string(t.convention);
    w->key("mode").string(t.mode);
    w->key("bits");
    if (t.bits)
      w->number(t.bits);
    else
      w->null();
    w->key("group");
    if (t.group)
      w->number(t.group);
    else
      w->null();
    w->key("parameters").string(t.parameters);
  } else {
    w->key("block");
    if (t.format)
      w->begin_object().key("elements").number(t.block_elems).key("bytes").number(t.block_bytes).end_object();
    else
      w->null();
  }
  w->key("shape").begin_array();
  for (uint64_t d : t.shape) w->number(d);
  w->end_array();
  w->key("elements").number(t.elements);
  w->key("stored_bytes").number(t.stored_bytes);
  w->key("data_offset").number(t.data_offset);
  if (!t.split.empty()) w->key("split").string(t.split);  // split GGUF models only
  if (t.logical) {
    w->key("shard");
    string_or_null(w, t.shard);
    w->key("pieces").begin_array();
    for (const DequantPiece& p : t.pieces) {
      w->begin_object();
      w->key("role").string(p.role);
      w->key("tensor").string(p.tensor);
      w->key("shard");
      string_or_null(w, p.shard);
      w->key("offset").number(p.offset);
      w->key("bytes").number(p.bytes);
      w->end_object();
    }
    w->end_array();
  }
  if (t.i2s_scale) w->key("i2s_scale").real(*t.i2s_scale, true);
  w->key("output_bytes").number(t.output_bytes);
  w->key("output_file");
  string_or_null(w, t.output_file);
  w->key("written").boolean(t.written);
  // A logical weight asked for by name either decodes or is an error: only --all lists skips.
  if (!t.logical || all) {
    w->key("skipped");
    if (t.format)
      w->null();
    else
      w->string(t.skip_reason);
  }
  w->end_object();
}

}  // namespace

std::string no_decoding_reason(const std::string& stored, bool gguf) {
  static const char* const kIntegers[] = {"BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64"};
  for (const char* t : kIntegers)
    if (stored == t) return stored + " holds integers, which have no float decoding";
  if (stored == "TL1" || stored == "TL2")
    return stored + " is pre-tiled for one BitNet kernel configuration and cannot be decoded generically "
                    "(read it as raw bytes)";
  if (stored == "Q8_1") return "Q8_1 is ggml's activation type; ggml itself has no dequantizer for it";
  if (stored == "C64") return "C64 holds complex numbers";
  return "weightstream has no decoder for " + stored + (gguf ? " tensors" : " (it decodes F32, F16, BF16, "
                                                                         "F8_E4M3, F8_E5M2 and F8_E8M0)");
}

namespace {

// The stem before any "~k": bytes other than [A-Za-z0-9._-] become '_', cut to kMaxStem.
std::string plain_stem(const std::string& tensor_name) {
  std::string s;
  for (char c : tensor_name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    s += keep ? c : '_';
  }
  if (s.empty() || s[0] == '.') s.insert(s.begin(), '_');
  if (s.size() > kMaxStem) s.resize(kMaxStem);
  return s;
}

}  // namespace

std::string output_file_stem(const std::string& tensor_name, std::vector<std::string>* taken) {
  const std::string s = plain_stem(tensor_name);
  std::string stem = s;
  for (unsigned k = 2; std::find(taken->begin(), taken->end(), lower(stem)) != taken->end(); ++k)
    stem = s + "~" + std::to_string(k);
  taken->push_back(lower(stem));
  return stem;
}

std::string output_file_stem(const std::string& tensor_name, std::unordered_set<std::string>* taken) {
  const std::string s = plain_stem(tensor_name);
  std::string stem = s;
  for (unsigned k = 2; taken->count(lower(stem)); ++k) stem = s + "~" + std::to_string(k);
  taken->insert(lower(stem));
  return stem;
}

std::optional<Problem> prepare_output_dir(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (mkdir(dir.c_str(), 0777) != 0) return io_problem("cannot create directory " + dir, strerror(errno), 0);
  } else if (!S_ISDIR(st.st_mode)) {
    return io_problem("cannot write into " + dir, strerror(ENOTDIR), 0);
  }
  return std::nullopt;
}

std::vector<std::string> close_names(const std::string& wanted, const std::vector<std::string>& names, size_t max) {
  // Case is the commonest slip ("Q4_K" for "q4_k"): distances are taken without it.
  std::vector<std::pair<size_t, std::string>> scored;
  const size_t limit = std::max<size_t>(2, wanted.size() / 3);
  const std::string w = lower(wanted);
  for (const std::string& n : names) {
    const std::string l = lower(n);
    const size_t d = edit_distance(w, l);
    const bool contains = w.size() >= 3 && (l.find(w) != std::string::npos ||
                                            (l.size() >= 3 && w.find(l) != std::string::npos));
    if (d <= limit || contains) scored.emplace_back(d, n);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(scored[i].second);
  return out;
}

Problem name_not_found(const std::string& wanted, const std::vector<std::string>& names, const std::string& what,
                       const std::string& unit, const std::string& whole) {
  std::string msg = "no " + what + " named " + quoted(wanted) + " among the " + std::to_string(names.size()) + " " +
                    unit + (names.size() == 1 ? "" : "s") + " of the " + whole;
  const std::vector<std::string> close = close_names(wanted, names, 5);
  if (!close.empty()) {
    msg += "; close names: ";
    for (size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : "") + quoted(close[i]);
  } else {
    msg += " (weightstream inspect lists them)";
  }
  return usage_problem("TensorNotFound", msg, wanted);
}

std::string dequant_json(const std::string& path, ws::Format format, const std::optional<std::string>& convention,
                         bool f16, const std::vector<DequantTensor>& tensors, bool all,
                         const std::optional<Problem>& problem, const std::vector<WarningRow>& warnings) {
  JsonWriter w;
  w.begin_object();
  w.key("file").string(path);
  w.key("format");
  if (format != ws::Format::Unknown)
    w.string(ws::format_name(format));
  else
    w.null();
  if (convention) w.key("convention").string(*convention);
  w.key("to").string(to_name(f16));
  w.key("tensors").begin_array();
  for (const DequantTensor& t : tensors)
    if (all || t.selected) write_row(&w, t, all);
  w.end_array();
  w.key("error");
  if (problem)
    write_problem_json(&w, *problem, convention.has_value());  // a model of several files names the file
  else
    w.null();
  write_warnings_json(&w, warnings);
  w.end_object();
  return w.str();
}

std::string written_line(const DequantTensor& t, bool f16) {
  // A logical weight says its convention and quantization; a stored (or plain) tensor its type.
  std::string what = t.stored;
  if (t.logical && t.mode != "none")
    what = t.convention + " " + t.mode + " " + std::to_string(t.bits) + "-bit g" + std::to_string(t.group);
  else if (t.logical && !t.plain)
    what = t.convention + " " + (t.format ? ws::quant_format_name(*t.format) : "") +
           (t.parameters.empty() ? "" : " (" + t.parameters + ")");
  return name_text(t.name) + ": " + what + " " + shape_text(t.shape) + " -> " + std::to_string(t.elements) + " " +
         to_name(f16) + " values, " + bytes_text(t.output_bytes) +
         (t.output_file == "-" ? " to standard output" : " in " + display_text(t.output_file));
}

std::string all_summary_text(const std::vector<DequantTensor>& tensors, const std::string& dir) {
  std::string out;
  size_t written = 0, skipped = 0;
  uint64_t bytes = 0;
  for (const DequantTensor& t : tensors) {
    if (t.written) ++written, bytes += t.output_bytes;
    if (!t.format) {
      ++skipped;
      out += name_text(t.name) + ": skipped: " + display_text(t.skip_reason) + "\n";
    }
  }
  out += std::to_string(written) + (written == 1 ? " tensor, " : " tensors, ") + bytes_text(bytes) + ", written to " +
         display_text(dir) + (skipped ? "; " + std::to_string(skipped) + " skipped" : "") + "\n";
  return out;
}

}  // namespace wscli

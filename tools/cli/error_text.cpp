// weightstream CLI — error messages (see error_text.h).
#include "error_text.h"

#include <string.h>

#include "weightstream/conventions.h"
#include "weightstream/gguf.h"

namespace wscli {
namespace {

using ws::Status;

std::string num(uint64_t v) { return std::to_string(v); }

uint32_t le32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (size_t k = 4; k-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[at + k]);
  return v;
}

// The numbers that explain a rejection, or "".
std::string details(const ErrorFacts& f) {
  switch (f.code) {
    case Status::TruncatedHeader:
      if (f.input_size && f.input_size_exact) return "the file is " + num(*f.input_size) + " bytes";
      return "";
    case Status::HeaderTooSmall:
      if (f.input_size)
        return "the file is " + num(*f.input_size) +
               " bytes; a safetensors file starts with an 8-byte header length";
      return "";
    case Status::HeaderTooLarge:
      if (f.declared_header)
        return "header says " + num(*f.declared_header) + " bytes; the limit is " +
               num(f.header_limit);
      return "";
    case Status::InvalidHeaderLength:
      if (f.declared_header && f.input_size)
        return "header says " + num(*f.declared_header) + " bytes, ending at byte " +
               num(*f.declared_header + 8) + "; the file is " + num(*f.input_size) + " bytes";
      return "";
    case Status::TruncatedData:
      if (f.data_end && f.input_size)
        return (*f.data_end == UINT64_MAX ? std::string("the tensors end past byte 2^64")
                                          : "the tensors end at byte " + num(*f.data_end)) +
               "; the file is " +
               num(*f.input_size) + " bytes";
      return "";
    case Status::TrailingBytes:
      // The offset is where the input should have ended (for GGUF after the last padding).
      if (f.input_size && f.input_size_exact && *f.input_size > f.offset)
        return num(*f.input_size - f.offset) + " bytes follow the end of the data at byte " +
               num(f.offset);
      return "the data ends at byte " + num(f.offset);
    case Status::ArenaExhausted:
      if (f.arena_needed)
        return num(f.arena_needed) + " bytes needed; the arena has " + num(f.arena_size);
      return "";
    case Status::ShardTensorWrongShard:
    case Status::ShardTensorMissing:
    case Status::ShardTensorDuplicate:
      if (!f.index_shard.empty()) return "the index places it in " + f.index_shard;
      return "";
    case Status::GgufByteSwapped:
    case Status::GgufVersionTooNew:
      if (f.prefix.size() >= 8) {
        const uint32_t v = le32(f.prefix, 4);
        if (f.code == Status::GgufVersionTooNew) return "version " + num(v);
        return "the version field reads " + num(v) + ", which is version " +
               num(__builtin_bswap32(v)) + " written big-endian";
      }
      return "";
    case Status::GgufInvalidType:
      if (f.ggml_type_id) return "type id " + num(*f.ggml_type_id);
      return "";
    case Status::GgufRetiredType:
      if (f.ggml_type_id) {
        std::string d = "type id " + num(*f.ggml_type_id);
        if (!f.ggml_type_name.empty()) d += " was " + f.ggml_type_name;
        // BitNet's fork reuses retired ids; its files are recognised by their architecture.
        if (!f.bitnet_type_name.empty())
          d += "; BitNet's llama.cpp fork uses it for " + f.bitnet_type_name +
               ", but general.architecture does not name bitnet";
        return d;
      }
      return "";
    case Status::GgufInvalidTensorOffset:
      if (f.tensor_offset_found && f.tensor_offset_expected) {
        std::string d = "expected " + num(*f.tensor_offset_expected) + ", found " +
                        num(*f.tensor_offset_found);
        if (*f.tensor_offset_expected == 0)
          d += ": the first tensor starts the data section";
        else if (f.gguf_alignment)
          d += ": the end of the tensor before it, rounded up to a multiple of " +
               num(f.gguf_alignment);
        return d;
      }
      return "";
    case Status::GgufDuplicateKey:
      if (!f.gguf_key.empty()) {
        std::string d = "key \"" + f.gguf_key + "\"";
        if (f.gguf_key_other) d += ", also at byte " + num(*f.gguf_key_other);
        return d;
      }
      return "";
    case Status::ConventionGroupNotInferable:
      if (f.found && f.expected)
        return num(*f.found) + " words and " + num(*f.expected) + " scales per row";
      return "";
    case Status::UqffVersionMismatch:
      if (f.found && f.expected)
        return "this copy says " + num(*f.found) + "; the first copy says " + num(*f.expected);
      return "";
    case Status::UqffNumBlocksMismatch:
      if (f.found && f.expected)
        return "num_blocks is " + num(*f.found) + "; the shape's values take " + num(*f.expected);
      return "";
    case Status::DigestMismatch:
      if (!f.digest_expected.empty())
        return "its SHA-256 is " + (f.digest_actual.empty() ? std::string("unknown (the file was not read in full)") : f.digest_actual) +
               ", expected " + f.digest_expected;
      return "";
    case Status::GgufSplitFirstNotZero:
      if (f.found) return "its split.no is " + num(*f.found);
      return "";
    case Status::GgufSplitNoMismatch:
      if (f.found && f.expected) return "its split.no is " + num(*f.found) + "; its place in the model is " + num(*f.expected);
      return "";
    case Status::GgufSplitCountMismatch:
    case Status::GgufSplitTensorCountMismatch:
      if (f.found && f.expected) return "found " + num(*f.found) + ", expected " + num(*f.expected);
      return "";
    case Status::GgufSplitKeyType:
      if (f.found && f.expected)
        return std::string("a ") + ws::gguf_type_name(ws::GgufType(*f.found)) + ", not a " +
               ws::gguf_type_name(ws::GgufType(*f.expected));
      return "";
    case Status::GgufSplitNameMismatch:
      if (!f.detail.empty()) return "its keys make it a split whose name ends in " + f.detail;
      return "";
    case Status::IndexTotalSizeMismatch:
      if (f.index_total_size && f.tensors_total_size)
        return "the index says " + num(*f.index_total_size) + " bytes; the tensors hold " +
               num(*f.tensors_total_size);
      return "";
    default:
      return "";
  }
}

bool starts_with(const std::string& s, const char* p) { return s.compare(0, strlen(p), p) == 0; }

}  // namespace

uint64_t data_end_of(uint64_t data_start, uint64_t data_size) {
  uint64_t end;
  return __builtin_add_overflow(data_start, data_size, &end) ? UINT64_MAX : end;
}


std::string content_guess(const std::string& prefix) {
  // Things people mistake for a safetensors file, by their first bytes.
  if (starts_with(prefix, "version "))
    return "This looks like a Git LFS pointer, not the model: run `git lfs pull` in the "
           "repository.";
  if (starts_with(prefix, "<"))
    return "This looks like an HTML or XML page: did the download save an error page instead of "
           "the model?";
  if (starts_with(prefix, "{"))
    return "This looks like JSON, not a safetensors file (an index must be named *.index.json).";
  if (starts_with(prefix, "PK\x03\x04"))
    return "This is a zip archive (a PyTorch .bin/.pt checkpoint?), not a safetensors file.";
  if (prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == 0x80 &&
      prefix[1] >= 2 && prefix[1] <= 5)
    return "This looks like a Python pickle (a PyTorch checkpoint?), not a safetensors file.";
  return "";
}

std::string error_message(const ErrorFacts& f) {
  std::string msg = ws::status_description(f.code);
  const std::string d = details(f);
  if (!d.empty()) msg += " (" + d + ")";
  msg += ".";

  std::string hint;
  const bool framing = f.code == Status::UnknownFormat || f.code == Status::HeaderTooLarge ||
                       f.code == Status::InvalidHeaderLength;
  if (framing) hint = content_guess(f.prefix);
  if (hint.empty() && f.code == Status::ArenaExhausted && f.arena_needed)
    hint = "Rerun with --arena-size " + num(f.arena_needed) + ".";
  // The library's fix (status_hint), in the words of the convention that raised it.
  if (hint.empty()) hint = ws::status_hint(f.code, ws::Convention{f.convention});
  if (!hint.empty()) msg += " " + hint;
  return msg;
}

}  // namespace wscli

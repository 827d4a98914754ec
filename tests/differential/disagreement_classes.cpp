// Implements disagreement_classes.h. Each predicate checks that the file really is of its class,
// from the bytes or from ggml's own numbers, so that a wrong error code of ours cannot hide a
// real disagreement behind a class.
#include "disagreement_classes.h"

#include <algorithm>

namespace wsdiff {

namespace {

using ws::Status;

bool nul_at_offset(const Outcome& o, Status s) {
  return o.ws.code == s && o.ws.offset < o.bytes.size() && o.bytes[o.ws.offset] == '\0';
}

using u128 = unsigned __int128;  // ggml's offsets and sizes may add up past 2^64

// Absolute end of ggml's last tensor's data.
u128 ggml_data_end(const GgmlReading& g) {
  u128 end = 0;
  for (const TensorFacts& t : g.tensor) end = std::max(end, u128(t.offset) + t.size);
  return g.data_start + end;
}

bool nul_in_key(const Outcome& o) { return nul_at_offset(o, Status::GgufNulInKey); }
bool nul_in_tensor_name(const Outcome& o) { return nul_at_offset(o, Status::GgufNulInTensorName); }
bool nul_in_architecture(const Outcome& o) { return nul_at_offset(o, Status::GgufNulInArchitecture); }

// ggml (metadata only) does not look at the data section; by ggml's own layout it ends past the
// end of the file.
bool data_past_end(const Outcome& o) {
  return o.ws.code == Status::TruncatedData && o.ggml.accepted && ggml_data_end(o.ggml) > o.bytes.size();
}

// By ggml's own layout, bytes follow the last tensor's data and its padding to the alignment.
bool trailing_bytes(const Outcome& o) {
  if (o.ws.code != Status::TrailingBytes || !o.ggml.accepted || o.ggml.alignment == 0) return false;
  u128 end = ggml_data_end(o.ggml), a = o.ggml.alignment;
  return o.bytes.size() > (end + a - 1) / a * a;
}

// A tensor whose running element count ne0 * ... * ne(j) exceeds INT64_MAX: ggml multiplies in
// 64 bits and skips its overflow check when the wrapped product is <= 0 (so [2^32, 2^32] has 0
// elements to it); we reject the shape.
bool element_count_wraps(const Outcome& o) {
  if (o.ws.code != Status::ShapeOverflow || !o.ggml.accepted || !o.described) return false;
  for (const wsgguf::Tensor& t : o.spec.tensors) {
    u128 n = 1;
    for (uint64_t d : t.ne) {
      n *= d;
      if (n > uint64_t(INT64_MAX)) return true;
    }
  }
  return false;
}

// True byte size of a tensor (upstream type table, 128-bit), as ggml would size it without
// wrapping; 0 for unknown types.
u128 true_bytes(const wsgguf::Tensor& t) {
  wsgguf::GgmlType type = wsgguf::ggml_type(t.type, false);
  if (type.kind != 2 || type.block_elems == 0) return 0;
  uint64_t ne0 = t.ne.empty() ? 1 : t.ne[0];  // rank 0: one element
  u128 n = u128(ne0 / type.block_elems) * type.block_bytes;
  for (size_t d = 1; d < t.ne.size(); ++d) n *= t.ne[d];
  return n;
}

// The tensors' sizes, each padded to the alignment, add up past 2^64: ggml's GGML_PAD wraps
// (GGML_PAD(2^64 - 8, 32) = 0), so its overflow check on the running sum passes; we reject the
// tensor whose padded end does not fit.
bool padded_size_wraps(const Outcome& o) {
  if (o.ws.code != Status::ShapeOverflow || !o.ggml.accepted || !o.described || o.ggml.alignment == 0) return false;
  u128 sum = 0, a = o.ggml.alignment;
  for (const wsgguf::Tensor& t : o.spec.tensors) {
    sum += (true_bytes(t) + a - 1) / a * a;
    if (sum > ~uint64_t(0)) return true;
  }
  return false;
}

// A block-quantized tensor whose ne0 × bytes-per-block exceeds 2^64: ggml_nbytes computes
// ne[0] * nb[0] / block_size in 64 bits, so ggml's size of it wraps (e.g. IQ1_M [2^62]: 0 bytes
// to ggml, 2^54 × 56 to us) and so does every offset after it; we use (ne0 / block) × bytes.
bool ggml_nbytes_wraps(const Outcome& o) {
  if (o.ws.accepted || !o.ggml.accepted || !o.described) return false;
  for (size_t i = 0; i < o.spec.tensors.size() && i < o.ggml.tensor.size(); ++i) {
    const wsgguf::Tensor& t = o.spec.tensors[i];
    wsgguf::GgmlType type = wsgguf::ggml_type(t.type, false);
    if (type.kind != 2 || type.block_elems < 2 || t.ne.empty()) continue;
    if (u128(t.ne[0]) * type.block_bytes <= ~uint64_t(0)) continue;
    u128 bytes = u128(t.ne[0] / type.block_elems) * type.block_bytes;
    for (size_t d = 1; d < t.ne.size(); ++d) bytes *= t.ne[d];
    if (o.ggml.tensor[i].size != uint64_t(bytes)) return true;  // ggml's size is the wrapped one
  }
  return false;
}

// general.architecture names bitnet: we read type ids 36..39 as BitNet's fork numbers them (I2_S,
// I8_S, TL1, TL2), ggml as upstream does (36..38 retired, 39 MXFP4).
bool bitnet_dialect(const Outcome& o) {
  if (o.ws.dialect != ws::GgmlDialect::BitNet || !o.described) return false;
  for (const wsgguf::Tensor& t : o.spec.tensors)
    if (t.type >= 36 && t.type <= 39) return true;
  return false;
}

// ggml died on a file we reject (an abort or a crash is ggml's problem; we said no).
bool ggml_crash_on_rejected(const Outcome& o) { return o.ggml.crashed && !o.ws.accepted; }

const DisagreementClass kClasses[] = {
    {"nul-in-key", "status.h GgufNulInKey (lib/src/gguf/gguf_header_parser.cpp)", nul_in_key},
    {"nul-in-tensor-name", "status.h GgufNulInTensorName", nul_in_tensor_name},
    {"nul-in-architecture", "status.h GgufNulInArchitecture", nul_in_architecture},
    {"data-past-end-of-file", "reader: every tensor's data lies in the file (TruncatedData)", data_past_end},
    {"trailing-bytes", "reader: nothing after the last tensor's padding (TrailingBytes)", trailing_bytes},
    {"element-count-wraps", "GGUF parser: running element count <= INT64_MAX (ShapeOverflow)", element_count_wraps},
    {"padded-size-wraps", "GGUF parser: every tensor's end padded to the alignment fits in 64 bits (ShapeOverflow)", padded_size_wraps},
    {"ggml-nbytes-wraps", "none of ours: ggml_nbytes overflows (ne0 × block bytes > 2^64); we size blocks exactly", ggml_nbytes_wraps},
    {"bitnet-dialect", "FORMATS.md §5: BitNet's type ids 36..39 when general.architecture names bitnet", bitnet_dialect},
    {"ggml-crash-on-rejected", "none of ours: ggml aborts or crashes on a file we reject", ggml_crash_on_rejected},
};

}  // namespace

Verdict compare(const Outcome& o) {
  if (o.ws.accepted != o.ggml.accepted || o.ggml.crashed) {
    if (!o.ws.accepted && !o.ggml.accepted && !o.ggml.crashed) return Verdict::AgreeReject;
    return Verdict::Disagree;
  }
  if (!o.ws.accepted) return Verdict::AgreeReject;
  const FileFacts& a = o.ws;
  const FileFacts& b = o.ggml;
  bool same = a.tensors == b.tensors && a.kvs == b.kvs && a.alignment == b.alignment &&
              a.data_start == b.data_start && a.tensor == b.tensor;
  return same ? Verdict::AgreeAccept : Verdict::Disagree;
}

std::string difference(const Outcome& o) {
  auto facts = [](const FileFacts& f) {
    std::string s = "tensors " + std::to_string(f.tensors) + ", KVs " + std::to_string(f.kvs) +
                    ", alignment " + std::to_string(f.alignment) + ", data at " + std::to_string(f.data_start);
    return s;
  };
  std::string d = "weightstream: ";
  d += o.ws.accepted ? "accepts (" + facts(o.ws) + ")"
                     : std::string("rejects, ") + ws::status_name(o.ws.code) + " at " + std::to_string(o.ws.offset);
  d += "; ggml: ";
  if (o.ggml.crashed) d += "crashed (signal " + std::to_string(o.ggml.signal) + ")";
  else d += o.ggml.accepted ? "accepts (" + facts(o.ggml) + ")" : "rejects";
  if (o.ws.accepted && o.ggml.accepted) {
    size_t n = std::min(o.ws.tensor.size(), o.ggml.tensor.size());
    for (size_t i = 0; i < n; ++i) {
      const TensorFacts &a = o.ws.tensor[i], &b = o.ggml.tensor[i];
      if (a == b) continue;
      d += "; tensor " + std::to_string(i) + ": offset " + std::to_string(a.offset) + " vs " +
           std::to_string(b.offset) + ", size " + std::to_string(a.size) + " vs " + std::to_string(b.size) +
           ", type " + std::to_string(a.type) + " vs " + std::to_string(b.type);
      break;
    }
  }
  return d;
}

const DisagreementClass* classes() { return kClasses; }
int class_count() { return int(sizeof kClasses / sizeof kClasses[0]); }

int classify(const Outcome& o) {
  for (int i = 0; i < class_count(); ++i)
    if (kClasses[i].matches(o)) return i;
  return -1;
}

}  // namespace wsdiff

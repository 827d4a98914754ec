// weightstream CLI — the rows of a file's stored tensors for dequant (see tensor_rows.h).
#include "tensor_rows.h"

#include <algorithm>

#include "weightstream/ggml_types.h"

namespace wscli {
namespace {
constexpr uint32_t kI2sTail = 32;  // I2_S: the scale tail after the codes
}  // namespace

std::vector<DequantTensor> plan_tensors(const ws::Reader& reader, bool f16) {
  std::vector<DequantTensor> out;
  const bool gguf = reader.format() == ws::Format::Gguf;
  const ws::GgmlDialect dialect = reader.gguf_dialect();
  const uint32_t n = reader.tensor_count();
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const ws::TensorInfo t = reader.tensor(i);
    DequantTensor d;
    d.name.assign(t.name.data ? t.name.data : "", t.name.size);
    for (ws::ShapeIter it = t.shape(); !it.done();) d.shape.push_back(it.next());
    // GGUF lists ne[0], the contiguous dimension, first: row-major order is the reverse.
    if (gguf) std::reverse(d.shape.begin(), d.shape.end());
    d.elements = t.element_count();
    d.stored_bytes = t.byte_size();
    d.data_offset = reader.data_start() + t.begin;
    ws::QuantFormat f;
    bool decodable;
    if (gguf) {
      d.ggml_type = t.type;
      d.stored = ws::ggml_type_info(t.type, dialect).name;
      decodable = ws::quant_format_from_ggml(t.type, dialect, &f);
    } else {
      d.stored = ws::dtype_name(t.dtype());
      decodable = ws::quant_format_from_dtype(t.dtype(), &f);
    }
    if (!decodable) {
      d.skip_reason = no_decoding_reason(d.stored, gguf);
      out.push_back(std::move(d));
      continue;
    }
    // The decoder's own checks, before any byte is read: a kernel this build lacks, or a tensor
    // that is not whole blocks (the reader checks GGUF rows; I2_S's 128-value groups it does not).
    ws::DequantSpec spec;
    spec.format = f;
    spec.elements = d.elements;
    spec.has_global_scale = f == ws::QuantFormat::I2_S;
    ws::Dequantizer probe;
    const ws::Status s = probe.init(spec);
    const ws::QuantFormatInfo info = ws::quant_format_info(f);
    const uint64_t tail = f == ws::QuantFormat::I2_S ? kI2sTail : 0;
    if (s == ws::Status::UnsupportedFormat) {
      d.skip_reason = "this build of weightstream has no kernel for " + d.stored;
    } else if (s != ws::Status::Ok) {
      d.skip_reason = "its " + std::to_string(d.elements) + " values are not whole blocks of " +
                      std::to_string(info.block_elems);
    } else if (probe.input_bytes() + tail != d.stored_bytes) {
      d.skip_reason = "its " + std::to_string(d.stored_bytes) + " stored bytes are not the " +
                      std::to_string(probe.input_bytes() + tail) + " its " + std::to_string(d.elements) +
                      " values take";
    } else if (__builtin_mul_overflow(d.elements, uint64_t(f16 ? 2 : 4), &d.output_bytes)) {
      d.skip_reason = "its values would not fit in a file";
    } else {
      d.format = f;
      d.block_elems = info.block_elems;
      d.block_bytes = info.block_bytes;
    }
    if (!d.format) d.output_bytes = 0;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace wscli

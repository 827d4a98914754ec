// weightstream — bitsandbytes' packed quant state: the JSON bytes of a
// `<module>.weight.quant_state.bitsandbytes__nf4|fp4` tensor (internal).
//
// bitsandbytes (bitsandbytes-foundation/bitsandbytes) functional.py QuantState.as_dict(packed=True)
// writes the quant state's non-tensor items with utils.py pack_dict_to_tensor — json.dumps of
// {"quant_type", "blocksize", "dtype", "shape"} and, with double quantization, {"nested_blocksize",
// "nested_dtype", "nested_offset"}, UTF-8, one U8 element per byte — and QuantState.from_dict reads
// them back (unpack_tensor_to_dict: json.loads), asserting every key is one it knows. transformers
// (integrations/bitsandbytes.py, quantizers/quantizer_bnb_4bit.py) saves and loads through these.
//
// The parser takes the bytes in pieces of any size through the library's JSON lexer (no heap,
// bounded: a key or string value longer than bitsandbytes writes is refused), and checks what
// from_dict and dequantize_4bit need: the keys known, quant_type nf4 or fp4, blocksize a positive
// integer, dtype bfloat16, float16 or float32 (dequantize_4bit's), shape a list of 1 to
// kMaxLogicalRank positive integers, the three nested items all or none, nested_dtype float32,
// nested_offset a finite number. Every refusal is BnbQuantStateInvalid at the offending byte
// (JSON syntax errors at the lexer's error position). Whether a blocksize is one bitsandbytes
// writes, and whether the shape fits the stored bytes, are the convention's checks.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/conventions.h"
#include "weightstream/detail/json_lexer.h"
#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

struct BnbQuantState {
  bool fp4 = false;  // quant_type "fp4", else "nf4"
  uint64_t blocksize = 0;
  DType dtype = DType::BF16;  // the dtype the weight was quantized from (dequantize_4bit's output)
  uint32_t rank = 0;
  uint64_t shape[kMaxLogicalRank] = {};
  bool nested = false;  // nested_blocksize, nested_dtype and nested_offset present
  uint64_t nested_blocksize = 0;
  float nested_offset = 0.0f;  // the JSON decimal (Python's repr of an f32 .item()) as f32
};

class BnbQuantStateParser {
 public:
  BnbQuantStateParser() { reset(); }
  void reset();
  // The next bytes of the JSON. Ok, or the first error (error_pos(): its byte offset in the JSON).
  Status feed(const uint8_t* data, size_t size);
  // After the last byte: the document complete, the keys present (an error at the end is at the
  // offset of the byte after the JSON).
  Status finish();
  const BnbQuantState& state() const { return state_; }
  uint64_t error_pos() const { return error_pos_; }

 private:
  enum Key : uint8_t { kNone, kQuantType, kBlocksize, kDtype, kShape, kNestedBlocksize, kNestedDtype, kNestedOffset };
  Status fail(uint64_t at);
  Status handle(detail::JsonLexer::Token t);
  Status value(detail::JsonLexer::Token t);
  void remember(const uint8_t* p, size_t n);
  bool number_as_f32(float* out) const;

  detail::JsonLexer lexer_;
  BnbQuantState state_;
  Status status_ = Status::Ok;
  uint64_t error_pos_ = 0;
  Key key_ = kNone;
  uint8_t seen_ = 0;  // a bit per Key
  bool in_shape_ = false;
  char text_[24];  // the current key or string value (longer ones are refused)
  uint32_t text_size_ = 0;
  bool text_long_ = false;
  uint8_t recent_[48];  // the last bytes consumed: a number's text ends there when it is lexed
  uint32_t recent_size_ = 0;
};

}  // namespace ws

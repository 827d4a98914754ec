// ws::ModelLoader, second half: the data phase after ModelReady. Seekable sources: each selected
// weight's companions by range into scratch, then its packed bytes in read_size pieces through
// the Dequantizer. Sequential sources (and Validate): every file forward through its Reader; a
// selected weight's companions, and its packed bytes when a companion comes after them, are kept
// in one block per weight until the weight can be decoded. Blocks live in a compacting region
// sized by a dry run over the same stream (sim_sequential), so the arena need is exact.
#include <string.h>

#include "../kernels/gptq_packed.h"  // AWQ's lane order (kAwqReverseOrder), its word reads
#include "data_warnings.h"
#include "model_loader_internal.h"
#include "../conventions/convention_descriptor.h"
#include "weightstream/manifest_blobs.h"
#include "weightstream/ollama_manifest.h"

namespace ws {

namespace {

size_t round8(size_t n) { return (n + 7) & ~size_t(7); }
uint64_t round8_64(uint64_t n) { return (n + 7) & ~uint64_t(7); }

ModelEvent again() {
  ModelEvent e;
  e.type = ModelEventType::Done;
  return e;
}

ModelEvent weight_event(ModelEventType t, uint32_t w) {
  ModelEvent e;
  e.type = t;
  e.weight = w;
  return e;
}

float f32le(const uint8_t* p) {
  float f;
  uint8_t b[4] = {p[0], p[1], p[2], p[3]};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  uint8_t t = b[0]; b[0] = b[3]; b[3] = t; t = b[1]; b[1] = b[2]; b[2] = t;
#endif
  memcpy(&f, b, 4);
  return f;
}

constexpr PieceRole kLoadRoles[4] = {PieceRole::Packed, PieceRole::Scales, PieceRole::Biases, PieceRole::GlobalScale};

}  // namespace

// --- Selection --------------------------------------------------------------------------------

Status ModelLoader::select(uint32_t w) {
  if (phase_ != Phase::Ready || !selected_ || w >= weight_count()) return Status::UsageError;
  if (opt_.mode == ModelLoadMode::Decode && !weight(w).decodable && !opt_.pass_stored) return Status::UnsupportedFormat;
  selected_[w >> 3] = uint8_t(selected_[w >> 3] | (1u << (w & 7)));
  return Status::Ok;
}

void ModelLoader::select_all() {
  if (phase_ != Phase::Ready || !selected_) return;
  for (uint32_t w = 0; w < weight_count(); ++w) select(w);
}

bool ModelLoader::selected(uint32_t w) const { return selected_ && w < weight_count() && (selected_[w >> 3] >> (w & 7)) & 1; }

bool ModelLoader::passes_stored(uint32_t w) const {
  if (opt_.mode != ModelLoadMode::Decode || w >= weight_count()) return false;
  const LogicalWeight& lw = weight(w);
  if (!lw.decodable) return opt_.pass_stored;
  // A format its host decodes, under any convention: the packed piece and its companions, each as
  // stored (UQFF's scalars are the library's: read before ModelReady, never handed out).
  const uint32_t f = uint32_t(lw.format);
  return f < 64 && ((opt_.stored_formats >> f) & 1);
}

bool ModelLoader::stored_for_host(uint32_t w) const {
  return passes_stored(w) && weight(w).decodable;
}

uint64_t ModelLoader::output_bytes(uint32_t w) const {
  if (w >= weight_count()) return 0;
  const LogicalWeight& lw = weight(w);
  uint64_t total = 0;
  if (opt_.mode == ModelLoadMode::Decode) {
    if (passes_stored(w) && !lw.decodable) {
      const TensorRef r = lw.ref(PieceRole::Packed);
      return piece_end(r) - piece_begin(r);
    }
    if (passes_stored(w)) return stored_pieces_bytes(lw);
    if (!lw.decodable) return 0;
    const uint64_t value = out_type_bytes(opt_.out);
    return lw.elements > ~uint64_t(0) / value ? ~uint64_t(0) : lw.elements * value;
  }
  if (opt_.mode != ModelLoadMode::Raw) return 0;
  (void)total;
  return stored_pieces_bytes(lw);
}

uint64_t ModelLoader::stored_pieces_bytes(const LogicalWeight& lw) const {
  uint64_t total = 0;
  for (PieceRole role : kLoadRoles) {
    const TensorRef r = lw.ref(role);
    if (!r.present()) continue;
    const uint64_t n = piece_end(r) - piece_begin(r);
    total = n > ~uint64_t(0) - total ? ~uint64_t(0) : total + n;
  }
  return total;
}

// --- A weight's pieces ------------------------------------------------------------------------

uint32_t ModelLoader::owner_of(uint32_t table, uint32_t index, PieceRole* role) const {
  // GGUF, and tensors as stored: weight = tensor, in table order (a name may repeat across files:
  // UQFF's version tensors, so not by name).
  if (!model_ || opt_.as_stored) {
    *role = PieceRole::Packed;
    return table < table_count_ ? files_[table_files_[table]].first_weight + index : kNoTensor;
  }
  return model_->owner(TensorRef{table, index}, role);
}

ModelLoader::WeightPieces& ModelLoader::cur_pieces() {
  static_assert(sizeof(WeightPieces) <= sizeof cur_pieces_, "cur_pieces_ holds one WeightPieces");
  return *reinterpret_cast<WeightPieces*>(cur_pieces_);
}

void ModelLoader::pieces_of(uint32_t w, WeightPieces* out) const {
  WeightPieces& p = *out;
  // Cleared in place: assigning a WeightPieces() built a 240-byte temporary on the stack, which a
  // microcontroller counts (every member's default is zero).
  static_assert(__is_trivially_copyable(WeightPieces), "cleared with memset");
  memset(static_cast<void*>(&p), 0, sizeof p);
  const LogicalWeight& lw = weight(w);
  // A weight without a decoding goes out as its packed piece (a plain tensor has no other); one
  // its host decodes (stored_formats) with every piece, as Raw mode hands them out.
  const bool stored = passes_stored(w) && !lw.decodable;
  for (PieceRole role : kLoadRoles) {
    const TensorRef r = lw.piece[uint32_t(role)];
    if (!r.present() || (stored && role != PieceRole::Packed)) continue;
    // File order: by table (files are streamed one after another), then by index (tables are in
    // data-offset order; empty tensors share offsets, indices do not).
    uint32_t at = p.n++;
    while (at > 0 && (p.table[at - 1] > r.table || (p.table[at - 1] == r.table && p.index[at - 1] > r.index))) {
      p.role[at] = p.role[at - 1];
      p.table[at] = p.table[at - 1];
      p.index[at] = p.index[at - 1];
      p.begin[at] = p.begin[at - 1];
      p.end[at] = p.end[at - 1];
      --at;
    }
    p.role[at] = role;
    p.table[at] = r.table;
    p.index[at] = r.index;
    p.begin[at] = piece_begin(r);
    p.end[at] = piece_end(r);
  }
  for (uint32_t k = 0; k < p.n; ++k)
    if (p.role[k] == PieceRole::Packed) p.packed = k;
  const uint64_t packed_bytes = p.end[p.packed] - p.begin[p.packed];
  p.i2s = !model_ && lw.decodable && lw.format == QuantFormat::I2_S;
  p.input_bytes = p.i2s ? lw.elements / 4 : packed_bytes;
  // GPTQ's packed words are decoded down the stored columns: the piece is held whole, in both
  // modes (the first logical row needs a word of every stored row).
  p.transposed = opt_.mode == ModelLoadMode::Decode && lw.decodable && lw.gptq_transposed() && !passes_stored(w);
  // A weight resolved as the stream passes waits for its data tensor when that comes after its
  // last piece (bitsandbytes: the quant_state JSON after the packed weight): held whole till then.
  if (check_stream_ && opt_.mode == ModelLoadMode::Decode && lw.decodable && !passes_stored(w) && weight_stream()) {
    const TensorRef r = convention_descriptor(convention_).data_phase->waits_for(*model_, w);
    const uint32_t l = p.n - 1;
    if (r.present() && (r.table > p.table[l] || (r.table == p.table[l] && r.index > p.index[l]))) {
      p.wait = true;
      p.wait_table = r.table;
      p.wait_index = r.index;
    }
  }
  p.packed_held = p.i2s || p.transposed || p.wait || (p.n > 1 && p.role[p.n - 1] != PieceRole::Packed);
  for (uint32_t k = 0; k < p.n; ++k) {
    const uint64_t size = round8_64(p.end[k] - p.begin[k]);
    if (p.wait && k >= p.packed) {  // the packed piece and what follows it: their own block
      p.off[k] = p.packed_block;
      p.packed_block += size;
    } else if (p.role[k] != PieceRole::Packed || p.packed_held) {
      p.off[k] = p.block;
      p.block += size;
    }
    if (p.role[k] != PieceRole::Packed || p.transposed) {
      p.scratch_off[k] = p.companions;
      p.companions += size;
    }
  }
  if (p.i2s) p.companions = 8;  // the scale, read from the tail by range
}

// --- After ModelReady -------------------------------------------------------------------------

ModelEvent ModelLoader::after_ready() {
  switch (opt_.mode) {
    case ModelLoadMode::Headers:
      phase_ = Phase::Done;
      return again();
    case ModelLoadMode::Validate:
      if (streamed_) {
        phase_ = Phase::Done;
        return again();
      }
      phase_ = Phase::Stream;
      cur_ = 0;
      return again();
    case ModelLoadMode::Decode:
    case ModelLoadMode::Raw:
      break;
  }
  if (streamed_) {
    // A sequential model whose convention reads tensor data before ModelReady (UQFF's scalars)
    // resolves only after its last file: its weights' bytes have passed. (bitsandbytes resolves
    // weight by weight as the stream passes: weight_stream().)
    static const char kWhy[] = "a UQFF model is decoded from a source that can seek";
    error_detail_.data = kWhy;
    error_detail_.size = sizeof kWhy - 1;
    return fail(Status::UsageError, 0, kNoFile);
  }
  if (!prepare_scratch()) return fail(error_.code, error_.offset, error_file_);
  cur_ = 0;
  sub_ = 0;
  at_ = 0;
  weight_begun_ = false;
  phase_ = seek_data() ? Phase::Seek : Phase::Stream;
  return again();
}

// --- Progress (bytes_to_read) -----------------------------------------------------------------

// The forward stream's reads from here on: each data file from where its reading stopped (its
// header; a seekable split's kept bytes are read again from there) to its end, which the reader
// reaches at the size the host gave, or else at the end the header implies (Reader::allowed_end;
// GGUF's last padding may be absent from a valid file: see bytes_to_read()). A file whose end
// was seen is read no more.
uint64_t ModelLoader::stream_rest() const {
  uint64_t rest = 0;
  for (uint32_t t = 0; t < table_count_; ++t) {
    const FileSlot& s = files_[table_files_[t]];
    if (s.ended || !s.reader) continue;
    const uint64_t end = s.size_known ? s.size : s.reader->allowed_end();
    if (end > s.pos) rest += end - s.pos;
  }
  return rest;
}

uint64_t ModelLoader::bytes_to_read() const {
  if (!ready_) return 0;
  switch (opt_.mode) {
    case ModelLoadMode::Headers: return 0;
    case ModelLoadMode::Validate: return stream_rest_;
    case ModelLoadMode::Decode:
    case ModelLoadMode::Raw: break;
  }
  if (!seek_data()) return stream_rest_;  // (a sequential UQFF model's: 0, all read already)
  // By range: what step_seek reads for each selected weight.
  const bool decode = opt_.mode == ModelLoadMode::Decode;
  uint64_t n = 0;
  WeightPieces p;  // (not cur_pieces(): the data phase may be using it)
  for (uint32_t w = 0; w < weight_count(); ++w) {
    if (!selected(w)) continue;
    pieces_of(w, &p);
    if (decode && p.i2s) {
      n += 4 + p.input_bytes;  // the scale from the tail, then the codes
      continue;
    }
    for (uint32_t k = 0; k < p.n; ++k) n += p.end[k] - p.begin[k];
  }
  return n;
}

// A dry run of the sequential stream: the most bytes (and blocks) held at once for the selection.
void ModelLoader::sim_sequential(uint64_t* peak, uint32_t* blocks) const {
  uint64_t live = 0;
  uint32_t count = 0;
  *peak = 0;
  *blocks = 0;
  const bool waits = check_stream_ && weight_stream();  // a weight may end at a data tensor
  for (uint32_t t = 0; t < table_count_; ++t) {
    const uint32_t n = table(t).count();
    for (uint32_t i = 0; i < n; ++i) {
      PieceRole role;
      const uint32_t w = owner_of(t, i, &role);
      const bool scalar = uint32_t(role) >= kFirstScalarRole;
      if (w == kNoTensor || !selected(w) || (scalar && !waits)) continue;
      WeightPieces& p = const_cast<ModelLoader*>(this)->cur_pieces();
      pieces_of(w, &p);
      if (scalar) {  // the data tensor a held weight waits for: it ends there, both its blocks
        if (p.wait && p.wait_table == t && p.wait_index == i) {
          live -= p.block + p.packed_block;
          count -= (p.block > 0 ? 1 : 0) + 1;
        }
        continue;
      }
      const int k = p.find(t, i);
      if (k < 0) continue;
      if (uint32_t(k) == p.packed && p.wait) {  // its packed piece's own block, from its arrival
        live += p.packed_block;
        ++count;
        if (live > *peak) *peak = live;
        if (count > *blocks) *blocks = count;
      }
      if (p.block == 0) continue;
      if (k == 0) {
        live += p.block;
        ++count;
        if (live > *peak) *peak = live;
        if (count > *blocks) *blocks = count;
      }
      if (uint32_t(k) == p.last() && !p.wait) {
        live -= p.block;
        --count;
      }
    }
  }
}

// Scratch for the data phase, all of it taken now (so a load that starts also finishes): the
// output piece, and the companions of one weight (seekable) or the held blocks (sequential).
bool ModelLoader::prepare_scratch() {
  const bool decode = opt_.mode == ModelLoadMode::Decode;
  const uint32_t n = weight_count();
  size_t out_need = 0, scratch_need = 0, held_need = 0, blocks_need = 0, map_need = 0;
  if (decode && !opt_.out_buffer) out_need = round8(opt_.out_size) + 16;
  uint64_t peak = 0;
  uint32_t blocks = 0;
  if (decode && seek_data()) {
    uint64_t most = 0;
    for (uint32_t w = 0; w < n; ++w) {
      if (!selected(w)) continue;
      pieces_of(w, &cur_pieces());
      const uint64_t c = cur_pieces().companions;
      if (c > most) most = c;
    }
    if (most > (~size_t(0) >> 2)) {
      fail_arena(~size_t(0) >> 2, kNoFile);
      return false;
    }
    scratch_need = size_t(most) + 8;
  } else if (decode) {
    sim_sequential(&peak, &blocks);
    if (peak > (~size_t(0) >> 2)) {
      fail_arena(~size_t(0) >> 2, kNoFile);
      return false;
    }
    held_need = size_t(peak) + 8;
    blocks_need = sizeof(HeldBlock) * (blocks + 1) + 8;
    // Weight w's block is key w; a weight resolved as the stream passes has key n + w too (its
    // packed_block: WeightPieces::wait).
    map_need = sizeof(uint32_t) * (held_keys() + 1) + 8;
  }
  // GptqPacked's transposition buffer, when a selected weight decodes through it.
  size_t tr_need = 0;
  if (decode)
    for (uint32_t w = 0; w < n && !tr_need; ++w)
      if (selected(w) && weight(w).decodable && weight(w).gptq_transposed() && !passes_stored(w))
        tr_need = kTransposeBytes + 16;
  const size_t need = out_need + scratch_need + held_need + blocks_need + map_need + tr_need;
  if (need > size_t(hi_ - lo_)) {
    fail_arena(need, kNoFile);
    return false;
  }
  if (decode) {
    if (opt_.out_buffer) {
      out_ = static_cast<uint8_t*>(opt_.out_buffer);
      out_cap_ = opt_.out_buffer_size;
    } else {
      out_ = static_cast<uint8_t*>(take_low(opt_.out_size, 16));
      out_cap_ = opt_.out_size;
    }
  }
  if (tr_need) tr_buf_ = static_cast<uint8_t*>(take_low(kTransposeBytes, 16));
  if (scratch_need) {
    scratch_ = static_cast<uint8_t*>(take_low(scratch_need, 8));
    scratch_cap_ = scratch_need;
  }
  if (decode && !seek_data()) {
    uint8_t* bytes = static_cast<uint8_t*>(take_low(held_need, 8));
    HeldBlock* list = static_cast<HeldBlock*>(take_low(blocks_need, 8));
    uint32_t* block_of = static_cast<uint32_t*>(take_low(map_need, 8));
    memset(block_of, 0, sizeof(uint32_t) * (held_keys() + 1));
    held().init(bytes, held_need, list, blocks + 1, block_of);
  }
  return true;
}

// --- Decoding ---------------------------------------------------------------------------------

// Starts the decoder on weight w: companions from its held block (sequential) or the scratch
// (seekable). Returns WeightBegin, or the error of a spec the decoder refuses.
// `p` is the pieces_of(w) the caller computed (in cur_pieces_: never a copy on the stack).
ModelEvent ModelLoader::start_decode(uint32_t w, bool from_held, const WeightPieces& p) {
  const LogicalWeight& lw = weight(w);
  // A weight of one piece that streams through has no block (and needs none).
  DequantSpec spec = lw.spec();
  spec.out = opt_.out;
  spec.impl = opt_.kernel;
  spec.validate = opt_.validate_blocks;
  spec.input_offset = p.begin[p.packed];
  for (uint32_t k = 0; k < p.n; ++k) {
    const uint8_t* at = from_held ? held_piece(w, p, k) : scratch_ + p.scratch_off[k];
    switch (p.role[k]) {
      case PieceRole::Scales:
        spec.scales = at;
        spec.scales_offset = p.begin[k];
        break;
      case PieceRole::Biases:
        if (lw.format == QuantFormat::Bnb4) {  // nested_absmax (bnb_convention.cpp)
          spec.nested_absmax = at;
          spec.nested_absmax_offset = p.begin[k];
          break;
        }
        spec.biases = at;
        if (lw.format == QuantFormat::GptqPacked) spec.gptq_zeros = at;  // qzeros
        break;
      case PieceRole::GlobalScale:
        if (lw.format == QuantFormat::GptqPacked || lw.format == QuantFormat::CtPacked) {  // g_idx, weight_g_idx
          spec.gptq_g_idx = at;
          spec.gptq_g_idx_offset = p.begin[k];
          break;
        }
        if (lw.format == QuantFormat::Bnb4) {  // nested_quant_map
          spec.nested_code = at;
          spec.nested_code_offset = p.begin[k];
          break;
        }
        spec.has_global_scale = true;
        spec.global_scale = f32le(at);
        spec.global_scale_offset = p.begin[k];
        break;
      default: break;
    }
  }
  if (p.i2s) {
    spec.has_global_scale = true;
    spec.global_scale = f32le(from_held ? held_piece(w, p, p.packed) + p.input_bytes : scratch_);
  }
  if (dq_.init(spec) != Status::Ok) {
    Error e = dq_.error();
    e.tensor_name = lw.name.data;
    e.tensor_name_size = lw.name.size;
    return fail_error(e, weight_file(w));
  }
  decoding_ = true;
  dec_weight_ = w;
  dec_out_pos_ = 0;
  dec_input_left_ = p.input_bytes;
  dec_src_ = nullptr;
  dec_left_ = 0;
  return weight_event(ModelEventType::WeightBegin, w);
}

// GptqPacked: the decoder's input is the stored [rows, cols] words read down each column (a
// logical row); they are gathered from the held piece into tr_buf_, kTransposeBytes at a time.
// AWQ (LogicalWeight::awq_packed; awq_convention.cpp): the stored words are [in, out / 8], each
// holding 8 outputs of one input in AWQ's interleave; a logical row's word (8 inputs of one
// output, low nibble first) is gathered a nibble from each of 8 stored rows.
void ModelLoader::transpose_begin(uint32_t w, const uint8_t* base) {
  const LogicalWeight& lw = weight(w);
  tr_base_ = base;
  tr_awq_ = lw.awq_packed;
  // tr_rows_: the words of a logical row; tr_cols_: the logical rows (outputs).
  tr_cols_ = lw.shape[0];
  tr_rows_ = lw.params.bits ? lw.shape[1] * lw.params.bits / 32 : 0;
  tr_next_ = 0;
  dec_src_ = nullptr;
  dec_left_ = 0;
}

bool ModelLoader::transpose_refill() {
  if (!tr_base_ || dec_left_ != 0 || !tr_buf_) return dec_left_ != 0;
  const uint64_t total = tr_rows_ * tr_cols_;
  if (tr_next_ >= total) {
    tr_base_ = nullptr;
    return false;
  }
  uint64_t n = total - tr_next_;
  if (n > kTransposeBytes / 4) n = kTransposeBytes / 4;
  uint64_t col = tr_next_ / tr_rows_, row = tr_next_ % tr_rows_;
  for (uint64_t k = 0; k < n; ++k) {
    if (tr_awq_) {
      // col: the output o; row: its inputs 8 * row .. 8 * row + 7. The code of (input i, output
      // o) is lane AWQ_REVERSE_ORDER[o % 8] of stored word [i][o / 8] (AutoAWQ
      // awq/utils/packing_utils.py unpack_awq + reverse_awq_order).
      const uint32_t shift = 4u * kernels::kAwqReverseOrder[col % 8];
      const uint64_t stride = tr_cols_ / 8;  // words of a stored row
      const uint8_t* at = tr_base_ + 4 * (row * 8 * stride + col / 8);
      uint32_t word = 0;
      for (uint32_t j = 0; j < 8; ++j, at += 4 * stride) word |= ((kernels::gptq_le32(at) >> shift) & 0xFu) << (4 * j);
      memcpy(tr_buf_ + 4 * k, &word, 4);
    } else {
      memcpy(tr_buf_ + 4 * k, tr_base_ + 4 * (row * tr_cols_ + col), 4);
    }
    if (++row == tr_rows_) {
      row = 0;
      ++col;
    }
  }
  tr_next_ += n;
  dec_src_ = tr_buf_;
  dec_left_ = size_t(4 * n);
  return true;
}

// One decoder call over the bytes at hand: a WeightData piece, or nothing yet (a partial block).
bool ModelLoader::decode_step(ModelEvent* out) {
  const size_t n = dec_left_ < dec_input_left_ ? dec_left_ : size_t(dec_input_left_);
  if (n == 0) {
    dec_left_ = 0;  // bytes past what the decoder takes (I2_S's tail)
    return false;
  }
  size_t used = 0, wrote = 0;
  if (dq_.decode(dec_src_, n, &used, out_, out_cap_, &wrote) != Status::Ok) {
    Error e = dq_.error();
    const LogicalWeight& lw = weight(dec_weight_);
    e.tensor_name = lw.name.data;
    e.tensor_name_size = lw.name.size;
    *out = fail_error(e, weight_file(dec_weight_));
    return true;
  }
  if (used == 0 && wrote == 0) {  // the decoder always progresses; never loop
    *out = fail(Status::UsageError, dec_out_pos_, weight_file(dec_weight_));
    return true;
  }
  dec_src_ += used;
  dec_left_ -= used;
  dec_input_left_ -= used;
  if (wrote == 0) return false;
  out->type = ModelEventType::WeightData;
  out->weight = dec_weight_;
  out->offset = dec_out_pos_;
  out->data = out_;
  out->size = wrote;
  dec_out_pos_ += wrote;
  return true;
}

ModelEvent ModelLoader::finish_weight(uint32_t w) {
  if (opt_.mode == ModelLoadMode::Decode) {
    const LogicalWeight& lw = weight(w);
    const uint64_t want = lw.elements * (out_type_bytes(opt_.out));
    if (!dq_.done() || dec_out_pos_ != want || dec_input_left_ != 0) {
      fail(Status::InvalidQuantParams, piece_begin(lw.ref(PieceRole::Packed)), weight_file(w));
      error_.tensor_name = lw.name.data;
      error_.tensor_name_size = lw.name.size;
      return fail(error_.code, error_.offset, error_file_);
    }
    decoding_ = false;
  }
  if (held().holds(w)) held().release(w);
  if (held_keys() > weight_count() && held().holds(weight_count() + w)) held().release(weight_count() + w);  // packed_block
  return weight_event(ModelEventType::WeightEnd, w);
}

// --- Seekable: weight after weight, by range --------------------------------------------------

ModelEvent ModelLoader::step_seek() {
  for (;;) {
    if (decoding_ && (dec_left_ > 0 || transpose_refill())) {
      ModelEvent e;
      if (decode_step(&e)) return e;
      continue;
    }
    if (cur_ >= weight_count()) {
      phase_ = Phase::Done;
      return again();
    }
    if (!selected(cur_)) {
      ++cur_;
      continue;
    }
    WeightPieces& p = cur_pieces();
    pieces_of(cur_, &p);
    // Raw mode, and a weight that goes out as stored: its pieces as they are read.
    const bool raw = opt_.mode == ModelLoadMode::Raw || passes_stored(cur_);
    // The schedule: companions in file order, then the packed piece (decode: only the bytes the
    // decoder takes; I2_S: its scale from the tail first).
    const uint32_t extra = !raw && p.i2s ? 1 : 0;
    const uint32_t count = p.n + extra;
    // GptqPacked: every piece, the packed one too, is read into the scratch first; then the
    // decoder starts on the held words (transpose_refill feeds it above).
    const bool transposed = !raw && p.transposed;
    if (sub_ >= count && transposed && !weight_begun_) {
      weight_begun_ = true;
      ModelEvent e = start_decode(cur_, false, p);
      if (e.type != ModelEventType::Error) transpose_begin(cur_, scratch_ + p.scratch_off[p.packed]);
      return e;
    }
    if (sub_ >= count) {
      const uint32_t w = cur_;
      ++cur_;
      sub_ = 0;
      at_ = 0;
      weight_begun_ = false;
      return raw ? weight_event(ModelEventType::WeightEnd, w) : finish_weight(w);
    }
    uint32_t k;             // piece index
    uint64_t begin, end;    // the range
    uint64_t dest = 0;      // decode: where a companion goes in the scratch
    bool packed = false, scale_tail = false;
    if (extra && sub_ == 0) {
      k = p.packed;
      begin = p.begin[k] + p.input_bytes;
      end = begin + 4;
      scale_tail = true;
    } else {
      const uint32_t s = sub_ - extra;
      // s-th of: the companions in file order, then the packed piece.
      k = p.packed;
      uint32_t seen = 0;
      for (uint32_t j = 0; j < p.n; ++j) {
        if (j == p.packed) continue;
        if (seen++ == s) {
          k = j;
          break;
        }
      }
      packed = k == p.packed;
      begin = p.begin[k];
      end = packed && !raw ? begin + p.input_bytes : p.end[k];
      dest = p.scratch_off[k];
    }
    if (!weight_begun_) {
      if (raw) {
        weight_begun_ = true;
        return weight_event(ModelEventType::WeightBegin, cur_);
      }
      if (packed && !transposed) {
        weight_begun_ = true;
        return start_decode(cur_, false, p);
      }
    }
    const uint32_t f = table_file(p.table[k]);
    if (at_ < begin) at_ = begin;
    if (answer_ == Answer::Data) {
      answer_ = Answer::None;
      const uint64_t at = at_;
      at_ += answer_size_;
      if (warn_scans_ && !scale_tail) {  // a convention's warnings about this piece's data
        if (at == p.begin[k]) warn_begin(cur_, p.role[k], p.table[k], p.index[k]);
        warn_feed(p.table[k], p.index[k], at, answer_data_, answer_size_);
      }
      if (raw) {
        ModelEvent e;
        e.type = ModelEventType::WeightData;
        e.weight = cur_;
        e.role = p.role[k];
        e.offset = at - p.begin[k];
        e.data = answer_data_;
        e.size = answer_size_;
        return e;
      }
      if (packed && !transposed) {
        dec_src_ = answer_data_;
        dec_left_ = answer_size_;
      } else {
        memcpy(scratch_ + (scale_tail ? 0 : dest) + (at - begin), answer_data_, answer_size_);
      }
      continue;
    }
    // The file is shorter than its header says (a host that gave no size), or gone.
    if (answer_ == Answer::Eof || answer_ == Answer::Missing) return fail_piece_read(f, kNoTensor, weight(cur_).name);
    if (at_ >= end) {
      ++sub_;
      at_ = 0;
      if (warn_scans_ && !scale_tail && warn_end(p.table[k], p.index[k])) return warning_event();
      continue;
    }
    return request(f, at_, end - at_);
  }
}

// --- The forward stream -----------------------------------------------------------------------

// The deepest path of a sequential decode runs through here (step_stream, route, the decoder): a
// microcontroller counts its stack, so the rare paths are functions of their own (file_end,
// fail_reader) and one ModelEvent serves every return.
ModelEvent ModelLoader::step_stream() {
  ModelEvent out;
  for (;;) {
    if (warn_pending_) return warning_event();  // a piece route() scanned ended with instances
    if (start_weight_ != kNoTensor) {
      // route() asked for the decoder on this weight (its pieces are cur_pieces()): started here,
      // so the decoder's depth adds to this frame only.
      const uint32_t w = start_weight_;
      start_weight_ = kNoTensor;
      if (check_stream_ && !resolve_streamed(w, &out)) return out;
      out = start_decode(w, true, cur_pieces());
      if (out.type != ModelEventType::Error && start_held_) {
        // Its kept packed bytes are decoded now, then the weight ends.
        const WeightPieces& p = cur_pieces();
        const uint8_t* packed = held_piece(w, p, p.packed);
        if (p.transposed) {
          transpose_begin(w, packed);
        } else {
          dec_src_ = packed;
          dec_left_ = size_t(cur_pieces().input_bytes);
        }
        pending_end_ = true;
      }
      return out;
    }
    if (decoding_ && (dec_left_ > 0 || transpose_refill())) {
      if (decode_step(&out)) return out;
      continue;
    }
    if (pending_end_) {
      pending_end_ = false;
      return finish_weight(dec_weight_);
    }
    if (cur_ >= table_count_) return stream_end();
    const uint32_t f = table_files_[cur_];
    FileSlot& s = files_[f];
    Reader& r = *s.reader;
    if (answer_ == Answer::Data) {
      answer_ = Answer::None;
      r.feed(answer_data_, answer_size_);
      s.pos += answer_size_;
    } else if (answer_ == Answer::Eof) {
      answer_ = Answer::None;
      r.finish();
    } else if (answer_ == Answer::Missing) {
      answer_ = Answer::None;
      return fail(Status::FileMissing, s.pos, f);
    }
    const Event e = r.next();
    switch (e.type) {
      case EventType::NeedInput:
        if (s.tail_size) {  // a sequential split's bytes past its header, kept (model_split.cpp)
          r.feed(s.tail, s.tail_size);
          s.tail_size = 0;
          continue;
        }
        if (s.ended) {
          r.finish();
          continue;
        }
        return request(f, s.pos, opt_.read_size);
      case EventType::TensorEnd:
        // A verified file's last tensor is complete only with the file's digest: its end waits
        // for the last byte (GGUF's padding may follow) and the check (file_end).
        if (s.digest && e.tensor + 1 == r.tensor_count() && s.digest->state != DigestState::Verified) {
          if (s.digest->state == DigestState::Mismatch) return fail_digest(f);
          deferred_end_ = e;
          have_deferred_end_ = true;
          continue;
        }
        [[fallthrough]];
      case EventType::TensorBegin:
      case EventType::TensorBytes:
        if (route(cur_, e, &out)) return out;
        continue;
      case EventType::End:
        switch (file_end(f, &out)) {
          case EndStep::Return: return out;
          case EndStep::RouteDeferred:  // the file is what it should be: its last tensor is complete
            if (route(cur_, deferred_end_, &out)) return out;
            continue;  // (the reader says End again)
          default: continue;
        }
      case EventType::Error:
        return fail_reader(f);
      default:
        continue;
    }
  }
}

// A data file's End in the stream: a blob's size when the host could not say it, a verified file's
// digest (every byte has passed), then its deferred last tensor end, or the next file.
ModelLoader::EndStep ModelLoader::file_end(uint32_t f, ModelEvent* out) {
  FileSlot& s = files_[f];
  if (s.kind == ModelFileKind::Blob && !s.size_known) {
    Error err;
    if (check_manifest_blob_size(*manifest_, s.layer, s.pos, &err) != Status::Ok) {
      *out = fail_error(err, f);
      return EndStep::Return;
    }
  }
  if (s.digest) {
    if (s.digest->state == DigestState::Pending) digest_ops_->end(*this, f, s.reader->position());
    if (s.digest->state != DigestState::Verified) {
      *out = fail_digest(f);
      return EndStep::Return;
    }
    if (have_deferred_end_) {
      have_deferred_end_ = false;
      return EndStep::RouteDeferred;
    }
  }
  ++cur_;
  return EndStep::Next;
}

// A reader's error in the stream, naming its tensor (the table's name when the reader had none).
ModelEvent ModelLoader::fail_reader(uint32_t f) {
  const Reader& r = *files_[f].reader;
  Error err = r.error();
  if (!err.tensor_name && err.tensor < r.tensor_count()) {
    const StrView name = r.tensor(err.tensor).name;
    err.tensor_name = name.data;
    err.tensor_name_size = name.size;
  }
  return fail_error(err, f);
}

// One tensor event of table t: a tensor the convention's data phase wants (UQFF's scalars), or a
// selected weight's piece.
bool ModelLoader::route(uint32_t t, const Event& e, ModelEvent* out) {
  if (data_stream_) {
    const ConventionDataPhase& data = *convention_descriptor(convention_).data_phase;
    if (e.type == EventType::TensorBytes && data.wants(*model_, t, e.tensor) &&
        data.feed(*model_, t, e.tensor, e.offset, e.data, e.size) != Status::Ok) {
      convention_error_ = true;
      *out = fail_error(model_->error(), table_file(t));
      return true;
    }
    return false;
  }
  if (check_stream_ && e.type == EventType::TensorBytes) {  // a check-only data phase, as bytes pass
    const ConventionDataPhase& data = *convention_descriptor(convention_).data_phase;
    if (data.wants(*model_, t, e.tensor) && data.feed(*model_, t, e.tensor, e.offset, e.data, e.size) != Status::Ok) {
      convention_error_ = true;
      *out = fail_error(model_->error(), table_file(t));
      return true;
    }
  }
  // A convention's warnings about data (GPTQ v1's zero spill), as the bytes pass; handed out
  // before the stream reads on (step_stream), after any event this one gives.
  if (warn_scans_ && warn_stream(t, e)) warn_pending_ = true;
  if (opt_.mode != ModelLoadMode::Decode && opt_.mode != ModelLoadMode::Raw) return false;
  PieceRole role;
  const uint32_t w = owner_of(t, e.tensor, &role);
  if (w == kNoTensor || !selected(w)) return false;
  WeightPieces& p = cur_pieces();
  if (uint32_t(role) >= kFirstScalarRole) {
    // The end of the data tensor a held weight waits for (pieces_of: p.wait): decode its kept
    // bytes now, then end the weight (step_stream resolves it first).
    if (e.type != EventType::TensorEnd || !check_stream_ || !weight_stream()) return false;
    pieces_of(w, &p);
    if (p.wait && p.wait_table == t && p.wait_index == e.tensor) {
      start_weight_ = w;
      start_held_ = true;
    }
    return false;
  }
  pieces_of(w, &p);
  const int found = p.find(t, e.tensor);
  if (found < 0) return false;
  const uint32_t k = uint32_t(found);
  if (opt_.mode == ModelLoadMode::Raw || passes_stored(w)) {
    // Pieces go out as they pass: the weight begins with its first piece in file order and ends
    // with its last.
    switch (e.type) {
      case EventType::TensorBegin:
        if (k != 0) return false;
        *out = weight_event(ModelEventType::WeightBegin, w);
        return true;
      case EventType::TensorBytes:
        out->type = ModelEventType::WeightData;
        out->weight = w;
        out->role = p.role[k];
        out->offset = e.offset - p.begin[k];
        out->data = e.data;
        out->size = e.size;
        return true;
      default:
        if (k != p.last()) return false;
        *out = weight_event(ModelEventType::WeightEnd, w);
        return true;
    }
  }
  const bool streams = k == p.packed && !p.packed_held;
  switch (e.type) {
    case EventType::TensorBegin:
      if ((k == 0 && p.block > 0 && !held().hold(w, p.block)) ||
          (k == p.packed && p.wait && !held().hold(weight_count() + w, p.packed_block))) {
        *out = fail(Status::UsageError, e.offset, table_file(t));  // the dry run sized the region
        return true;
      }
      if (!streams) return false;
      start_weight_ = w;  // step_stream starts the decoder (not from this frame: see there)
      start_held_ = false;
      return false;
    case EventType::TensorBytes:
      if (streams) {  // decoded by step_stream's next turn (not from this frame)
        dec_src_ = e.data;
        dec_left_ = e.size;
        return false;
      }
      memcpy(held_piece(w, p, k) + (e.offset - p.begin[k]), e.data, e.size);
      return false;
    default:  // TensorEnd
      if (streams) {
        *out = finish_weight(w);
        return true;
      }
      if (k != p.last() || p.wait) return false;
      // Its last piece is in: decode the kept packed bytes, then end the weight (step_stream).
      start_weight_ = w;
      start_held_ = true;
      return false;
  }
}

bool ModelLoader::weight_stream() const {
  const ConventionDataPhase* d = model_ && !opt_.as_stored ? convention_descriptor(convention_).data_phase : nullptr;
  return d && d->waits_for && d->resolve_weight && !opt_.seekable &&
         (opt_.mode == ModelLoadMode::Decode || opt_.mode == ModelLoadMode::Raw);
}

bool ModelLoader::resolve_streamed(uint32_t w, ModelEvent* out) {
  if (!weight_stream() || convention_descriptor(convention_).data_phase->resolve_weight(*model_, w) == Status::Ok)
    return true;
  const uint32_t t = model_->error_table();
  convention_error_ = true;
  error_detail_ = model_->error_detail();
  *out = fail_error(model_->error(), t < table_count_ ? table_files_[t] : kNoFile);
  return false;
}

ModelEvent ModelLoader::stream_end() {
  streamed_ = true;
  if (data_stream_) {
    data_stream_ = false;
    return resolve_convention_data();
  }
  if (check_stream_) {
    check_stream_ = false;
    if (convention_descriptor(convention_).data_phase->resolve(*model_) != Status::Ok) {
      const uint32_t t = model_->error_table();
      convention_error_ = true;
      error_detail_ = model_->error_detail();
      return fail_error(model_->error(), t < table_count_ ? table_files_[t] : kNoFile);
    }
  }
  phase_ = Phase::Done;
  return again();
}

// --- The held region (held_region.cpp), in the loader's opaque storage ---------------------------

size_t ModelLoader::held_keys() const { return size_t(weight_count()) * (weight_stream() ? 2 : 1); }

uint8_t* ModelLoader::held_piece(uint32_t w, const WeightPieces& p, uint32_t k) {
  const uint32_t key = p.wait && k >= p.packed ? weight_count() + w : w;
  return held().holds(key) ? held().of(key) + p.off[k] : nullptr;
}

HeldRegion& ModelLoader::held() {
  static_assert(sizeof(HeldRegion) <= sizeof held_storage_ && alignof(HeldRegion) <= 8,
                "ModelLoader::held_storage_ must hold a HeldRegion");
  return *reinterpret_cast<HeldRegion*>(held_storage_);
}
const HeldRegion& ModelLoader::held() const { return *reinterpret_cast<const HeldRegion*>(held_storage_); }

}  // namespace ws

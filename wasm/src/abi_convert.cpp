// weightstream wasm — convert (issue #29) behind a handle: ws::ConvertPlan of a loaded model and the
// ws::SafetensorsWriter of the output file being written, so the JavaScript package writes the
// same files as the CLI's `convert` (tools/cli/model_convert.cpp) from the same library rules:
// which weights are decoded or copied, the output dtypes and sizes, the shards and their names,
// __metadata__, the index and the config.json edit. JS moves the bytes to its sinks.
//
// The plan lives in an arena JS allocates (ws_alloc): ws_convert_build answers ArenaExhausted with
// ws_convert_arena_needed, and JS builds again with that size, as with every arena here. The
// handle itself holds only the plan object, one writer and the item words.
#include <stdlib.h>
#include <string.h>

#include <new>

#include "abi.h"
#include "weightstream/conventions.h"
#include "weightstream/convert_plan.h"
#include "weightstream/model_loader.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/sha256.h"

using wsabi::ptr32;
using wsabi::put_u64;

struct WsConvert {
  ws::ConvertPlan plan;
  ws::SafetensorsWriter writer;  // the output file being written (ws_convert_open)
  // The digest of a file written or read back (resume: `.<name>.sha256`, as the CLI records it).
  ws::Sha256 sha;
  char hex[ws::kSha256HexChars + 1];
  uint32_t item[16];
};

namespace {

// The caller's filter: one byte per loader weight (nonzero: take it). ConvertPlan::build asks by
// name, in weight order (twice: it counts, then fills); the cursor follows that order and falls
// back to a scan when a name is not the one due, so any order gives the right answer.
struct FilterBits {
  const ws::ModelLoader* loader;
  const uint8_t* bits;
  uint32_t cursor;
};

bool filter_bits(void* ctx, const char* name, size_t n) {
  FilterBits& f = *static_cast<FilterBits*>(ctx);
  const ws::ModelLoader& L = *f.loader;
  const uint32_t W = L.weight_count();
  if (W == 0) return false;
  if (f.cursor >= W) f.cursor = 0;
  if (L.weight(f.cursor).name.data != name) {
    for (uint32_t i = 0; i < W; ++i) {
      const ws::StrView w = L.weight(i).name;
      if (w.data == name || (w.size == n && memcmp(w.data, name, n) == 0)) {
        f.cursor = i;
        break;
      }
    }
  }
  return f.bits[f.cursor++] != 0;
}

// Copies a sink's bytes into [out, out + cap) and counts them all (a first call with cap 0 sizes).
struct BufferSink {
  uint8_t* out;
  size_t cap;
  size_t total;
};

bool buffer_sink(void* ctx, const uint8_t* data, size_t n) {
  BufferSink& s = *static_cast<BufferSink*>(ctx);
  if (s.total < s.cap) {
    const size_t k = n < s.cap - s.total ? n : s.cap - s.total;
    memcpy(s.out + s.total, data, k);
  }
  s.total += n;
  return true;
}

}  // namespace

WS_EXPORT(ws_convert_create) WsConvert* ws_convert_create() {
  void* mem = malloc(sizeof(WsConvert));
  if (!mem) return nullptr;
  WsConvert* c = new (mem) WsConvert();
  memset(c->item, 0, sizeof c->item);
  return c;
}

WS_EXPORT(ws_convert_destroy) void ws_convert_destroy(WsConvert* c) {
  if (!c) return;
  c->~WsConvert();
  free(c);
}

// The item words the calls below answer in (valid until the next call on the handle).
WS_EXPORT(ws_convert_item) uint32_t* ws_convert_item(WsConvert* c) { return c->item; }

// The conversion's SHA-256 (resuming: a file's digest is recorded when it is finished, and an
// earlier run's file is kept when its bytes still have it): restart, add `n` bytes at `data`, and
// the digest as 64 lowercase hex digits (a pointer to them; the hasher restarts).
WS_EXPORT(ws_convert_sha256_reset) void ws_convert_sha256_reset(WsConvert* c) { c->sha.reset(); }
WS_EXPORT(ws_convert_sha256_update) void ws_convert_sha256_update(WsConvert* c, const uint8_t* data, uint32_t n) {
  c->sha.update(data, n);
}
WS_EXPORT(ws_convert_sha256_hex) const char* ws_convert_sha256_hex(WsConvert* c) {
  uint8_t digest[ws::kSha256Bytes];
  c->sha.finish(digest);
  ws::sha256_to_hex(digest, c->hex);
  c->sha.reset();
  return c->hex;
}

// ws::parse_byte_size of the `n` bytes at `text` (maxShardSize: "5GB", "2GiB", ...) into out[0]
// (low) and out[1] (high); 0 when they are no byte count.
WS_EXPORT(ws_parse_byte_size) uint32_t ws_parse_byte_size(const char* text, uint32_t n, uint32_t* out) {
  uint64_t v = 0;
  if (!ws::parse_byte_size(text, n, &v)) return 0;
  put_u64(out, v);
  return 1;
}

// ModelLoaderOptions::stored_formats for `keep_dtypes` (ws::convert_stored_formats) into item
// words 0 (low) and 1 (high): what the loader must hand out stored for the plan's copies.
WS_EXPORT(ws_convert_stored_formats) uint32_t* ws_convert_stored_formats(WsConvert* c, uint32_t keep_dtypes) {
  put_u64(c->item, ws::convert_stored_formats(keep_dtypes));
  return c->item;
}

// The plan of loader `h` (at ModelReady or later). Options (words): 0 to (ws::OutType), 1 keep_dtypes
// (a bit per DType), 2-3 max_shard_size (low, high; 0: one file), 4 filter (a byte per loader
// weight; 0: every weight). The arena: 8-byte aligned, outliving the plan, as is the loader.
WS_EXPORT(ws_convert_build) uint32_t ws_convert_build(WsConvert* c, WsLoader* h, const uint32_t* o, void* arena,
                                                      uint32_t arena_size) {
  ws::ConvertOptions opt;
  opt.to = static_cast<ws::OutType>(o[0]);
  opt.keep_dtypes = o[1];
  opt.max_shard_size = uint64_t(o[2]) | (uint64_t(o[3]) << 32);
  const ws::ModelLoader& L = wsabi::loader_of(h);
  FilterBits bits{&L, reinterpret_cast<const uint8_t*>(uintptr_t(o[4])), 0};
  return static_cast<uint32_t>(c->plan.build(L, opt, o[4] ? filter_bits : nullptr, &bits, arena, arena_size));
}

WS_EXPORT(ws_convert_arena_needed) uint32_t ws_convert_arena_needed(WsConvert* c) {
  const size_t n = c->plan.arena_needed();
  return n > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(n);
}

// The plan's figures into item words: 0 entries, 1 output files, 2 weights skipped (no float
// decoding and no safetensors dtype), 3-4 converted_from (ptr, length), 5-6 total output tensor
// bytes, 7 the file whose table failed (after an error), 8 metadata entries.
WS_EXPORT(ws_convert_facts) uint32_t* ws_convert_facts(WsConvert* c) {
  const ws::ConvertPlan& p = c->plan;
  uint32_t* w = c->item;
  w[0] = p.entry_count();
  w[1] = p.shard_count();
  w[2] = p.skipped_count();
  w[3] = ptr32(p.converted_from());
  w[4] = static_cast<uint32_t>(strlen(p.converted_from()));
  put_u64(w + 5, p.total_size());
  w[7] = p.failed_shard();
  w[8] = p.metadata_count();
  w[9] = p.writes_config() ? 1 : 0;
  return w;
}

// Entry k into item words: 0 loader weight, 1 output file, 2 row in it, 3 action (ConvertAction),
// 4 output dtype (DType), 5-6 output bytes.
WS_EXPORT(ws_convert_entry) uint32_t* ws_convert_entry(WsConvert* c, uint32_t k) {
  const ws::ConvertEntry& e = c->plan.entry(k);
  uint32_t* w = c->item;
  w[0] = e.weight;
  w[1] = e.shard;
  w[2] = e.row;
  w[3] = static_cast<uint32_t>(e.decision.action);
  w[4] = static_cast<uint32_t>(e.decision.dtype);
  put_u64(w + 5, e.decision.bytes);
  return w;
}

// The entry of loader weight `weight` (0xFFFFFFFF: not converted).
WS_EXPORT(ws_convert_entry_of) uint32_t ws_convert_entry_of(WsConvert* c, uint32_t weight) {
  return c->plan.entry_of_weight(weight);
}

// Loader weight i's name into item words 0 (ptr), 1 (length): what a filter sees, without the
// load plan ws_loader_weight computes.
WS_EXPORT(ws_convert_weight_name) uint32_t* ws_convert_weight_name(WsConvert* c, WsLoader* h, uint32_t i) {
  const ws::StrView n = wsabi::loader_of(h).weight(i).name;
  c->item[0] = ptr32(n.data);
  c->item[1] = static_cast<uint32_t>(n.size);
  return c->item;
}

// The loader weight of skipped weight i.
WS_EXPORT(ws_convert_skipped) uint32_t ws_convert_skipped(WsConvert* c, uint32_t i) { return c->plan.skipped(i); }

// Output file s into item words: 0-1 name (ptr, length), 2 first entry, 3 entries, 4-5 header
// bytes, 6-7 data bytes, 8-9 file bytes.
WS_EXPORT(ws_convert_shard) uint32_t* ws_convert_shard(WsConvert* c, uint32_t s) {
  const ws::ConvertShard& sh = c->plan.shard(s);
  uint32_t* w = c->item;
  w[0] = ptr32(sh.name);
  w[1] = static_cast<uint32_t>(strlen(sh.name));
  w[2] = sh.first;
  w[3] = sh.count;
  put_u64(w + 4, sh.header_size);
  put_u64(w + 6, sh.data_size);
  put_u64(w + 8, sh.file_size);
  return w;
}

// The error (abi.h ErrorOut words) of the plan's build (`which` 0) or of the writer (1).
WS_EXPORT(ws_convert_error) uint32_t* ws_convert_error(WsConvert* c, uint32_t which) {
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(c->item), which ? c->writer.error() : c->plan.error());
  return c->item;
}

// The writer of output file s (ConvertPlan::init_writer), replacing the previous one.
WS_EXPORT(ws_convert_open) uint32_t ws_convert_open(WsConvert* c, uint32_t s) {
  c->writer = ws::SafetensorsWriter();
  return static_cast<uint32_t>(c->plan.init_writer(s, &c->writer));
}

// The next header bytes into out[0, cap); item word 0: how many; item word 1: the header is done.
WS_EXPORT(ws_convert_header) uint32_t ws_convert_header(WsConvert* c, uint8_t* out, uint32_t cap) {
  size_t n = 0;
  const ws::Status s = c->writer.header(out, cap, &n);
  c->item[0] = static_cast<uint32_t>(n);
  c->item[1] = c->writer.header_done();
  return static_cast<uint32_t>(s);
}

// Accounts n bytes of the file's tensor `row` (SafetensorsWriter::data).
WS_EXPORT(ws_convert_data) uint32_t ws_convert_data(WsConvert* c, uint32_t row, uint32_t n) {
  return static_cast<uint32_t>(c->writer.data(row, n));
}

// The row whose bytes are due next (the file's entry count when all are written).
WS_EXPORT(ws_convert_current) uint32_t ws_convert_current(WsConvert* c) { return c->writer.current_tensor(); }

WS_EXPORT(ws_convert_finish) uint32_t ws_convert_finish(WsConvert* c) {
  return static_cast<uint32_t>(c->writer.finish());
}

// model.safetensors.index.json (ConvertPlan::write_index) into out[0, cap); item words 0-1: its
// whole size (a call with cap 0 sizes it).
WS_EXPORT(ws_convert_index) uint32_t ws_convert_index(WsConvert* c, uint8_t* out, uint32_t cap) {
  BufferSink s{out, cap, 0};
  const ws::Status st = c->plan.write_index(buffer_sink, &s);
  put_u64(c->item, s.total);
  return static_cast<uint32_t>(st);
}

// config.json without its quantization sections (ws::config_without_quantization): `in` of n
// bytes into out (n bytes suffice: members are only removed); item words 0 bytes written,
// 1 members removed. A document that is no object: ConfigNotObject (the host copies it as it is).
WS_EXPORT(ws_convert_config) uint32_t ws_convert_config(WsConvert* c, const uint8_t* in, uint32_t n, uint8_t* out,
                                                        uint32_t cap) {
  BufferSink s{out, cap, 0};
  uint32_t removed = 0;
  const ws::Status st = ws::config_without_quantization(in, n, buffer_sink, &s, &removed);
  c->item[0] = static_cast<uint32_t>(s.total);
  c->item[1] = removed;
  return static_cast<uint32_t>(st);
}

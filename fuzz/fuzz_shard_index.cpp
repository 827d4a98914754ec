// libFuzzer target: ShardIndex (model.safetensors.index.json). The index is fed whole and in
// hash-chosen pieces (same verdict required), with a small arena now and then (the reported
// arena_needed() must then suffice); a parsed index must answer its own lookups consistently.
#include "common.h"

namespace {

struct IndexRun {
  ws::Status status = ws::Status::Ok;
  uint64_t offset = 0;
  size_t needed = 0;
  uint32_t tensors = 0, shards = 0;
};

IndexRun run_index(const uint8_t* data, size_t size, size_t arena_size, uint64_t chunk_seed) {
  IndexRun out;
  uint8_t* arena = static_cast<uint8_t*>(malloc(arena_size ? arena_size : 1));
  {
    ws::ShardIndex idx(arena, arena_size);
    wsfuzz::Chunker ch(chunk_seed);
    size_t fed = 0;
    ws::Status s = ws::Status::Ok;
    while (fed < size && s == ws::Status::Ok) {
      size_t n = ch.next(size - fed);
      uint8_t* piece = static_cast<uint8_t*>(malloc(n ? n : 1));
      memcpy(piece, data + fed, n);
      s = idx.feed(piece, n);
      free(piece);
      fed += n;
      WS_CHECK(idx.arena_used() <= arena_size, idx.arena_used(), arena_size);
    }
    if (s == ws::Status::Ok) s = idx.finish();
    WS_CHECK(idx.arena_used() <= arena_size, idx.arena_used(), arena_size);
    out.status = s;
    out.needed = idx.arena_needed();
    if (s != ws::Status::Ok) {
      WS_CHECK(idx.error().code == s, int(idx.error().code), int(s));
      WS_CHECK(idx.error().offset <= size, idx.error().offset, size);
      out.offset = idx.error().offset;
      // Sticky: more input does not revive it.
      WS_CHECK(idx.feed("{}", 2) != ws::Status::Ok);
    } else {
      out.tensors = idx.tensor_count();
      out.shards = idx.shard_count();
      WS_CHECK(out.tensors == 0 || out.shards > 0, out.tensors, out.shards);
      for (uint32_t e = 0; e < out.tensors; ++e) {
        ws::StrView name = idx.tensor_name(e);
        WS_CHECK(idx.find_tensor(name.data, name.size) == e, e);
        uint32_t sh = idx.tensor_shard(e);
        WS_CHECK(sh < out.shards, sh, out.shards);
        ws::StrView file = idx.shard_name(sh);
        WS_CHECK(idx.find_shard(file.data, file.size) == sh, sh);
      }
      // An empty table for a known shard: every entry of that shard is then missing.
      ws::TensorTable empty;
      if (out.shards > 0) {
        ws::StrView file = idx.shard_name(0);
        WS_CHECK(idx.check_shard(file.data, file.size, empty) == ws::Status::Ok);
      }
      ws::Status fc = idx.finish_checks();
      if (out.tensors > 0) WS_CHECK(fc == ws::Status::ShardTensorMissing, int(fc));
      WS_CHECK(idx.check_shard("\x01nonexistent", 12, empty) != ws::Status::Ok || out.shards == 0 || true);
    }
  }
  free(arena);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001B3ull;
  IndexRun whole = run_index(data, size, 1u << 20, 0);
  if (whole.status == ws::Status::ArenaExhausted) return 0;
  IndexRun pieces = run_index(data, size, 1u << 20, h | 3);
  WS_CHECK(pieces.status == whole.status && pieces.offset == whole.offset, int(pieces.status), int(whole.status));
  WS_CHECK(pieces.tensors == whole.tensors && pieces.shards == whole.shards, pieces.tensors, whole.tensors);
  // Small arena: ArenaExhausted, then exactly arena_needed() must give the large arena's verdict.
  size_t small = size_t((h >> 32) & 0x3FF);
  IndexRun tiny = run_index(data, size, small, h >> 5);
  if (tiny.status == ws::Status::ArenaExhausted) {
    IndexRun retry = run_index(data, size, tiny.needed, h >> 9);
    WS_CHECK(retry.status == whole.status && retry.offset == whole.offset, int(retry.status), int(whole.status));
  } else {
    WS_CHECK(tiny.status == whole.status && tiny.offset == whole.offset, int(tiny.status), int(whole.status));
  }
  return 0;
}

// weightstream wasm — ws::ModelLoader behind a handle: the JavaScript package is a host of the same
// model loader the CLI and the firmware drive. JS answers the loader's reads (fetch, Blob.slice,
// fs, streams) and hands its events on; which files a model has, in which order they are read,
// companions, conventions, checks and decoding are all the loader's.
//
// Everything is allocated in ws_loader_create: the handle, the arena (64-byte aligned: the decoded
// output is written with 16-byte SIMD stores) and the input buffer of read_size bytes JS copies
// each answer into. Nothing is allocated while bytes flow, so views of wasm memory stay valid.
#include <new>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"
#include "weightstream/model_loader.h"
#include "weightstream/ollama_manifest.h"
#include "weightstream/shard_index.h"

using wsabi::ptr32;
using wsabi::put_u64;

struct WsLoader {
  ws::ModelLoader* loader;
  uint8_t* arena;
  size_t arena_size;
  uint8_t* input;
  uint32_t input_cap;
  // Words: 0 type, 1 file, 2-3 offset, 4 length, 5 weight, 6 role, 7 data ptr, 8 size.
  uint32_t event[9];
  wsabi::EventOut kv;  // a Kv event's reader event
  wsabi::InfoOut info;
  uint32_t item[64];
  uint32_t meta_cursor, meta_index;
  char message[1024];  // the last warning's words (ws::warning_message)
  alignas(8) uint8_t loader_mem[sizeof(ws::ModelLoader)];
};

// Options (words): 0 seekable, 1 mode (ModelLoadMode), 2 out (OutType), 3 kernel (KernelImpl),
// 4 validate_blocks, 5 read_size, 6 out_size, 7 max_files (0: the default), 8 flags (bit 0
// pass_stored, bit 1 as_stored, bit 2 estimate_arena), 9 and 10 the GGUF string array preview
// (ModelLoaderOptions::gguf_array_full, gguf_array_head; 0xFFFFFFFF: every element), 11 and 12
// stored_formats (low, high word: the formats the host decodes itself). `limits`: 8 words or 0.
WS_EXPORT(ws_loader_create) WsLoader* ws_loader_create(uint32_t arena_size, const uint32_t* o, const uint32_t* limits) {
  ws::ModelLoaderOptions opt;
  opt.seekable = o[0] != 0;
  opt.mode = static_cast<ws::ModelLoadMode>(o[1]);
  opt.out = static_cast<ws::OutType>(o[2]);
  opt.kernel = static_cast<ws::KernelImpl>(o[3]);
  opt.validate_blocks = o[4] != 0;
  opt.read_size = o[5] ? o[5] : 1;
  opt.out_size = o[6];
  if (o[7]) opt.max_files = o[7];
  opt.pass_stored = (o[8] & 1) != 0;
  opt.as_stored = (o[8] & 2) != 0;
  opt.estimate_arena = (o[8] & 4) != 0;
  opt.limits = wsabi::read_limits(limits);
  opt.gguf_array_full = o[9] == 0xFFFFFFFFu ? ~uint64_t(0) : o[9];
  opt.gguf_array_head = o[10] == 0xFFFFFFFFu ? ~uint64_t(0) : o[10];
  opt.stored_formats = uint64_t(o[11]) | (uint64_t(o[12]) << 32);
  void* mem = malloc(sizeof(WsLoader));
  uint8_t* arena = static_cast<uint8_t*>(wsabi::alloc64(arena_size));
  uint8_t* input = static_cast<uint8_t*>(malloc(opt.read_size));
  if (!mem || !arena || !input) {
    free(mem);
    free(arena);
    free(input);
    return nullptr;
  }
  WsLoader* h = static_cast<WsLoader*>(mem);
  memset(h, 0, sizeof *h);
  h->arena = arena;
  h->arena_size = arena_size;
  h->input = input;
  h->input_cap = opt.read_size;
  h->loader = new (h->loader_mem) ws::ModelLoader(arena, arena_size, opt);
  return h;
}

ws::ModelLoader& wsabi::loader_of(WsLoader* h) { return *h->loader; }

WS_EXPORT(ws_loader_destroy) void ws_loader_destroy(WsLoader* h) {
  if (!h) return;
  h->loader->~ModelLoader();
  free(h->arena);
  free(h->input);
  free(h);
}

WS_EXPORT(ws_loader_input) uint8_t* ws_loader_input(WsLoader* h) { return h->input; }
WS_EXPORT(ws_loader_event) uint32_t* ws_loader_event(WsLoader* h) { return h->event; }
WS_EXPORT(ws_loader_kv) wsabi::EventOut* ws_loader_kv(WsLoader* h) { return &h->kv; }
WS_EXPORT(ws_loader_item) uint32_t* ws_loader_item(WsLoader* h) { return h->item; }
// The loader's own need before any file's (ModelLoader::base_need), for an entry name of n bytes.
WS_EXPORT(ws_loader_base_need) uint32_t ws_loader_base_need(uint32_t read_size, uint32_t n) {
  ws::ModelLoaderOptions opt;
  opt.read_size = read_size ? read_size : 1;
  return static_cast<uint32_t>(ws::ModelLoader::base_need(opt, n));
}

// Names are the first n bytes of the input buffer.
WS_EXPORT(ws_loader_add_file) uint32_t ws_loader_add_file(WsLoader* h, uint32_t n) {
  return static_cast<uint32_t>(h->loader->add_file(reinterpret_cast<const char*>(h->input), n));
}
// Digests (before open): a file's expected SHA-256 — its name (the first `name_n` bytes of the
// input buffer) then 64 hex digits; Ollama blobs verified against their names.
WS_EXPORT(ws_loader_expect_sha256_hex) uint32_t ws_loader_expect_sha256_hex(WsLoader* h, uint32_t name_n, uint32_t hex_n) {
  const char* in = reinterpret_cast<const char*>(h->input);
  if (uint64_t(name_n) + hex_n > h->input_cap) return static_cast<uint32_t>(ws::Status::UsageError);
  return static_cast<uint32_t>(h->loader->expect_sha256_hex(in, name_n, in + name_n, hex_n));
}
WS_EXPORT(ws_loader_verify_blobs) uint32_t ws_loader_verify_blobs(WsLoader* h) {
  return static_cast<uint32_t>(h->loader->verify_blobs());
}
// On a file's first read, before it is answered: its expected SHA-256, 64 hex digits in the input
// buffer (from the response that answers it: X-Linked-Etag).
WS_EXPORT(ws_loader_set_file_sha256_hex) uint32_t ws_loader_set_file_sha256_hex(WsLoader* h) {
  uint8_t d[ws::kSha256Bytes];
  if (!ws::sha256_from_hex(reinterpret_cast<const char*>(h->input), ws::kSha256HexChars, d))
    return static_cast<uint32_t>(ws::Status::UsageError);
  return static_cast<uint32_t>(h->loader->set_file_sha256(d));
}
// File f's digest into the item words: 0 DigestState, 1 has expected, 2 has actual, 4-11 the
// expected digest's 32 bytes, 12-19 the actual's.
WS_EXPORT(ws_loader_file_digest) uint32_t* ws_loader_file_digest(WsLoader* h, uint32_t f) {
  const ws::ModelLoader& L = *h->loader;
  uint32_t* w = h->item;
  memset(w, 0, 20 * sizeof(uint32_t));
  w[0] = static_cast<uint32_t>(L.file_digest_state(f));
  if (const uint8_t* e = L.file_expected_sha256(f)) {
    w[1] = 1;
    memcpy(w + 4, e, ws::kSha256Bytes);
  }
  if (const uint8_t* a = L.file_actual_sha256(f)) {
    w[2] = 1;
    memcpy(w + 12, a, ws::kSha256Bytes);
  }
  return w;
}

WS_EXPORT(ws_loader_open) uint32_t ws_loader_open(WsLoader* h, uint32_t entry, uint32_t n) {
  return static_cast<uint32_t>(
      h->loader->open(static_cast<ws::ModelEntry>(entry), reinterpret_cast<const char*>(h->input), n));
}

WS_EXPORT(ws_loader_next) uint32_t ws_loader_next(WsLoader* h) {
  ws::ModelEvent e = h->loader->next();
  uint32_t* w = h->event;
  w[0] = static_cast<uint32_t>(e.type);
  w[1] = e.file;
  put_u64(w + 2, e.offset);
  w[4] = e.length;
  w[5] = e.weight;
  w[6] = static_cast<uint32_t>(e.role);
  w[7] = ptr32(e.data);
  w[8] = static_cast<uint32_t>(e.size);
  if (e.type == ws::ModelEventType::Kv && e.kv) {
    wsabi::put_event(&h->kv, *e.kv);
    // A string array's bytes so far (u32, saturating): the preview's skipped elements included.
    const uint64_t sb = h->loader->kv_string_bytes();
    h->kv.w[21] = sb > 0xFFFFFFFFu ? 0xFFFFFFFFu : uint32_t(sb);
  }
  return w[0];
}

WS_EXPORT(ws_loader_set_file_size) void ws_loader_set_file_size(WsLoader* h, uint32_t lo, uint32_t hi) {
  h->loader->set_file_size(uint64_t(lo) | uint64_t(hi) << 32);
}
// Answers the pending read with the first n bytes of the input buffer (n ≤ its size).
WS_EXPORT(ws_loader_feed) void ws_loader_feed(WsLoader* h, uint32_t n) {
  h->loader->feed(h->input, n < h->input_cap ? n : h->input_cap);
}
WS_EXPORT(ws_loader_end_of_file) void ws_loader_end_of_file(WsLoader* h) { h->loader->end_of_file(); }
WS_EXPORT(ws_loader_file_missing) void ws_loader_file_missing(WsLoader* h) { h->loader->file_missing(); }

WS_EXPORT(ws_loader_select) uint32_t ws_loader_select(WsLoader* h, uint32_t weight) {
  return static_cast<uint32_t>(h->loader->select(weight));
}
WS_EXPORT(ws_loader_select_all) void ws_loader_select_all(WsLoader* h) { h->loader->select_all(); }
// ModelLoader::stored_for_host: a weight with a decoding that goes out as stored for the host
// (stored_formats).
WS_EXPORT(ws_loader_stored_for_host) uint32_t ws_loader_stored_for_host(WsLoader* h, uint32_t weight) {
  return h->loader->stored_for_host(weight);
}

WS_EXPORT(ws_loader_passes_stored) uint32_t ws_loader_passes_stored(WsLoader* h, uint32_t weight) {
  return h->loader->passes_stored(weight);
}
// The bytes weight i hands out in this mode (ModelLoader::output_bytes) into item words 0-1.
WS_EXPORT(ws_loader_output_bytes) uint32_t* ws_loader_output_bytes(WsLoader* h, uint32_t weight) {
  put_u64(h->item, h->loader->output_bytes(weight));
  return h->item;
}
// Words: 0-1 bytes read so far, 2-3 bytes the rest of the load reads (after the selection).
WS_EXPORT(ws_loader_bytes) uint32_t* ws_loader_bytes(WsLoader* h) {
  put_u64(h->item, h->loader->bytes_read());
  put_u64(h->item + 2, h->loader->bytes_to_read());
  return h->item;
}

// The model's files: their count, and file f into the item words: 0 name ptr, 1 name length,
// 2 kind (ModelFileKind), 3 present, 4 table (0xFFFFFFFF: none), 5 manifest layer (or none),
// 6 has a reader, 7 split number (or none), 8 a split's key-values other than split.*, 9-10 the
// first one's offset.
WS_EXPORT(ws_loader_file_count) uint32_t ws_loader_file_count(WsLoader* h) { return h->loader->file_count(); }
WS_EXPORT(ws_loader_file) uint32_t* ws_loader_file(WsLoader* h, uint32_t f) {
  const ws::ModelLoader& L = *h->loader;
  const ws::StrView n = L.file_name(f);
  uint32_t* w = h->item;
  w[0] = ptr32(n.data);
  w[1] = static_cast<uint32_t>(n.size);
  w[2] = static_cast<uint32_t>(L.file_kind(f));
  w[3] = L.file_present(f);
  w[4] = L.file_table(f);
  w[5] = L.file_layer(f);
  w[6] = L.file_reader(f) != nullptr;
  w[7] = L.file_split(f);
  w[8] = L.split_foreign_kvs(f);
  put_u64(w + 9, L.split_foreign_offset(f));
  return w;
}

// File f's reader (abi.h InfoOut), its tensors and __metadata__, as a session's.
WS_EXPORT(ws_loader_file_info) wsabi::InfoOut* ws_loader_file_info(WsLoader* h, uint32_t f) {
  const ws::Reader* r = h->loader->file_reader(f);
  if (!r) return nullptr;
  wsabi::put_info(&h->info, *r, h->arena_size);
  return &h->info;
}
WS_EXPORT(ws_loader_file_tensor) uint32_t* ws_loader_file_tensor(WsLoader* h, uint32_t f, uint32_t i) {
  wsabi::put_tensor(h->item, h->loader->file_reader(f)->tensor(i));
  return h->item;
}
WS_EXPORT(ws_loader_file_dims) uint32_t ws_loader_file_dims(WsLoader* h, uint32_t f, uint32_t i, uint32_t* out,
                                                            uint32_t max) {
  return wsabi::put_dims(out, max, h->loader->file_reader(f)->tensor(i));
}
// File f's tensors in bulk (wsabi::put_tensors: the io words, the records and names).
WS_EXPORT(ws_loader_file_tensors) void ws_loader_file_tensors(WsLoader* h, uint32_t f, uint32_t* io) {
  wsabi::put_tensors(h->loader->file_reader(f)->tensors(), io);
}
WS_EXPORT(ws_loader_file_metadata_reset) void ws_loader_file_metadata_reset(WsLoader* h, uint32_t) {
  h->meta_cursor = 0;
  h->meta_index = 0;
}
WS_EXPORT(ws_loader_file_metadata_next) uint32_t ws_loader_file_metadata_next(WsLoader* h, uint32_t f) {
  return wsabi::put_metadata_next(h->item, h->loader->file_reader(f)->tensors(), &h->meta_cursor, &h->meta_index)
             ? 1
             : 0;
}

// After ModelReady, into the item words: 0 convention, 1 format (of the first data file),
// 2 config_used, 3 table count, 4 weight count, 5 entry file, 6 a logical model (not GGUF),
// 7-9 the UQFF version (major, minor, patch), 10-11 sequential peak, 12-13 seekable peak (reads
// of `chunk` bytes).
WS_EXPORT(ws_loader_model) uint32_t* ws_loader_model(WsLoader* h, uint32_t chunk) {
  const ws::ModelLoader& L = *h->loader;
  uint32_t* w = h->item;
  memset(w, 0, 16 * sizeof(uint32_t));
  w[0] = L.convention().id;
  w[1] = static_cast<uint32_t>(L.format());
  w[2] = L.config_used();
  w[3] = L.table_count();
  w[4] = L.weight_count();
  w[5] = L.entry_file();
  w[6] = L.model() != nullptr;
  // A UQFF model's stated version (0.0.0 for every other convention: the model has none).
  if (L.model())
    for (uint32_t i = 0; i < 3; ++i) w[7 + i] = L.model()->uqff_version(i);
  const ws::ModelPlan p = L.plan(chunk ? chunk : 1);
  put_u64(w + 10, p.sequential_peak);
  put_u64(w + 12, p.seekable_peak);
  w[14] = L.split_count();
  return w;
}
WS_EXPORT(ws_loader_table_file) uint32_t ws_loader_table_file(WsLoader* h, uint32_t t) { return h->loader->table_file(t); }

// Weight i and its load plan for reads of `chunk` bytes (wsabi::put_weight's words), and 49 the
// file of its packed piece.
WS_EXPORT(ws_loader_weight) uint32_t* ws_loader_weight(WsLoader* h, uint32_t i, uint32_t chunk) {
  const ws::ModelLoader& L = *h->loader;
  ws::LoadPlan p;
  if (L.model()) p = ws::plan_weight(*L.model(), i, chunk ? chunk : 1);
  wsabi::put_weight(h->item, L.weight(i), p);
  h->item[wsabi::kWeightWords] = L.weight_file(i);
  return h->item;
}

// Weight i's quantization parameters as its convention presents them (ws::quant_parameters: FP8's
// method, block and scale dtype; MLX's mode, bits, group): word 0 the count, then six words each:
// key ptr, key length, text ptr (0: the value is the number), text length, number low, high.
WS_EXPORT(ws_loader_weight_parameters) uint32_t* ws_loader_weight_parameters(WsLoader* h, uint32_t i) {
  ws::QuantParameter p[ws::kMaxQuantParameters];
  const uint32_t n = ws::quant_parameters(h->loader->weight(i), p, ws::kMaxQuantParameters);
  uint32_t* w = h->item;
  w[0] = n < ws::kMaxQuantParameters ? n : ws::kMaxQuantParameters;
  for (uint32_t k = 0; k < w[0]; ++k) {
    uint32_t* o = w + 1 + 6 * k;
    o[0] = ptr32(p[k].key);
    o[1] = static_cast<uint32_t>(strlen(p[k].key));
    o[2] = p[k].text ? ptr32(p[k].text) : 0;
    o[3] = p[k].text ? static_cast<uint32_t>(strlen(p[k].text)) : 0;
    o[4] = static_cast<uint32_t>(p[k].number);
    o[5] = static_cast<uint32_t>(p[k].number >> 32);
  }
  return h->item;
}
static_assert(1 + 6 * ws::kMaxQuantParameters <= 64, "the parameters fit the item words");

// The error (abi.h ErrorOut, words 0-11), then 12 the file (0xFFFFFFFF: the model as a whole),
// 13 detail ptr, 14 detail length, 15 a convention error, 16 arena needed, 17 the convention whose
// rule raised it (ModelLoader::error_convention(); 0, plain, for any other error), which
// ws_status_hint words the fix for.
WS_EXPORT(ws_loader_error) uint32_t* ws_loader_error(WsLoader* h) {
  const ws::ModelLoader& L = *h->loader;
  uint32_t* w = h->item;
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(w), L.error());
  w[12] = L.error_file();
  const ws::StrView d = L.error_detail();
  w[13] = ptr32(d.data);
  w[14] = static_cast<uint32_t>(d.size);
  w[15] = L.convention_error();
  const size_t need = L.arena_needed();
  w[16] = need > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(need);
  w[17] = L.error_convention().id;
  return w;
}

// The last Warning event's warning (ModelLoader::warning(), warning.h) into the item words: 0 code,
// 1 its name ptr, 2 file, 3-4 offset, 5 weight, 6 tensor name ptr, 7 its length, 8-9 count,
// 10 message ptr, 11 its length (ws::warning_message: the library's words, description and fix).
WS_EXPORT(ws_loader_warning) uint32_t* ws_loader_warning(WsLoader* h) {
  const ws::Warning& x = h->loader->warning();
  uint32_t* w = h->item;
  w[0] = static_cast<uint32_t>(x.code);
  w[1] = ptr32(ws::warning_name(x.code));
  w[2] = x.file;
  put_u64(w + 3, x.offset);
  w[5] = x.weight;
  w[6] = ptr32(x.tensor_name);
  w[7] = static_cast<uint32_t>(x.tensor_name_size);
  put_u64(w + 8, x.count);
  const size_t n = ws::warning_message(x, h->message, sizeof h->message);
  w[10] = ptr32(h->message);
  w[11] = static_cast<uint32_t>(n < sizeof h->message ? n : sizeof h->message - 1);
  return w;
}

// For messages: the shard the entry index places tensor `name` in (the first n bytes of the input
// buffer) into item words 0 ptr, 1 length; 0 when the index does not list it or there is none.
WS_EXPORT(ws_loader_index_shard_of) uint32_t ws_loader_index_shard_of(WsLoader* h, uint32_t n) {
  const ws::ShardIndex* x = h->loader->index();
  if (!x) return 0;
  const uint32_t e = x->find_tensor(reinterpret_cast<const char*>(h->input), n);
  if (e == ws::kNoTensor) return 0;
  const ws::StrView s = x->shard_name(x->tensor_shard(e));
  h->item[0] = ptr32(s.data);
  h->item[1] = static_cast<uint32_t>(s.size);
  return 1;
}

// The entry index's figures into item words: 0 tensors it maps, 1 has total_size, 2-3 total_size;
// 0 when there is no index.
WS_EXPORT(ws_loader_index_facts) uint32_t ws_loader_index_facts(WsLoader* h) {
  const ws::ShardIndex* x = h->loader->index();
  if (!x) return 0;
  h->item[0] = x->tensor_count();
  h->item[1] = x->has_total_size();
  put_u64(h->item + 2, x->total_size());
  return 1;
}

// Layer i of the entry manifest into item words: 0-1 blob file (ptr, length), 2-3 name, 4 is a
// tensor layer; 0 when there is no manifest or no such layer.
WS_EXPORT(ws_loader_manifest_layer) uint32_t ws_loader_manifest_layer(WsLoader* h, uint32_t i) {
  const ws::OllamaManifest* m = h->loader->manifest();
  if (!m || i >= m->layer_count()) return 0;
  const ws::ManifestLayer l = m->layer(i);
  h->item[0] = ptr32(l.blob_file.data);
  h->item[1] = static_cast<uint32_t>(l.blob_file.size);
  h->item[2] = ptr32(l.name.data);
  h->item[3] = static_cast<uint32_t>(l.name.size);
  h->item[4] = l.is_tensor;
  return 1;
}

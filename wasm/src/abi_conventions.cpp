// weightstream wasm — ws::LogicalModel behind a handle, so the JavaScript bindings group tensors
// into logical weights (MLX, Ollama, UQFF, plain) with the library's rules instead of their own.
//
// JS creates a model once it knows every file's header: ws_model_create sizes the weight storage,
// the name hash (index_slots_for) and an input buffer (the config.json bytes for build_mlx, the
// scalar bytes for feed_uqff, names for lookups) — the only allocations. Each file's session is
// added with ws_model_add_table; the sessions must outlive the model (the tables are theirs).
// Statuses are returned as u32 (ws::Status); details are read from the out-structs below.
#include <new>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"
#include "weightstream/mlx_config.h"

using wsabi::ptr32;
using wsabi::put_u64;

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;


}  // namespace

struct WsModel {
  ws::LogicalModel model;
  ws::MlxQuantConfig config;
  ws::LogicalWeight* storage;  // kept to free them
  uint32_t* slots;
  void* arena;
  uint8_t* input;
  uint32_t input_cap;
  // Words: 0-11 the error (abi.h); 12 detail ptr, 13 detail length, 14 the error's table
  // (0xFFFFFFFF: none), 15 unused, 16-17 sequential peak, 18-19 seekable peak,
  // 20 config arena needed.
  uint32_t info[21];
  uint32_t weight[wsabi::kWeightWords];
  WsModel(ws::LogicalWeight* storage, uint32_t capacity, void* arena, size_t arena_size)
      : model(storage, capacity), config(arena, arena_size) {}
};

// Everything is allocated here: the model, `capacity` weights, the name hash for `tensors` names
// across all tables, the config arena and an input buffer of `input_cap` bytes.
WS_EXPORT(ws_model_create) WsModel* ws_model_create(uint32_t capacity, uint32_t tensors, uint32_t input_cap,
                                                    uint32_t config_arena) {
  const uint32_t slots = ws::LogicalModel::index_slots_for(tensors);
  const bool own_slots = slots > ws::LogicalModel::kInlineSlots;
  void* mem = malloc(sizeof(WsModel));
  void* storage = malloc(sizeof(ws::LogicalWeight) * (capacity ? capacity : 1));
  uint32_t* slot_mem = own_slots ? static_cast<uint32_t*>(calloc(slots, sizeof(uint32_t))) : nullptr;
  void* arena = malloc(config_arena ? config_arena : 8);
  uint8_t* input = static_cast<uint8_t*>(malloc(input_cap ? input_cap : 1));
  if (!mem || !storage || (own_slots && !slot_mem) || !arena || !input) {
    free(mem);
    free(storage);
    free(slot_mem);
    free(arena);
    free(input);
    return nullptr;
  }
  ws::LogicalWeight* weights = static_cast<ws::LogicalWeight*>(storage);
  for (uint32_t i = 0; i < (capacity ? capacity : 1); ++i) new (weights + i) ws::LogicalWeight();
  WsModel* m = new (mem) WsModel(weights, capacity, arena, config_arena);
  if (own_slots) m->model.set_index_slots(slot_mem, slots);
  m->storage = weights;
  m->slots = slot_mem;
  m->arena = arena;
  m->input = input;
  m->input_cap = input_cap;
  memset(m->info, 0, sizeof m->info);
  memset(m->weight, 0, sizeof m->weight);
  return m;
}

WS_EXPORT(ws_model_destroy) void ws_model_destroy(WsModel* m) {
  if (!m) return;
  free(m->storage);  // LogicalWeight is trivially destructible
  free(m->slots);
  free(m->arena);
  free(m->input);
  m->~WsModel();
  free(m);
}

WS_EXPORT(ws_model_input) uint8_t* ws_model_input(WsModel* m) { return m->input; }
WS_EXPORT(ws_model_info) uint32_t* ws_model_info(WsModel* m) { return m->info; }

// A session's validated table (after HeaderReady), with its data section's absolute offset.
WS_EXPORT(ws_model_add_table) uint32_t ws_model_add_table(WsModel* m, const WsSession* s, uint32_t data_lo,
                                                          uint32_t data_hi) {
  return static_cast<uint32_t>(m->model.add_table(&wsabi::session_table(s), uint64_t(data_lo) | uint64_t(data_hi) << 32));
}

// What a session's table says it is (ws::convention_signal): 0 Plain, 1 Mlx, 2 Ollama.
WS_EXPORT(ws_session_convention) uint32_t ws_session_convention(const WsSession* s) {
  return static_cast<uint32_t>(ws::convention_signal(wsabi::session_table(s)));
}

// config.json (or any document with a "quantization" / "quantization_config" object) as the
// first n bytes of the input buffer; n = 0: no config.
WS_EXPORT(ws_model_build_mlx) uint32_t ws_model_build_mlx(WsModel* m, uint32_t n) {
  if (n == 0) return static_cast<uint32_t>(m->model.build_mlx(nullptr));
  ws::Status s = m->config.feed(m->input, n < m->input_cap ? n : m->input_cap);
  if (s == ws::Status::Ok) s = m->config.finish();
  m->info[20] = static_cast<uint32_t>(m->config.arena_needed());
  if (s != ws::Status::Ok) return static_cast<uint32_t>(s);  // ws_model_config_error says where
  return static_cast<uint32_t>(m->model.build_mlx(&m->config));
}
WS_EXPORT(ws_model_config_error) uint32_t* ws_model_config_error(WsModel* m) {
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(m->info), m->config.error());
  return m->info;
}
WS_EXPORT(ws_model_build_ollama) uint32_t ws_model_build_ollama(WsModel* m) {
  return static_cast<uint32_t>(m->model.build_ollama());
}
WS_EXPORT(ws_model_build_plain) uint32_t ws_model_build_plain(WsModel* m) {
  return static_cast<uint32_t>(m->model.build_plain());
}
WS_EXPORT(ws_model_build_uqff) uint32_t ws_model_build_uqff(WsModel* m) {
  return static_cast<uint32_t>(m->model.build_uqff());
}
WS_EXPORT(ws_model_uqff_wants) uint32_t ws_model_uqff_wants(WsModel* m, uint32_t table, uint32_t tensor) {
  return m->model.uqff_wants(table, tensor) ? 1 : 0;
}
// `size` bytes of the tensor at `ptr` (JS copies them into the input buffer, or passes a view of
// a session's), which start at absolute file offset lo/hi.
WS_EXPORT(ws_model_feed_uqff) uint32_t ws_model_feed_uqff(WsModel* m, uint32_t table, uint32_t tensor, uint32_t lo,
                                                          uint32_t hi, const uint8_t* ptr, uint32_t size) {
  return static_cast<uint32_t>(m->model.feed_uqff(table, tensor, uint64_t(lo) | uint64_t(hi) << 32, ptr, size));
}
WS_EXPORT(ws_model_resolve_uqff) uint32_t ws_model_resolve_uqff(WsModel* m) {
  return static_cast<uint32_t>(m->model.resolve_uqff());
}
WS_EXPORT(ws_model_uqff_version) uint32_t ws_model_uqff_version(WsModel* m, uint32_t i) {
  return m->model.uqff_version(i);
}

// The model's error into info words 0-14; word 14 is the table (file) its offset is in.
WS_EXPORT(ws_model_error) uint32_t* ws_model_error(WsModel* m) {
  wsabi::put_error(reinterpret_cast<wsabi::ErrorOut*>(m->info), m->model.error());
  const ws::StrView d = m->model.error_detail();
  m->info[12] = ptr32(d.data);
  m->info[13] = static_cast<uint32_t>(d.size);
  m->info[14] = m->model.error_table();  // ws::kNoTensor (0xFFFFFFFF) when none
  return m->info;
}

WS_EXPORT(ws_model_weight_count) uint32_t ws_model_weight_count(WsModel* m) { return m->model.weight_count(); }

// Weight i and its load plan (seekable reads of `chunk` bytes) into the weight words.
WS_EXPORT(ws_model_weight) uint32_t* ws_model_weight(WsModel* m, uint32_t i, uint32_t chunk) {
  wsabi::put_weight(m->weight, m->model.weight(i), ws::plan_weight(m->model, i, chunk ? chunk : 1));
  return m->weight;
}

// The whole model's peaks into info words 16-19.
WS_EXPORT(ws_model_plan) uint32_t* ws_model_plan(WsModel* m, uint32_t chunk) {
  const ws::ModelPlan p = ws::plan_model(m->model, chunk ? chunk : 1);
  put_u64(m->info + 16, p.sequential_peak);
  put_u64(m->info + 18, p.seekable_peak);
  return m->info;
}

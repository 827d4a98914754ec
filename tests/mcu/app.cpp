#include "app.h"

#include <string.h>

#include <new>

#include <weightstream/weightstream.h>
#if WS_MCU_DEQUANT == 1
#include <weightstream/dequant.h>
#elif WS_MCU_DEQUANT == 2
#include "../../lib/src/kernels/kernel_api.h"
#endif

#ifndef WS_MCU_DEQUANT
#define WS_MCU_DEQUANT 1
#endif

namespace mcu {
namespace {

// Simulated SPI flash: copies `n` bytes at `addr` into the RAM buffer (as a driver would).
size_t flash_read(const Model& m, uint32_t addr, uint8_t* buf, size_t n) {
  if (addr >= m.size) return 0;
  if (n > m.size - addr) n = m.size - addr;
  memcpy(buf, m.flash + addr, n);
  return n;
}

struct Fnv {
  uint32_t h = 2166136261u;
  void add(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  }
};

// A device's limits: metadata is validated and dropped (the firmware never reads it), and a
// table of more than 64 tensors or 8 dimensions is refused rather than stored.
ws::Limits device_limits() {
  ws::Limits l;
  l.keep_metadata = false;
  l.max_tensors = 64;
  l.max_rank = 8;
  l.max_header_bytes = 64 * 1024;
  return l;
}

char* put_dec(char* o, uint64_t v) {
  char t[24];
  int n = 0;
  do { t[n++] = char('0' + v % 10); v /= 10; } while (v);
  while (n) *o++ = t[--n];
  return o;
}
char* put_hex(char* o, uint32_t v) {
  for (int s = 28; s >= 0; s -= 4) *o++ = "0123456789abcdef"[(v >> s) & 15];
  return o;
}
char* put_str(char* o, const char* s, size_t n) {
  memcpy(o, s, n);
  return o + n;
}
char* put_z(char* o, const char* s) { return put_str(o, s, strlen(s)); }

// One line: "ck <label> <what>" then fields appended by the caller.
char line[160];

alignas(8) uint8_t piece[kReadPiece];

#if WS_MCU_DEQUANT == 1
ws::Dequantizer deq;  // 0.5 KB carry buffer: static, not on the stack
#endif
#if WS_MCU_DEQUANT != 0
float out_f32[1024];  // the dequantized tensor
#endif

}  // namespace

int run_model(const Model& m, void* arena, size_t arena_size) {
  // The reader lives in static storage (placement new: no allocator), not on the stack.
  alignas(ws::Reader) static uint8_t reader_storage[sizeof(ws::Reader)];
  ws::Reader& r = *new (reader_storage) ws::Reader(arena, arena_size, device_limits());
  uint32_t addr = 0;
  Fnv raw;
  uint32_t dq_tensor = ws::kNoTensor;
  uint64_t dq_elems = 0;
#if WS_MCU_DEQUANT != 0
  size_t dq_written = 0;
#endif
#if WS_MCU_DEQUANT == 2
  uint8_t carry[18];
  size_t carry_n = 0;
#endif
  bool failed = false;
  (void)dq_elems;
  (void)dq_tensor;
  for (;;) {
    ws::Event e = r.next();
    switch (e.type) {
      case ws::EventType::NeedInput: {
        size_t n = flash_read(m, addr, piece, sizeof piece);
        addr += uint32_t(n);
        if (n) r.feed(piece, n); else r.finish();
        break;
      }
      case ws::EventType::HeaderReady: {
        size_t names = 0;
        for (uint32_t i = 0; i < r.tensor_count(); ++i) {
          ws::TensorInfo t = r.tensor(i);
          names += t.name.size;
          // The Q4_0-only configuration (2) dequantizes the GGUF's Q4_0 tensor and nothing else.
          bool want = m.dequant_tensor && t.name.equals(m.dequant_tensor) &&
                      (WS_MCU_DEQUANT != 2 || t.type == 2 /* GGML Q4_0 */);
          if (want && r.format() != ws::Format::Unknown) {
            dq_tensor = i;
            dq_elems = t.element_count();
          }
        }
        size_t budget = names + 48 * size_t(r.tensor_count());
        char* o = put_z(line, "ck ");
        o = put_z(o, m.label);
        o = put_z(o, " format=");
        o = put_z(o, ws::format_name(r.format()));
        o = put_z(o, " tensors=");
        o = put_dec(o, r.tensor_count());
        o = put_z(o, " names=");
        o = put_dec(o, names);
        o = put_z(o, " arena_peak=");
        o = put_dec(o, r.arena_peak());
        o = put_z(o, " arena_budget=");
        o = put_dec(o, budget);
        o = put_z(o, r.arena_peak() <= budget ? " within_budget\n" : " OVER_BUDGET\n");
        *o = 0;
        put(line);
        if (r.arena_peak() > budget) failed = true;
#if WS_MCU_DEQUANT != 0
        if (dq_tensor != ws::kNoTensor && dq_elems > sizeof out_f32 / sizeof out_f32[0]) return 1;
#endif
#if WS_MCU_DEQUANT == 1
        if (dq_tensor != ws::kNoTensor) {
          ws::TensorInfo t = r.tensor(dq_tensor);
          ws::DequantSpec spec;
          bool ok = r.format() == ws::Format::Gguf
                        ? ws::quant_format_from_ggml(t.type, r.gguf_dialect(), &spec.format)
                        : ws::quant_format_from_dtype(t.dtype(), &spec.format);
          spec.elements = dq_elems;
          spec.input_offset = r.data_start() + t.begin;
          if (!ok || deq.init(spec) != ws::Status::Ok) return 1;
        }
#endif
        break;
      }
      case ws::EventType::TensorBegin:
        raw = Fnv();
        break;
      case ws::EventType::TensorBytes:
        raw.add(e.data, e.size);
#if WS_MCU_DEQUANT == 1
        if (e.tensor == dq_tensor) {
          size_t used = 0;
          while (used < e.size) {
            size_t in_used = 0, out_bytes = 0;
            ws::Status s = deq.decode(e.data + used, e.size - used, &in_used,
                                      reinterpret_cast<uint8_t*>(out_f32) + dq_written,
                                      sizeof out_f32 - dq_written, &out_bytes);
            if (s != ws::Status::Ok || (in_used == 0 && out_bytes == 0)) return 1;
            used += in_used;
            dq_written += out_bytes;
          }
        }
#elif WS_MCU_DEQUANT == 2
        // Q4_0 only, with the kernel called directly: 18-byte blocks, one carried across reads.
        if (e.tensor == dq_tensor) {
          const uint8_t* p = e.data;
          size_t n = e.size;
          ws::kernels::KernelContext ctx{nullptr, 0};
          if (carry_n) {
            size_t take = sizeof carry - carry_n < n ? sizeof carry - carry_n : n;
            memcpy(carry + carry_n, p, take);
            carry_n += take; p += take; n -= take;
            if (carry_n == sizeof carry) {
              ws::kernels::ref::Q4_0(carry, 1, out_f32 + dq_written / 4, ctx);
              dq_written += 32 * 4;
              carry_n = 0;
            }
          }
          size_t blocks = n / 18;
          ws::kernels::ref::Q4_0(p, blocks, out_f32 + dq_written / 4, ctx);
          dq_written += blocks * 32 * 4;
          memcpy(carry, p + blocks * 18, n - blocks * 18);
          carry_n = n - blocks * 18;
        }
#endif
        break;
      case ws::EventType::TensorEnd: {
        ws::TensorInfo t = r.tensor(e.tensor);
        char* o = put_z(line, "ck ");
        o = put_z(o, m.label);
        o = put_z(o, " tensor ");
        o = put_str(o, t.name.data, t.name.size);
        o = put_z(o, " bytes=");
        o = put_dec(o, t.byte_size());
        o = put_z(o, " raw_fnv=");
        o = put_hex(o, raw.h);
        *o++ = '\n';
        *o = 0;
        put(line);
        break;
      }
      case ws::EventType::End: {
#if WS_MCU_DEQUANT != 0
        if (dq_tensor != ws::kNoTensor) {
          if (dq_written != dq_elems * 4) return 1;
          Fnv f;
          f.add(reinterpret_cast<const uint8_t*>(out_f32), dq_written);
          char* o = put_z(line, "ck ");
          o = put_z(o, m.label);
          o = put_z(o, " dequant ");
          o = put_z(o, m.dequant_tensor);
          o = put_z(o, " elements=");
          o = put_dec(o, dq_elems);
          o = put_z(o, " f32_fnv=");
          o = put_hex(o, f.h);
          *o++ = '\n';
          *o = 0;
          put(line);
        }
#endif
        char* o = put_z(line, "ck ");
        o = put_z(o, m.label);
        o = put_z(o, " valid end=");
        o = put_dec(o, r.position());
        *o++ = '\n';
        *o = 0;
        put(line);
        return failed ? 1 : 0;
      }
      case ws::EventType::Error: {
        char* o = put_z(line, "ck ");
        o = put_z(o, m.label);
        o = put_z(o, " error ");
        o = put_z(o, ws::status_name(r.error().code));
        o = put_z(o, " at ");
        o = put_dec(o, r.error().offset);
        *o++ = '\n';
        *o = 0;
        put(line);
        return 1;
      }
      default:
        break;
    }
  }
}

size_t arena_needed(const Model& m) {
  alignas(8) static uint8_t none[8];
  ws::Reader r(none, 0, device_limits());
  uint32_t addr = 0;
  for (;;) {
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      size_t n = flash_read(m, addr, piece, sizeof piece);
      addr += uint32_t(n);
      if (n) r.feed(piece, n); else r.finish();
    } else if (e.type == ws::EventType::Error) {
      return r.error().code == ws::Status::ArenaExhausted ? r.arena_needed() : 0;
    } else if (e.type == ws::EventType::HeaderReady || e.type == ws::EventType::End) {
      return r.arena_peak();  // an empty arena sufficed
    }
  }
}

}  // namespace mcu

#if WS_MCU_DEQUANT >= 3 || !defined(__arm__)
#include <weightstream/convert_plan.h>
#include <weightstream/model_loader.h>

namespace mcu {
namespace {
float loader_out[256];  // the loader's output piece (1 KiB): the caller's buffer, not its arena

// A NeedRead answered from the flash file the loader names (one that is not there: missing).
void answer_read(ws::ModelLoader& L, const ws::ModelEvent& e, const FlashFile* files, size_t count) {
  const ws::StrView name = L.file_name(e.file);
  const FlashFile* file = nullptr;
  for (size_t i = 0; i < count; ++i)
    if (name.equals(files[i].name)) file = &files[i];
  if (!file) {
    L.file_missing();  // config.json: there is none
    return;
  }
  Model m{file->name, file->flash, file->size, nullptr};
  L.set_file_size(file->size);
  const size_t n = flash_read(m, uint32_t(e.offset), piece, e.length < sizeof piece ? e.length : sizeof piece);
  if (n) L.feed(piece, n); else L.end_of_file();
}

char* put_error(char* o, const char* label, const ws::Error& err, size_t need) {
  o = put_z(o, "ck ");
  o = put_z(o, label);
  o = put_z(o, " error ");
  o = put_z(o, ws::status_name(err.code));
  o = put_z(o, " at ");
  o = put_dec(o, err.offset);
  o = put_z(o, " need ");
  o = put_dec(o, need);
  *o++ = '\n';
  *o = 0;
  return o;
}
}  // namespace

bool g_quiet = false;
size_t g_needed = 0;

int run_loader(const char* label, const FlashFile* files, size_t count, void* arena, size_t arena_size) {
  ws::ModelLoaderOptions opt;
  opt.mode = ws::ModelLoadMode::Decode;
  opt.seekable = true;  // flash: any range
  opt.read_size = uint32_t(kReadPiece);
  opt.out_buffer = loader_out;
  opt.out_buffer_size = sizeof loader_out;
  opt.limits = device_limits();
  opt.max_files = 4;  // the index, two shards, config.json
  alignas(ws::ModelLoader) static uint8_t loader_storage[sizeof(ws::ModelLoader)];
  ws::ModelLoader& L = *new (loader_storage) ws::ModelLoader(arena, arena_size, opt);
  // Digests, when the files come with them. Compiled out of the plain loader image: a program
  // that calls expect_sha256 links the SHA-256 code, whether it runs or not.
#if WS_MCU_DEQUANT != 3
  for (size_t i = 0; i < count; ++i)
    if (files[i].sha256) L.expect_sha256(files[i].name, strlen(files[i].name), files[i].sha256);
#endif
  L.open(ws::ModelEntry::ShardIndex, files[0].name);
  Fnv f;
  uint64_t values = 0;
  for (;;) {
    const ws::ModelEvent e = L.next();
    switch (e.type) {
      case ws::ModelEventType::NeedRead:
        answer_read(L, e, files, count);
        break;
      case ws::ModelEventType::ModelReady: {
        char* o = put_z(line, "ck ");
        o = put_z(o, label);
        o = put_z(o, " model convention=");
        o = put_z(o, ws::convention_name(L.convention()));
        o = put_z(o, " files=");
        o = put_dec(o, L.file_count());
        o = put_z(o, " weights=");
        o = put_dec(o, L.weight_count());
        *o++ = '\n';
        *o = 0;
        if (!g_quiet) put(line);
        L.select_all();
        break;
      }
      case ws::ModelEventType::WeightBegin:
        f = Fnv();
        values = 0;
        break;
      case ws::ModelEventType::WeightData:
        f.add(e.data, e.size);
        values += e.size / 4;
        break;
      case ws::ModelEventType::WeightEnd: {
        const ws::StrView name = L.weight(e.weight).name;
        char* o = put_z(line, "ck ");
        o = put_z(o, label);
        o = put_z(o, " weight ");
        o = put_str(o, name.data, name.size);
        o = put_z(o, " elements=");
        o = put_dec(o, values);
        o = put_z(o, " f32_fnv=");
        o = put_hex(o, f.h);
        *o++ = '\n';
        *o = 0;
        if (!g_quiet) put(line);
        break;
      }
      case ws::ModelEventType::Done: {
        char* o = put_z(line, "ck ");
        o = put_z(o, label);
        uint32_t verified = 0, digests = 0;
        for (size_t i = 0; i < count; ++i) digests += files[i].sha256 ? 1 : 0;
        if (digests) {
          for (uint32_t f = 0; f < L.file_count(); ++f) verified += L.file_digest_state(f) == ws::DigestState::Verified;
          o = put_z(o, " sha256 verified=");
          o = put_dec(o, verified);
          o = put_z(o, " of ");
          o = put_dec(o, digests);
        }
        o = put_z(o, " done\n");
        *o = 0;
        if (!g_quiet) put(line);
        return 0;
      }
      case ws::ModelEventType::Error: {
        put_error(line, label, L.error(), L.arena_needed());
        g_needed = L.arena_needed();
        if (!g_quiet) put(line);
        return 1;
      }
      default:
        break;
    }
  }
}

#if WS_MCU_DEQUANT == 3 || !defined(__arm__)
namespace {
alignas(8) uint8_t plan_arena[1024];  // the conversion's plan (its entries, the file's table)
uint8_t header_piece[64];              // the output header, generated a piece at a time
}  // namespace

int run_convert(const char* label, const FlashFile* files, size_t count, void* arena, size_t arena_size) {
  // Static, as the loader and the plan: bf16 output decodes through the Dequantizer's 1 KiB f32
  // tile, and this frame sits under it within the image's 2 KiB stack budget.
  static ws::ModelLoaderOptions opt;
  opt = ws::ModelLoaderOptions();
  opt.mode = ws::ModelLoadMode::Decode;
  opt.out = ws::OutType::BF16;
  opt.pass_stored = true;  // as the CLI's convert: a weight without a decoding goes out as stored
  opt.seekable = true;
  opt.read_size = uint32_t(kReadPiece);
  opt.out_buffer = loader_out;
  opt.out_buffer_size = sizeof loader_out;
  opt.limits = device_limits();
  opt.max_files = 4;
  alignas(ws::ModelLoader) static uint8_t loader_storage[sizeof(ws::ModelLoader)];
  alignas(ws::ConvertPlan) static uint8_t plan_storage[sizeof(ws::ConvertPlan)];
  alignas(ws::SafetensorsWriter) static uint8_t writer_storage[sizeof(ws::SafetensorsWriter)];
  ws::ModelLoader& L = *new (loader_storage) ws::ModelLoader(arena, arena_size, opt);
  ws::ConvertPlan& plan = *new (plan_storage) ws::ConvertPlan();
  ws::SafetensorsWriter& w = *new (writer_storage) ws::SafetensorsWriter();
  static ws::ConvertOptions copt;
  copt.to = ws::OutType::BF16;
  L.open(ws::ModelEntry::ShardIndex, files[0].name);
  Fnv f;  // the output file's bytes, as a device would write them out
  uint64_t bytes = 0;
  uint32_t row = 0;
  for (;;) {
    const ws::ModelEvent e = L.next();
    switch (e.type) {
      case ws::ModelEventType::NeedRead:
        answer_read(L, e, files, count);
        break;
      case ws::ModelEventType::ModelReady: {
        ws::Status s = plan.build(L, copt, nullptr, nullptr, plan_arena, sizeof plan_arena);
        if (s == ws::Status::Ok && plan.shard_count() == 1) s = plan.init_writer(0, &w);
        if (s != ws::Status::Ok) {
          put_error(line, label, plan.error(), plan.arena_needed());
          put(line);
          return 1;
        }
        for (uint32_t k = 0; k < plan.entry_count(); ++k) L.select(plan.entry(k).weight);
        while (!w.header_done()) {
          size_t n = 0;
          if (w.header(header_piece, sizeof header_piece, &n) != ws::Status::Ok) return 1;
          f.add(header_piece, n);
          bytes += n;
        }
        break;
      }
      case ws::ModelEventType::WeightBegin:
        row = plan.entry(plan.entry_of_weight(e.weight)).row;
        break;
      case ws::ModelEventType::WeightData:
        if (e.role != ws::PieceRole::Packed) break;  // a weight passed stored: its companions are no output
        if (w.data(row, e.size) != ws::Status::Ok) return 1;
        f.add(e.data, e.size);
        bytes += e.size;
        break;
      case ws::ModelEventType::Done: {
        if (w.finish() != ws::Status::Ok) return 1;
        char* o = put_z(line, "ck ");
        o = put_z(o, label);
        o = put_z(o, " convert bf16 ");
        o = put_z(o, plan.shard(0).name);
        o = put_z(o, " weights=");
        o = put_dec(o, plan.entry_count());
        o = put_z(o, " bytes=");
        o = put_dec(o, bytes);
        o = put_z(o, " of ");
        o = put_dec(o, plan.shard(0).file_size);
        o = put_z(o, " fnv=");
        o = put_hex(o, f.h);
        *o++ = '\n';
        *o = 0;
        put(line);
        return bytes == plan.shard(0).file_size ? 0 : 1;
      }
      case ws::ModelEventType::Error:
        put_error(line, label, L.error(), L.arena_needed());
        put(line);
        return 1;
      default:
        break;
    }
  }
}
#endif

bool run_loader_quiet(const FlashFile* files, size_t count, void* arena, size_t arena_size, size_t* needed) {
  g_quiet = true;
  g_needed = 0;
  const int rc = run_loader("", files, count, arena, arena_size);
  g_quiet = false;
  if (rc == 0) return true;
  *needed = g_needed;
  return false;
}

}  // namespace mcu
#endif

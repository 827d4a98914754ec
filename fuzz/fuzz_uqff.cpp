// libFuzzer target: a UQFF directory as one logical model (LogicalModel::build_uqff, feed_uqff,
// resolve_uqff, the load plan, dequantizing every resolved weight).
//
// Input: `u8 chunk_seed, u8 file_count (1..3 after % 3 + 1)`, then for every file but the last a
// u32 LE length and its bytes; the last file is the rest. Each file is a safetensors shard (any
// of them may hold the version tensors), read by its own ws::Reader: every header first, then the data,
// every TensorBytes event fed to feed_uqff(). The whole directory is read twice, whole and in
// seed-chosen pieces: the verdict, offset, tensor name and resolved weights must agree. Decoded
// values must fill exactly the logical element count. Seeds: fuzz/corpus/fuzz_uqff (the fixture
// directory and its malformed variants, written by tests/conventions/uqff_test.cpp with
// WS_UQFF_SEED_DIR set).
#include <memory>

#include "common.h"
#include "weightstream/conventions.h"
#include "weightstream/load_plan.h"

namespace {

constexpr uint32_t kMaxFiles = 3;

struct Dir {
  const uint8_t* data[kMaxFiles] = {};
  size_t size[kMaxFiles] = {};
  uint32_t count = 0;
};

struct UqffRun {
  ws::Status status = ws::Status::Ok;
  uint64_t offset = 0;
  std::string name, detail;
  std::vector<std::string> weights;  // name / format / elements of every weight
  bool operator==(const UqffRun& o) const {
    return status == o.status && offset == o.offset && name == o.name && detail == o.detail && weights == o.weights;
  }
};

UqffRun run(const Dir& dir, uint64_t chunk_seed) {
  UqffRun out;
  std::vector<std::vector<uint8_t>> arenas(dir.count, std::vector<uint8_t>(1 << 16));
  std::vector<std::unique_ptr<ws::Reader>> readers;
  std::vector<size_t> fed(dir.count, 0);
  std::vector<ws::LogicalWeight> storage(256);
  ws::LogicalModel m(storage.data(), uint32_t(storage.size()));
  wsfuzz::Chunker ch(chunk_seed);
  auto next = [&](uint32_t f) {
    for (;;) {
      ws::Event e = readers[f]->next();
      if (e.type != ws::EventType::NeedInput) return e;
      if (fed[f] < dir.size[f]) {
        const size_t n = ch.next(dir.size[f] - fed[f]);
        readers[f]->feed(dir.data[f] + fed[f], n);
        fed[f] += n;
      } else {
        readers[f]->finish();
      }
    }
  };
  auto reader_error = [&](uint32_t f) {
    out.status = readers[f]->error().code;
    out.offset = readers[f]->error().offset;
    return out;
  };
  for (uint32_t f = 0; f < dir.count; ++f) {
    readers.emplace_back(new ws::Reader(arenas[f].data(), arenas[f].size()));
    ws::Event e;
    do e = next(f);
    while (e.type != ws::EventType::HeaderReady && e.type != ws::EventType::Error);
    if (e.type == ws::EventType::Error) return reader_error(f);
    WS_CHECK(m.add_table(&readers[f]->tensors(), readers[f]->data_start()) == ws::Status::Ok);
  }
  auto model_error = [&]() {
    const ws::Error& e = m.error();
    WS_CHECK(e.code != ws::Status::Ok);
    out.status = e.code;
    out.offset = e.offset;
    if (e.tensor_name) out.name.assign(e.tensor_name, e.tensor_name_size);
    if (m.error_detail().data) out.detail.assign(m.error_detail().data, m.error_detail().size);
    return out;
  };
  if (m.build_uqff() != ws::Status::Ok) return model_error();
  // Every weight's pieces exist, and find() finds every weight by its name.
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LogicalWeight& w = m.weight(i);
    WS_CHECK(w.ref(ws::PieceRole::Packed).present(), i);
    const uint32_t found = m.find(w.name.data, w.name.size);
    WS_CHECK(found != ws::kNoTensor && m.weight(found).name.equals(w.name.data, w.name.size), i, found);
  }
  for (uint32_t f = 0; f < dir.count; ++f) {
    for (;;) {
      ws::Event e = next(f);
      if (e.type == ws::EventType::End) break;
      if (e.type == ws::EventType::Error) return reader_error(f);
      if (e.type == ws::EventType::TensorBytes && m.feed_uqff(f, e.tensor, e.offset, e.data, e.size) != ws::Status::Ok)
        return model_error();
    }
  }
  if (m.resolve_uqff() != ws::Status::Ok) return model_error();
  ws::plan_model(m, 1 + chunk_seed % 4096);
  std::vector<uint8_t> buf(4096);
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LogicalWeight& w = m.weight(i);
    out.weights.push_back(std::string(w.name.data, w.name.size) + "/" + ws::quant_format_name(w.format) + "/" +
                          std::to_string(w.elements) + "/" + std::to_string(w.decodable));
    ws::LoadPlan lp = ws::plan_weight(m, i, 64);
    WS_CHECK(lp.piece_count >= 1 && lp.schedule_count == lp.piece_count, lp.piece_count, lp.schedule_count);
    if (!w.decodable || w.elements > (1u << 20)) continue;
    // The whole files are in the input: a piece's bytes are one slice of its file.
    auto bytes = [&](ws::PieceRole r) {
      const ws::TensorRef t = w.ref(r);
      return dir.data[t.table] + m.piece_begin(t);
    };
    ws::DequantSpec s = w.spec();
    if (w.ref(ws::PieceRole::Scales).present()) s.scales = bytes(ws::PieceRole::Scales);
    if (w.ref(ws::PieceRole::Biases).present()) s.biases = bytes(ws::PieceRole::Biases);
    ws::Dequantizer d;
    if (d.init(s) != ws::Status::Ok) continue;  // e.g. an elementwise dtype with a bad size
    const ws::TensorRef p = w.ref(ws::PieceRole::Packed);
    const uint8_t* in = bytes(ws::PieceRole::Packed);
    const size_t n = size_t(m.piece_end(p) - m.piece_begin(p));
    size_t used = 0, values = 0;
    bool ok = true;
    while (used < n && ok) {
      size_t in_used = 0, written = 0;
      ok = d.decode(in + used, n - used, &in_used, buf.data(), buf.size(), &written) == ws::Status::Ok;
      if (in_used == 0 && written == 0) break;
      used += in_used;
      values += written / 4;
    }
    if (ok && d.done()) WS_CHECK(values == w.elements, values, w.elements);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint64_t seed = data[0] * 0x9E3779B97F4A7C15ull + 7;
  Dir dir;
  dir.count = data[1] % kMaxFiles + 1;
  size_t at = 2;
  for (uint32_t f = 0; f + 1 < dir.count; ++f) {
    if (size - at < 4) return 0;
    const uint32_t n = uint32_t(data[at]) | uint32_t(data[at + 1]) << 8 | uint32_t(data[at + 2]) << 16 |
                       uint32_t(data[at + 3]) << 24;
    at += 4;
    if (n > size - at) return 0;
    dir.data[f] = data + at;
    dir.size[f] = n;
    at += n;
  }
  dir.data[dir.count - 1] = data + at;
  dir.size[dir.count - 1] = size - at;
  const UqffRun whole = run(dir, 0);
  const UqffRun pieces = run(dir, seed | 3);  // mode 3: random piece sizes
  if (!(whole == pieces)) {
    fprintf(stderr, "whole: %s@%llu %s | pieces: %s@%llu %s\n", ws::status_name(whole.status),
            (unsigned long long)whole.offset, whole.name.c_str(), ws::status_name(pieces.status),
            (unsigned long long)pieces.offset, pieces.name.c_str());
    wsfuzz::fail("UQFF verdict depends on the chunking");
  }
  return 0;
}

// UQFF without the heap: this binary links tests/support/alloc_counter.cpp, which replaces the
// global allocation functions with counting wrappers, and checks that not one call happens while
// a UQFF directory goes through the library — every file's header, build_uqff(), streaming with
// feed_uqff(), resolve_uqff(), the load plan and dequantizing every weight — for the good fixtures
// (uqff/, uqff-f8q8/) and every malformed variant, fed whole and 1 byte at a time. Buffers are
// made before counting starts.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "uqff_fixtures.h"
#include "weightstream/conventions.h"
#include "weightstream/dequant.h"
#include "weightstream/load_plan.h"
#include "weightstream/reader.h"

using wsalloc::g_allocs;
using wsalloc::g_armed;

namespace {

constexpr uint32_t kFiles = 3;
constexpr size_t kArena = 1 << 16;
constexpr size_t kKeep = 4096;  // bytes kept per tensor (the fixtures' tensors are smaller)
constexpr uint32_t kTensors = 64;

// Everything one run touches, allocated before counting starts.
struct Work {
  std::vector<uint8_t> arena[kFiles];
  std::vector<uint8_t> kept[kFiles];  // [tensor][kKeep]
  uint64_t kept_size[kFiles][kTensors] = {};
  std::vector<ws::LogicalWeight> storage = std::vector<ws::LogicalWeight>(64);
  std::vector<float> out = std::vector<float>(1 << 14);
  Work() {
    for (uint32_t f = 0; f < kFiles; ++f) {
      arena[f].resize(kArena);
      kept[f].resize(kKeep * kTensors);
    }
  }
};

struct Result {
  ws::Status status = ws::Status::Ok;
  uint32_t decoded = 0;
};

// Reads the directory (pieces of `step` bytes; 0 = whole) and decodes every weight. No allocation.
Result run(const std::vector<std::vector<uint8_t>>& files, size_t step, Work* w) {
  Result res;
  alignas(ws::Reader) static unsigned char reader_mem[kFiles][sizeof(ws::Reader)];
  ws::Reader* r[kFiles];
  size_t at[kFiles] = {};
  ws::LogicalModel m(w->storage.data(), uint32_t(w->storage.size()));
  // Feeds the next piece; returns the next event that is not NeedInput.
  auto next = [&](uint32_t f) {
    for (;;) {
      ws::Event e = r[f]->next();
      if (e.type != ws::EventType::NeedInput) return e;
      if (at[f] < files[f].size()) {
        const size_t n = step == 0 || files[f].size() - at[f] < step ? files[f].size() - at[f] : step;
        r[f]->feed(files[f].data() + at[f], n);
        at[f] += n;
      } else {
        r[f]->finish();
      }
    }
  };
  for (uint32_t f = 0; f < files.size(); ++f) {
    r[f] = new (reader_mem[f]) ws::Reader(w->arena[f].data(), kArena);  // placement: no heap
    ws::Event e;
    do e = next(f);
    while (e.type != ws::EventType::HeaderReady && e.type != ws::EventType::Error);
    if (e.type == ws::EventType::Error) return {r[f]->error().code, 0};
    if (r[f]->tensor_count() > kTensors) return {ws::Status::UsageError, 0};
    m.add_table(&r[f]->tensors(), r[f]->data_start());
  }
  if (m.build_uqff() != ws::Status::Ok) return {m.error().code, 0};
  for (uint32_t f = 0; f < files.size(); ++f) {
    for (;;) {
      ws::Event e = next(f);
      if (e.type == ws::EventType::End) break;
      if (e.type == ws::EventType::Error) return {r[f]->error().code, 0};
      if (e.type != ws::EventType::TensorBytes) continue;
      if (m.feed_uqff(f, e.tensor, e.offset, e.data, e.size) != ws::Status::Ok) return {m.error().code, 0};
      uint64_t& k = w->kept_size[f][e.tensor];
      if (k + e.size > kKeep) return {ws::Status::UsageError, 0};
      memcpy(&w->kept[f][e.tensor * kKeep + k], e.data, e.size);
      k += e.size;
    }
  }
  if (m.resolve_uqff() != ws::Status::Ok) return {m.error().code, 0};
  ws::plan_model(m, 64);
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    const ws::LogicalWeight& lw = m.weight(i);
    if (!lw.decodable) continue;
    ws::DequantSpec s = lw.spec();
    auto bytes = [&](ws::PieceRole role) {
      const ws::TensorRef& t = lw.ref(role);
      return &w->kept[t.table][t.index * kKeep];
    };
    if (lw.ref(ws::PieceRole::Scales).present()) s.scales = bytes(ws::PieceRole::Scales);
    if (lw.ref(ws::PieceRole::Biases).present()) s.biases = bytes(ws::PieceRole::Biases);
    const ws::TensorRef p = lw.ref(ws::PieceRole::Packed);
    ws::Error err;
    if (ws::dequantize(s, bytes(ws::PieceRole::Packed), w->kept_size[p.table][p.index], w->out.data(),
                       w->out.size() * 4, &err) != ws::Status::Ok)
      return {err.code, res.decoded};
    ++res.decoded;
  }
  for (uint32_t f = 0; f < files.size(); ++f) r[f]->~Reader();
  return res;
}

TEST(UqffNoAllocation, DirectoryAndVariantsNeverAllocate) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "sanitizer build: the allocator cannot be replaced";
#endif
  struct Input {
    std::string name, status;
    std::vector<std::vector<uint8_t>> files;
  };
  std::vector<Input> inputs;
  {
    Input good{"good", "Ok", {}};
    for (const samplegen::UqffFile& f : samplegen::uqff_fixture().files) good.files.push_back(samplegen::uqff_file_bytes(f));
    inputs.push_back(good);
  }
  {  // padded F8Q8 layers, the version in both shards (issue #14)
    Input good{"good-f8q8", "Ok", {}};
    for (const samplegen::UqffFile& f : samplegen::uqff_f8q8_fixture().files) good.files.push_back(samplegen::uqff_file_bytes(f));
    inputs.push_back(good);
  }
  std::vector<samplegen::UqffVariant> variants = samplegen::uqff_malformed_variants();
  for (samplegen::UqffVariant& v : samplegen::uqff_f8q8_variants()) variants.push_back(v);
  for (const samplegen::UqffVariant& v : variants) {
    Input in{v.name, v.status, {}};
    for (const samplegen::UqffFile& f : v.fixture.files) in.files.push_back(samplegen::uqff_file_bytes(f));
    inputs.push_back(in);
  }
  for (const Input& in : inputs) {
    for (size_t step : {size_t(0), size_t(1)}) {
      std::unique_ptr<Work> w(new Work);
      g_allocs = 0;
      g_armed = true;
      const Result r = run(in.files, step, w.get());
      g_armed = false;
      EXPECT_EQ(g_allocs.load(), 0) << in.name << " step " << step;
      EXPECT_STREQ(ws::status_name(r.status), in.status.c_str()) << in.name;
      if (in.name == "good") {
        EXPECT_EQ(r.decoded, 12u);
      }
      if (in.name == "good-f8q8") {
        EXPECT_EQ(r.decoded, 5u);
      }
    }
  }
}

}  // namespace

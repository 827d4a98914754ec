// The reader never allocates (DESIGN.md, hard rules): this binary links
// tests/support/alloc_counter.cpp, which replaces the global allocation functions — malloc, calloc,
// realloc, aligned allocation, free, and every operator new/delete — with counting wrappers around
// glibc's own allocator, and checks that not one call happens
// between constructing a Reader and its End (or Error) event, for every real file and every corpus
// case — safetensors and GGUF —, fed in 1-byte and 4 KiB pieces (GGUF inputs also with their size
// declared, which takes the early-rejection paths). The feeding loop itself works from buffers loaded
// beforehand and only touches fixed-size state, so any count is the library's.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "harness.h"
#include "json_reader.h"
#include "sha256.h"
#include "weightstream/shard_index.h"

using wsalloc::g_allocs;
using wsalloc::g_armed;
using wsalloc::g_frees;

namespace wstest {
namespace {

struct Input {
  std::string name;
  std::vector<uint8_t> bytes;
  std::string expected_status;  // from expected.json; "Ok" for real files
};

// What one run produced; filled inside the counting window using fixed-size state only.
struct Outcome {
  long allocs = 0, frees = 0;
  bool ended = false;
  ws::Status status = ws::Status::Ok;
  uint32_t tensors_begun = 0;
  uint64_t bytes_streamed = 0;
  uint8_t digest[32] = {};  // SHA-256 of every streamed byte, in order
};

Outcome run_counted(const Input& in, size_t piece, std::vector<uint64_t>* arena,
                    bool declare_size = false) {
  Outcome o;
  Sha256 sha;
  const uint8_t* data = in.bytes.data();
  const size_t size = in.bytes.size();
  g_allocs = 0;
  g_frees = 0;
  g_armed = true;
  {
    ws::Reader r(arena->data(), arena->size() * 8);
    if (declare_size) r.set_input_size(size);
    size_t fed = 0;
    for (uint64_t budget = 16 * uint64_t(size) + 4096; budget > 0; --budget) {
      ws::Event e = r.next();
      if (e.type == ws::EventType::NeedInput) {
        if (fed == size) {
          r.finish();
        } else {
          size_t n = size - fed < piece ? size - fed : piece;
          r.feed(data + fed, n);
          fed += n;
        }
      } else if (e.type == ws::EventType::TensorBegin) {
        ++o.tensors_begun;
      } else if (e.type == ws::EventType::TensorBytes) {
        sha.update(e.data, e.size);
        o.bytes_streamed += e.size;
      } else if (e.type == ws::EventType::End) {
        o.ended = true;
        break;
      } else if (e.type == ws::EventType::Error) {
        o.status = r.error().code;
        break;
      }
    }
  }
  g_armed = false;
  o.allocs = g_allocs;
  o.frees = g_frees;
  sha.finish(o.digest);
  return o;
}

std::vector<Input> load_inputs() {
  std::vector<Input> v;
  const std::string data = std::string(WS_TESTS_DIR) + "/data/";
  for (const char* sub : {"real/safetensors", "real/gguf", "synthetic/gguf"}) {
    const std::string ext = std::string(sub).find("gguf") != std::string::npos ? ".gguf" : ".safetensors";
    for (const std::string& path : list_files(data + sub, ext)) {
      Input in{path, {}, "Ok"};
      EXPECT_TRUE(read_file(path, &in.bytes)) << in.name;
      v.push_back(std::move(in));
    }
  }
  for (const char* format : {"safetensors", "gguf"}) {
    const std::string corpus = std::string(WS_TESTS_DIR) + "/corpus/" + format;
    Json expected = load_json_file(corpus + "/expected.json");
    for (const Json& c : expected.at("cases").items) {
      Input in{std::string(format) + "/" + c.at("file").str(), {}, c.at("status").str()};
      EXPECT_TRUE(read_file(corpus + "/" + c.at("file").str(), &in.bytes)) << in.name;
      v.push_back(std::move(in));
    }
  }
  return v;
}

bool is_gguf(const Input& in) { return in.bytes.size() >= 4 && memcmp(in.bytes.data(), "GGUF", 4) == 0; }

TEST(NoAllocation, ReaderNeverAllocatesOnAnyInput) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "sanitizer build: the allocator cannot be replaced";
#endif
  const std::vector<Input> inputs = load_inputs();
  ASSERT_GT(inputs.size(), 79u + 60u);
  size_t gguf_inputs = 0;
  for (const Input& in : inputs) gguf_inputs += is_gguf(in);
  ASSERT_GT(gguf_inputs, 60u);
  std::vector<uint64_t> arena(1 << 20);  // 8 MiB

  // The counter itself works (otherwise a zero would prove nothing).
  g_allocs = 0;
  g_armed = true;
  std::string* probe = new std::string(100, 'x');
  void* raw = malloc(16);
  g_armed = false;
  free(raw);
  delete probe;
  ASSERT_GE(g_allocs.load(), 2);

  for (const Input& in : inputs) {
    Outcome one = run_counted(in, 1, &arena);
    Outcome page = run_counted(in, 4096, &arena);
    for (const Outcome* o : {&one, &page}) {
      const char* how = o == &one ? "1-byte pieces" : "4 KiB pieces";
      EXPECT_EQ(o->allocs, 0) << in.name << ", " << how << ": allocation calls";
      EXPECT_EQ(o->frees, 0) << in.name << ", " << how << ": free calls";
      // A valid input was read the whole way (a reader stopping early would make the zero
      // vacuous); the exact status of the others is conformance_corpus_test's business.
      if (in.expected_status == "Ok") {
        EXPECT_TRUE(o->ended) << in.name << ", " << how << ": " << ws::status_name(o->status);
      }
    }
    // A declared size (GGUF may then reject counts and lengths early) allocates nothing either.
    if (is_gguf(in)) {
      Outcome sized = run_counted(in, 4096, &arena, true);
      EXPECT_EQ(sized.allocs, 0) << in.name << ", declared size: allocation calls";
      EXPECT_EQ(sized.frees, 0) << in.name << ", declared size: free calls";
    }
    // For valid inputs both runs streamed the same bytes (agreement on invalid ones is
    // conformance_corpus_test's business).
    if (in.expected_status == "Ok") {
      EXPECT_EQ(one.tensors_begun, page.tensors_begun) << in.name;
      EXPECT_EQ(one.bytes_streamed, page.bytes_streamed) << in.name;
      EXPECT_EQ(memcmp(one.digest, page.digest, 32), 0) << in.name;
    }
  }
}

TEST(NoAllocation, ShardIndexNeverAllocates) {
#ifndef WS_COUNTING_ALLOCATOR
  GTEST_SKIP() << "sanitizer build: the allocator cannot be replaced";
#endif
  const std::string shard_header = "{" + entry_json("a", "U8", "2", 0, 2) + "}";
  const std::vector<uint8_t> shard = make_safetensors(shard_header, pattern_bytes(2));
  const std::string index =
      "{\"metadata\":{\"total_size\":2},\"weight_map\":{\"a\":\"model-00001-of-00001.safetensors\"}}";
  const std::string shard_name = "model-00001-of-00001.safetensors";
  std::vector<uint64_t> index_arena(1 << 12), shard_arena(1 << 12);

  ws::Status statuses[4];
  g_allocs = 0;
  g_frees = 0;
  g_armed = true;
  {
    ws::ShardIndex idx(index_arena.data(), index_arena.size() * 8);
    for (char ch : index) statuses[0] = idx.feed(&ch, 1);
    statuses[1] = idx.finish();
    ws::Reader r(shard_arena.data(), shard_arena.size() * 8);
    r.feed(shard.data(), shard.size());
    ws::EventType t = ws::EventType::NeedInput;
    for (int i = 0; i < 16 && t != ws::EventType::HeaderReady && t != ws::EventType::Error; ++i)
      t = r.next().type;
    statuses[2] = idx.check_shard(shard_name.data(), shard_name.size(), r.tensors());
    statuses[3] = idx.finish_checks();
  }
  g_armed = false;
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_EQ(g_frees.load(), 0);
  for (ws::Status s : statuses) EXPECT_EQ(ws::status_name(s), std::string("Ok"));
}

}  // namespace
}  // namespace wstest

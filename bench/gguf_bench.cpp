// ws-bench-gguf: how fast weightstream reads GGUF headers, against ggml's own gguf_init_from_file
// (metadata only) on the same files, and how much memory each needs.
//
// Inputs: the real GGUF files of the shared test data (four llama.cpp vocab fixtures and
// hyllama's dummy model) and a synthetic Llama-3-sized header (synth_gguf.h) written to a temp file.
// Prints two tables (bench/README.md explains every column):
//   1. header throughput: ours from memory, ours through fread in 64 KiB pieces, ggml from the
//      file; fread/ggml against the 2x target; our arena peak and the heap ggml's context keeps;
//   2. from memory against gguf_init_from_buffer, and allocation calls per call.
//
//   ws-bench-gguf [--shared DIR] [--ggml PATH] [--case NAME]... [--min-time S] [--piece BYTES]
//   ws-bench-gguf --profile NAME [--impl mem|fread|ggml|ggml-buffer] [--calls N]
//   ws-bench-gguf --write-synthetic PATH
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "ggml_baseline.h"
#include "gguf_runner.h"
#include "host_info.h"
#include "measure.h"
#include "synth_gguf.h"
#include "table_format.h"
#include "weightstream/status.h"

#ifndef WS_SOURCE_DIR
#error "WS_SOURCE_DIR (the repository root) must be defined by the build"
#endif

namespace wsbench {
namespace {

// The issue's target: at least twice ggml's throughput, reading the same file the same way.
constexpr double kTargetRatio = 2.0;

struct Options {
  std::string shared = WS_SOURCE_DIR "/../shared";
  std::string ggml = std::string(WS_SOURCE_DIR "/") + kGgmlDefaultRelPath;
  std::vector<std::string> cases;  // empty: all
  size_t piece = 64 * 1024;
  MeasureOptions measure;
  std::string profile;             // non-empty: profile mode
  std::string impl = "mem";
  uint64_t profile_calls = 1;
  std::string write_synthetic;     // non-empty: write the synthetic file there and exit
};

// A case is a file on disk; the synthetic one is generated and written to a temp file first.
struct CaseDef {
  const char* name;
  const char* file;  // under <shared>/testdata/real/gguf/; nullptr: the synthetic header
};

const std::vector<CaseDef>& case_defs() {
  static const std::vector<CaseDef> defs = {
      {"llama-spm", "ggml-vocab-llama-spm.gguf"},
      {"bert-bge", "ggml-vocab-bert-bge.gguf"},
      {"deepseek-coder", "ggml-vocab-deepseek-coder.gguf"},
      {"gpt-2", "ggml-vocab-gpt-2.gguf"},
      {"hyllama-dummy", "hyllama-dummy.gguf"},
      {"synth-llama3-moe", nullptr},
  };
  return defs;
}

bool selected(const Options& o, const char* name) { return case_selected(o.cases, name); }

// The synthetic header on disk for as long as the benchmark runs (ggml only reads from files).
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  bool create(const std::vector<uint8_t>& bytes) {
    const char* dir = getenv("TMPDIR");
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/ws-bench-gguf-XXXXXX";
    int fd = mkstemp(&tmpl[0]);
    if (fd < 0) return false;
    close(fd);
    path_ = tmpl;
    return write_file(path_, bytes);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One input, loaded: its path (for fread and ggml) and its bytes (for the in-memory runs).
struct Input {
  std::string name;
  std::string path;
  std::vector<uint8_t> bytes;
  uint64_t expected_kvs = 0, expected_tensors = 0;  // synthetic only (0: unknown)
  bool synthetic = false;
};

bool load_input(const Options& o, const CaseDef& c, TempFile* tmp, Input* in) {
  in->name = c.name;
  if (!c.file) {
    SynthGguf g = make_llama3_moe_gguf();
    if (!tmp->create(g.bytes)) {
      fprintf(stderr, "%s: cannot write the synthetic header to a temp file\n", c.name);
      return false;
    }
    in->path = tmp->path();
    in->bytes = std::move(g.bytes);
    in->expected_kvs = g.kvs;
    in->expected_tensors = g.tensors;
    in->synthetic = true;
    return true;
  }
  in->path = o.shared + "/testdata/real/gguf/" + c.file;
  std::ifstream f(in->path, std::ios::binary);
  if (!f) {
    fprintf(stderr, "%s: cannot open %s (use --shared DIR)\n", c.name, in->path.c_str());
    return false;
  }
  in->bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

std::string ws_failure(const GgufRunResult& r) {
  if (r.io_error) return "I/O error";
  return std::string(ws::status_name(r.status)) + " @" + std::to_string(r.error_offset);
}

// Untimed check runs of our reader, from memory and through fread (they also size the arena).
// Both must reach HeaderReady and agree; the synthetic header must show what was written.
bool check_ours(GgufRunner* runner, const Input& in, GgufRunResult* mem, GgufRunResult* file) {
  *mem = runner->run_memory(in.bytes.data(), in.bytes.size());
  *file = runner->run_file(in.path.c_str());
  bool ok = mem->header_ready && file->header_ready && mem->kvs == file->kvs &&
            mem->tensors == file->tensors && mem->data_start == file->data_start &&
            mem->kv_bytes == file->kv_bytes;
  if (ok && in.synthetic)
    ok = mem->kvs == in.expected_kvs && mem->tensors == in.expected_tensors &&
         mem->data_start == in.bytes.size();
  if (!ok)
    fprintf(stderr, "%s: ours: memory %s (%llu KVs, %u tensors), fread %s (%llu KVs, %u tensors)\n",
            in.name.c_str(), mem->header_ready ? "HeaderReady" : ws_failure(*mem).c_str(),
            (unsigned long long)mem->kvs, mem->tensors,
            file->header_ready ? "HeaderReady" : ws_failure(*file).c_str(),
            (unsigned long long)file->kvs, file->tensors);
  return ok;
}

// What ggml needs for one gguf_init_from_file, measured on an untimed call: the heap its context
// keeps (mallinfo2 in use after init, before gguf_free: small blocks + mmap'ed large ones), the
// peak during init (counting allocator), and the allocation calls.
struct GgmlMemory {
  GgmlInfo info;
  int64_t kept_bytes = 0;
  HeapUse init;  // inside gguf_init_from_file
};

size_t heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

GgmlMemory measure_ggml_file(const GgmlBaseline& g, const std::string& path) {
  GgmlMemory m;
  size_t before = heap_in_use();
  AllocWindow w;
  void* ctx = g.init_file(path.c_str());
  m.init = w.stop();
  m.kept_bytes = int64_t(heap_in_use()) - int64_t(before);
  m.info = g.info(ctx);
  g.free_context(ctx);
  return m;
}

HeapUse measure_ggml_buffer(const GgmlBaseline& g, const Input& in) {
  AllocWindow w;
  void* ctx = g.init_buffer(in.bytes.data(), in.bytes.size());
  HeapUse u = w.stop();
  g.free_context(ctx);
  return u;
}

void print_banner(const Options& o, const GgmlBaseline& g, const std::string& ggml_error) {
  printf("weightstream GGUF header benchmark (ws-bench-gguf)\n");
  printf("CPU        : %s, %u logical CPUs\n", cpu_model().c_str(), logical_cpus());
  if (g.loaded())
    printf("baseline   : %s gguf_init_from_file(no_alloc, ctx = NULL), from\n             %s\n",
           g.version().c_str(), o.ggml.c_str());
  else
    printf("baseline   : NOT AVAILABLE (%s)\n"
           "             install it with `npm ci --prefix bench` (node-llama-cpp's prebuilt\n"
           "             libggml-base.so, from the npm registry), or pass --ggml PATH\n",
           ggml_error.c_str());
  printf("compiler   : " __VERSION__
#ifdef NDEBUG
         ", NDEBUG"
#else
         ", assertions ON (not a release build: numbers are not representative)"
#endif
         "\n");
  printf("method     : min time over repetitions, each configuration timed for >= %.2f s and\n"
         "             >= %d samples, interleaved; MB = 10^6 header bytes (magic to the data\n"
         "             section); files in the page cache; fread in pieces of %zu bytes\n\n",
         o.measure.min_total_s, o.measure.min_samples, o.piece);
}

// Everything measured on one input.
struct Row {
  Input in;
  bool ok_ours = false, ok_ggml = false;
  GgufRunResult mem, file;
  GgmlMemory gmem;
  HeapUse gbuf;
  double t_mem = 0, t_fread = 0, t_ggml = 0, t_ggml_buf = 0;  // best seconds per call
  double allocs_mem = 0, allocs_reader = 0, allocs_fread_call = 0;  // per timed call
};

bool measure_row(const Options& o, GgufRunner* runner, const GgmlBaseline& g, Row* row) {
  const Input& in = row->in;
  row->ok_ours = check_ours(runner, in, &row->mem, &row->file);
  if (g.loaded()) {
    row->gmem = measure_ggml_file(g, in.path);
    const GgmlInfo& gi = row->gmem.info;
    row->ok_ggml = gi.ok;
    if (!gi.ok) fprintf(stderr, "%s: gguf_init_from_file failed\n", in.name.c_str());
    else if (row->ok_ours && (uint64_t(gi.kvs) != row->mem.kvs || uint64_t(gi.tensors) != row->mem.tensors ||
                              gi.data_offset != row->mem.data_start))
      fprintf(stderr, "%s: ggml disagrees: %lld KVs, %lld tensors, data at %llu; ours %llu, %u, %llu\n",
              in.name.c_str(), (long long)gi.kvs, (long long)gi.tensors,
              (unsigned long long)gi.data_offset, (unsigned long long)row->mem.kvs, row->mem.tensors,
              (unsigned long long)row->mem.data_start);
    if (g.has_init_buffer()) row->gbuf = measure_ggml_buffer(g, in);
  }
  if (!row->ok_ours && !row->ok_ggml) return false;

  // Allocation counts over every timed call: the reader's own window (GgufRunResult::allocs) and,
  // for fread, the whole call with fopen/fclose.
  uint64_t n_mem = 0, n_file = 0, a_mem = 0, a_reader = 0, a_call = 0;
  std::vector<std::function<void()>> fns;
  if (row->ok_ours) {
    fns.push_back([&] {
      a_mem += runner->run_memory(in.bytes.data(), in.bytes.size()).allocs;
      ++n_mem;
    });
    fns.push_back([&] {
      uint64_t c0 = alloc_calls();
      a_reader += runner->run_file(in.path.c_str()).allocs;
      a_call += alloc_calls() - c0;
      ++n_file;
    });
  }
  if (row->ok_ggml) {
    fns.push_back([&] { g.free_context(g.init_file(in.path.c_str())); });
    if (g.has_init_buffer())
      fns.push_back([&] { g.free_context(g.init_buffer(in.bytes.data(), in.bytes.size())); });
  }
  std::vector<Timing> t = measure(fns, o.measure);
  size_t k = 0;
  if (row->ok_ours) {
    row->t_mem = t[k++].best_s;
    row->t_fread = t[k++].best_s;
    row->allocs_mem = double(a_mem) / double(n_mem);
    row->allocs_reader = double(a_reader) / double(n_file);
    row->allocs_fread_call = double(a_call) / double(n_file);
  }
  if (row->ok_ggml) {
    row->t_ggml = t[k++].best_s;
    if (g.has_init_buffer()) row->t_ggml_buf = t[k++].best_s;
  }
  return true;
}

// Header bytes: the data section's start, as both readers agree; the whole file when ours failed.
uint64_t header_bytes(const Row& r) {
  if (r.ok_ours) return r.mem.data_start;
  if (r.ok_ggml) return r.gmem.info.data_offset;
  return r.in.bytes.size();
}

void print_cell_mbps(bool ok, uint64_t bytes, double s, int width) { print_cell(ok, mbps(bytes, s), width, 0, "n/a"); }

void print_main_table(const std::vector<Row>& rows, bool have_ggml) {
  printf("GGUF headers read up to HeaderReady / gguf_init_from_file returning (no tensor data read)\n");
  printf("%-16s %11s %4s %7s | %8s %8s %8s | %10s | %11s %11s\n", "file", "header B", "KVs",
         "tensors", "ours mem", "ours", "ggml", "fread/ggml", "ours arena", "ggml heap");
  printf("%-16s %11s %4s %7s | %8s %8s %8s | %10s | %11s %11s\n", "", "", "", "", "MB/s",
         "fread", "file", "", "peak B", "kept B");
  printf("%-16s %11s %4s %7s | %8s %8s %8s | %10s | %11s %11s\n", "", "", "", "", "", "MB/s",
         "MB/s", "", "", "");
  print_rule(107);
  bool any_miss = false;
  for (const Row& r : rows) {
    uint64_t hb = header_bytes(r);
    uint64_t kvs = r.ok_ours ? r.mem.kvs : uint64_t(r.gmem.info.kvs);
    uint64_t tensors = r.ok_ours ? r.mem.tensors : uint64_t(r.gmem.info.tensors);
    printf("%-16s %11s %4llu %7s | ", r.in.name.c_str(), fmt_count(hb).c_str(),
           (unsigned long long)kvs, fmt_count(tensors).c_str());
    print_cell_mbps(r.ok_ours, hb, r.t_mem, 8);
    print_cell_mbps(r.ok_ours, hb, r.t_fread, 9);
    print_cell_mbps(r.ok_ggml, hb, r.t_ggml, 9);
    printf(" | ");
    if (r.ok_ours && r.ok_ggml) {
      double ratio = r.t_ggml / r.t_fread;
      bool miss = ratio_missed(ratio, kTargetRatio);
      any_miss |= miss;
      printf("%10s", ratio_cell(ratio, miss).c_str());
    } else {
      printf("%10s", "n/a");
    }
    printf(" | %11s %11s\n", r.ok_ours ? fmt_count(r.mem.arena_peak).c_str() : "n/a",
           r.ok_ggml ? fmt_count(uint64_t(std::max<int64_t>(r.gmem.kept_bytes, 0))).c_str() : "n/a");
    fflush(stdout);
  }
  printf("target: fread/ggml >= %.1f (ours through fread vs gguf_init_from_file: same file, same "
         "kind of I/O)%s\n",
         kTargetRatio, any_miss ? "; '*' = missed" : "");
  if (!have_ggml) printf("(ggml columns: baseline not available, see above)\n");
  printf("\n");
}

void print_memory_table(const std::vector<Row>& rows, bool have_buffer) {
  printf("From memory, and allocation calls per call (ours: every timed call counted; ggml: one call)\n");
  printf("%-16s | %8s %8s %8s | %8s %8s %8s | %8s %12s\n", "file", "ours mem", "ggml buf",
         "mem/buf", "ours mem", "ours rdr", "ours", "ggml", "ggml heap");
  printf("%-16s | %8s %8s %8s | %8s %8s %8s | %8s %12s\n", "", "MB/s", "MB/s", "", "allocs",
         "allocs", "fread", "allocs", "peak B");
  printf("%-16s | %8s %8s %8s | %8s %8s %8s | %8s %12s\n", "", "", "", "", "", "(fread)", "allocs",
         "(file)", "(file)");
  print_rule(107);
  bool any_alloc = false;
  for (const Row& r : rows) {
    uint64_t hb = header_bytes(r);
    bool buf = r.ok_ggml && have_buffer;
    printf("%-16s | ", r.in.name.c_str());
    print_cell_mbps(r.ok_ours, hb, r.t_mem, 8);
    print_cell_mbps(buf, hb, r.t_ggml_buf, 9);
    if (r.ok_ours && buf) printf(" %8.2f | ", r.t_ggml_buf / r.t_mem);
    else printf(" %8s | ", "n/a");
    if (r.ok_ours) {
      any_alloc |= r.allocs_mem != 0 || r.allocs_reader != 0;
      printf("%8.2f %8.2f %8.2f | ", r.allocs_mem, r.allocs_reader, r.allocs_fread_call);
    } else {
      printf("%8s %8s %8s | ", "n/a", "n/a", "n/a");
    }
    if (r.ok_ggml)
      printf("%8s %12s\n", fmt_count(r.gmem.init.calls).c_str(),
             fmt_count(r.gmem.init.peak_bytes).c_str());
    else
      printf("%8s %12s\n", "n/a", "n/a");
    fflush(stdout);
  }
  printf("ours: %s\n", any_alloc ? "ALLOCATED inside the reader (a bug: the library must not allocate)"
                                 : "0 allocations inside the reader in every timed call; the 1 per fread call "
                                   "is fopen's FILE");
  printf("\n");
}

}  // namespace

// Profile mode: one implementation on one input, `calls` times. Not inline and outside the
// anonymous namespace so that a profiler can be told to count only this:
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='wsbench::profiled_gguf_runs*'
__attribute__((noinline)) uint64_t profiled_gguf_runs(const std::function<bool()>& fn, uint64_t calls) {
  uint64_t ok = 0;
  for (uint64_t i = 0; i < calls; ++i) ok += fn();
  return ok;
}

namespace {

int run_profile(const Options& o) {
  const CaseDef* c = nullptr;
  for (const CaseDef& d : case_defs())
    if (o.profile == d.name) c = &d;
  if (!c) {
    fprintf(stderr, "unknown case '%s'\n", o.profile.c_str());
    return 2;
  }
  TempFile tmp;
  Input in;
  if (!load_input(o, *c, &tmp, &in)) return 1;
  GgufRunner runner(o.piece);
  GgmlBaseline g;
  std::string err;
  std::function<bool()> fn;
  if (o.impl == "mem" || o.impl == "fread") {
    GgufRunResult mem, file;
    if (!check_ours(&runner, in, &mem, &file)) return 1;  // also sizes the arena: steady state only
    if (o.impl == "mem") fn = [&] { return runner.run_memory(in.bytes.data(), in.bytes.size()).header_ready; };
    else fn = [&] { return runner.run_file(in.path.c_str()).header_ready; };
  } else if (o.impl == "ggml" || o.impl == "ggml-buffer") {
    if (!g.load(o.ggml, &err)) {
      fprintf(stderr, "ggml baseline not available: %s\n", err.c_str());
      return 1;
    }
    if (o.impl == "ggml") {
      fn = [&] {
        void* ctx = g.init_file(in.path.c_str());
        g.free_context(ctx);
        return ctx != nullptr;
      };
    } else {
      fn = [&] {
        void* ctx = g.init_buffer(in.bytes.data(), in.bytes.size());
        g.free_context(ctx);
        return ctx != nullptr;
      };
    }
  } else {
    fprintf(stderr, "unknown --impl '%s' (mem, fread, ggml, ggml-buffer)\n", o.impl.c_str());
    return 2;
  }
  uint64_t ok = profiled_gguf_runs(fn, o.profile_calls);
  printf("%s, %s: %s bytes, %llu of %llu calls succeeded\n", c->name, o.impl.c_str(),
         fmt_count(in.bytes.size()).c_str(), (unsigned long long)ok,
         (unsigned long long)o.profile_calls);
  return ok == o.profile_calls ? 0 : 1;
}

void usage(FILE* f) {
  fprintf(f,
          "usage: ws-bench-gguf [--shared DIR] [--ggml PATH] [--case NAME]... [--min-time SECONDS]\n"
          "                     [--piece BYTES]\n"
          "       ws-bench-gguf --profile NAME [--impl mem|fread|ggml|ggml-buffer] [--calls N]\n"
          "       ws-bench-gguf --write-synthetic PATH\n"
          "defaults: --shared %s/../shared\n"
          "          --ggml %s/%s\n"
          "cases:",
          WS_SOURCE_DIR, WS_SOURCE_DIR, kGgmlDefaultRelPath);
  for (const CaseDef& c : case_defs()) fprintf(f, " %s", c.name);
  fprintf(f, "\n");
}

}  // namespace
}  // namespace wsbench

int main(int argc, char** argv) {
  using namespace wsbench;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--shared" && has_value) {
      o.shared = argv[++i];
    } else if (a == "--ggml" && has_value) {
      o.ggml = argv[++i];
    } else if (a == "--case" && has_value) {
      o.cases.push_back(argv[++i]);
    } else if (a == "--min-time" && has_value) {
      o.measure.min_total_s = atof(argv[++i]);
    } else if (a == "--piece" && has_value) {
      o.piece = static_cast<size_t>(strtoull(argv[++i], nullptr, 10));
      if (o.piece == 0) o.piece = 1;
    } else if (a == "--profile" && has_value) {
      o.profile = argv[++i];
    } else if (a == "--impl" && has_value) {
      o.impl = argv[++i];
    } else if (a == "--calls" && has_value) {
      o.profile_calls = strtoull(argv[++i], nullptr, 10);
    } else if (a == "--write-synthetic" && has_value) {
      o.write_synthetic = argv[++i];
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (!o.write_synthetic.empty()) {
    SynthGguf g = make_llama3_moe_gguf();
    if (!write_file(o.write_synthetic, g.bytes)) {
      perror(o.write_synthetic.c_str());
      return 1;
    }
    printf("%s: %s bytes, %llu KVs, %llu tensors (data section of %s bytes not written)\n",
           o.write_synthetic.c_str(), fmt_count(g.bytes.size()).c_str(), (unsigned long long)g.kvs,
           (unsigned long long)g.tensors, fmt_count(g.data_size).c_str());
    return 0;
  }
  if (!o.profile.empty()) return run_profile(o);
  for (const std::string& c : o.cases) {
    if (std::none_of(case_defs().begin(), case_defs().end(), [&](const CaseDef& d) { return c == d.name; })) {
      usage(stderr);
      return 2;
    }
  }

  GgmlBaseline ggml;
  std::string ggml_error;
  ggml.load(o.ggml, &ggml_error);
  print_banner(o, ggml, ggml_error);

  GgufRunner runner(o.piece);
  TempFile tmp;
  std::vector<Row> rows;
  for (const CaseDef& c : case_defs()) {
    if (!selected(o, c.name)) continue;
    Row row;
    if (!load_input(o, c, &tmp, &row.in)) continue;
    if (row.in.synthetic)
      printf("%s: synthetic, %s bytes, written to %s\n", c.name, fmt_count(row.in.bytes.size()).c_str(),
             row.in.path.c_str());
    if (measure_row(o, &runner, ggml, &row)) rows.push_back(std::move(row));
    fflush(stdout);
  }
  if (rows.empty()) {
    fprintf(stderr, "nothing measured\n");
    return 1;
  }
  printf("\n");
  print_main_table(rows, ggml.loaded());
  print_memory_table(rows, ggml.loaded() && ggml.has_init_buffer());
  return 0;
}

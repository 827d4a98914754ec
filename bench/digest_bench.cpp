// ws-bench-digest [--size MiB] [--dir DIR] [--keep]: what SHA-256 verification costs (issue #17).
//
// 1. SHA-256 throughput over one in-memory buffer, fed in 64 KiB updates (as the loader feeds
//    reads): ws::Sha256 (lib/, portable C++), nettle's (the CLI's engine: Debian's build has
//    SHA-NI code) and OpenSSL's libcrypto (EVP_sha256), each when the benchmark was built with it —
//    beside the raw streaming rate: ws::Reader validating a safetensors file of the same size in
//    memory (every byte through the reader: its spans are zero-copy, so this is its overhead).
// 2. The load-time cost on a 1 GiB Ollama blob (generated here, deleted afterwards unless --keep):
//    blobs/sha256-<hex> of one F16 tensor and its manifest, loaded through ws::ModelLoader in
//    Validate mode with a file host (pread of 1 MiB blocks, as the CLI reads), with and without
//    verify_blobs() (ws::Sha256, and nettle's as the CLI's engine). Best of three each; the page
//    cache is warm (the blob was just written and read), so the numbers are the CPU's, not the
//    disk's.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "host_info.h"
#include "weightstream/model_loader.h"
#include "weightstream/reader.h"
#include "weightstream/sha256.h"

#ifdef WS_BENCH_OPENSSL
#include <openssl/evp.h>
#endif
#ifdef WS_BENCH_NETTLE
#include <nettle/sha2.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <typename F>
double best_of(int n, F f) {
  double best = 1e30;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    f();
    const double s = seconds_since(t0);
    if (s < best) best = s;
  }
  return best;
}

constexpr size_t kPiece = 64 << 10;

// A safetensors file of one F16 tensor of `bytes` bytes (deterministic data).
std::vector<uint8_t> safetensors_of(size_t bytes) {
  const std::string header = "{\"model.weight\":{\"dtype\":\"F16\",\"shape\":[" + std::to_string(bytes / 2) +
                             "],\"data_offsets\":[0," + std::to_string(bytes) + "]}}";
  std::string h = header;
  while ((h.size() + 8) % 8) h += ' ';
  std::vector<uint8_t> out(8 + h.size() + bytes);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(h.size()) >> (8 * i));
  memcpy(out.data() + 8, h.data(), h.size());
  uint32_t x = 0x12345678;
  for (size_t i = 8 + h.size(); i < out.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    out[i] = uint8_t(x >> 24);
  }
  return out;
}

double mb_per_s(size_t bytes, double s) { return double(bytes) / s / 1e6; }

void hash_ours(const std::vector<uint8_t>& b, uint8_t out[32]) {
  ws::Sha256 h;
  for (size_t at = 0; at < b.size(); at += kPiece) h.update(b.data() + at, std::min(kPiece, b.size() - at));
  h.finish(out);
}

#ifdef WS_BENCH_OPENSSL
void hash_openssl(const std::vector<uint8_t>& b, uint8_t out[32]) {
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  EVP_DigestInit_ex(c, EVP_sha256(), nullptr);
  for (size_t at = 0; at < b.size(); at += kPiece) EVP_DigestUpdate(c, b.data() + at, std::min(kPiece, b.size() - at));
  unsigned n = 32;
  EVP_DigestFinal_ex(c, out, &n);
  EVP_MD_CTX_free(c);
}
#endif

#ifdef WS_BENCH_NETTLE
void hash_nettle(const std::vector<uint8_t>& b, uint8_t out[32]) {
  sha256_ctx c;
  sha256_init(&c);
  for (size_t at = 0; at < b.size(); at += kPiece) sha256_update(&c, std::min(kPiece, b.size() - at), b.data() + at);
  sha256_digest(&c, 32, out);
}
// The CLI's engine (tools/cli/model_host.cpp).
const ws::Sha256Engine kNettle = {
    sizeof(sha256_ctx),
    [](void* s) { sha256_init(static_cast<sha256_ctx*>(s)); },
    [](void* s, const void* d, size_t n) { sha256_update(static_cast<sha256_ctx*>(s), n, static_cast<const uint8_t*>(d)); },
    [](void* s, uint8_t out[32]) { sha256_digest(static_cast<sha256_ctx*>(s), 32, out); },
};
#endif

// Every byte through ws::Reader (Validate: the raw streaming rate of the parser and data pump).
void stream_reader(const std::vector<uint8_t>& b) {
  static std::vector<uint64_t> arena(1 << 14);
  ws::Reader r(arena.data(), arena.size() * 8);
  r.set_input_size(b.size());
  size_t at = 0;
  for (;;) {
    const ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      const size_t n = std::min(kPiece, b.size() - at);
      if (n) r.feed(b.data() + at, n); else r.finish();
      at += n;
    } else if (e.type == ws::EventType::End || e.type == ws::EventType::Error) {
      if (e.type == ws::EventType::Error) fprintf(stderr, "reader: %s\n", ws::status_name(r.error().code));
      return;
    }
  }
}

// A manifest's model through the loader, files read with pread in 1 MiB blocks (the CLI's way).
bool load_manifest(const std::string& dir, bool verify, const ws::Sha256Engine* engine = nullptr) {
  static std::vector<uint64_t> arena(1 << 17);
  ws::ModelLoaderOptions opt;
  opt.mode = ws::ModelLoadMode::Validate;
  opt.read_size = 1 << 20;
  ws::ModelLoader L(arena.data(), arena.size() * 8, opt);
  if (verify) L.verify_blobs();
  if (engine) L.set_sha256_engine(engine);
  L.open(ws::ModelEntry::OllamaManifest, "manifest.json");
  std::vector<int> fds;
  static std::vector<uint8_t> buf(1 << 20);
  for (;;) {
    const ws::ModelEvent e = L.next();
    if (e.type == ws::ModelEventType::NeedRead) {
      while (fds.size() <= e.file) fds.push_back(-1);
      if (fds[e.file] < 0) {
        const std::string name(L.file_name(e.file).data, L.file_name(e.file).size);
        fds[e.file] = ::open((dir + "/" + name).c_str(), O_RDONLY);
        if (fds[e.file] < 0) {
          L.file_missing();
          continue;
        }
        struct stat st;
        fstat(fds[e.file], &st);
        L.set_file_size(uint64_t(st.st_size));
      }
      const ssize_t n = pread(fds[e.file], buf.data(), e.length, off_t(e.offset));
      if (n > 0) L.feed(buf.data(), size_t(n)); else L.end_of_file();
    } else if (e.type == ws::ModelEventType::Done || e.type == ws::ModelEventType::Error) {
      for (int fd : fds)
        if (fd >= 0) close(fd);
      if (e.type == ws::ModelEventType::Error) fprintf(stderr, "load: %s\n", ws::status_name(L.error().code));
      return e.type == ws::ModelEventType::Done;
    } else if (e.type == ws::ModelEventType::ModelReady) {
      L.select_all();
    }
  }
}

bool write_file(const std::string& path, const void* data, size_t n) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 1024;
  std::string dir;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc) mib = size_t(atol(argv[++i]));
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      fprintf(stderr, "usage: ws-bench-digest [--size MiB] [--dir DIR] [--keep]\n");
      return 2;
    }
  }
  printf("ws-bench-digest: %s, %u logical CPUs\n\n", wsbench::cpu_model().c_str(), wsbench::logical_cpus());

  // 1. Throughput, 256 MiB in memory.
  const std::vector<uint8_t> mem = safetensors_of(size_t(256) << 20);
  uint8_t d1[32], d2[32];
  printf("%-44s %10s\n", "in memory, 256 MiB in 64 KiB pieces", "MB/s");
  const double s_reader = best_of(3, [&] { stream_reader(mem); });
  printf("%-44s %10.0f\n", "ws::Reader, every byte (raw streaming)", mb_per_s(mem.size(), s_reader));
  const double s_ours = best_of(3, [&] { hash_ours(mem, d1); });
  printf("%-44s %10.0f\n", "SHA-256, ws::Sha256 (lib/, portable)", mb_per_s(mem.size(), s_ours));
#ifdef WS_BENCH_NETTLE
  const double s_nettle = best_of(3, [&] { hash_nettle(mem, d2); });
  printf("%-44s %10.0f\n", "SHA-256, nettle (the CLI's engine)", mb_per_s(mem.size(), s_nettle));
  if (memcmp(d1, d2, 32) != 0) {
    fprintf(stderr, "the two SHA-256s differ\n");
    return 1;
  }
#else
  printf("%-44s %10s\n", "SHA-256, nettle", "(not built)");
#endif
#ifdef WS_BENCH_OPENSSL
  const double s_ssl = best_of(3, [&] { hash_openssl(mem, d2); });
  printf("%-44s %10.0f\n", "SHA-256, OpenSSL libcrypto (EVP_sha256)", mb_per_s(mem.size(), s_ssl));
  if (memcmp(d1, d2, 32) != 0) {
    fprintf(stderr, "the two SHA-256s differ\n");
    return 1;
  }
#else
  (void)d2;
  printf("%-44s %10s\n", "SHA-256, OpenSSL libcrypto", "(not built)");
#endif

  // 2. A 1 GiB Ollama blob, loaded with and without verification.
  if (dir.empty()) {
    char tmpl[] = "/tmp/ws-bench-digest-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) return 1;
    dir = d;
  }
  mkdir((dir + "/blobs").c_str(), 0755);
  const std::vector<uint8_t> blob = safetensors_of((mib << 20) - 4096);
  uint8_t digest[32];
  ws::sha256(blob.data(), blob.size(), digest);
  char hex[65];
  ws::sha256_to_hex(digest, hex);
  const std::string blob_path = dir + "/blobs/sha256-" + hex;
  const std::string manifest =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",\"config\":{\"mediaType\":"
      "\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + std::string(64, '0') +
      "\",\"size\":2},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + hex +
      "\",\"size\":" + std::to_string(blob.size()) + ",\"name\":\"model.weight\"}]}";
  if (!write_file(blob_path, blob.data(), blob.size()) || !write_file(dir + "/manifest.json", manifest.data(), manifest.size())) {
    fprintf(stderr, "cannot write %s\n", dir.c_str());
    return 1;
  }
  bool ok = load_manifest(dir, false);  // the page cache holds the blob from here on
  const double plain = best_of(3, [&] { ok = load_manifest(dir, false) && ok; });
  const double verified = best_of(3, [&] { ok = load_manifest(dir, true) && ok; });
  printf("\n%s Ollama blob (%zu bytes), ws::ModelLoader Validate, pread 1 MiB, best of 3:\n", mib == 1024 ? "1 GiB" : "the",
         blob.size());
  printf("  %-30s %8.3f s  %6.0f MB/s\n", "without verification", plain, mb_per_s(blob.size(), plain));
  printf("  %-30s %8.3f s  %6.0f MB/s\n", "verify_blobs() (ws::Sha256)", verified, mb_per_s(blob.size(), verified));
  printf("  verification costs %.3f s (x%.2f)\n", verified - plain, verified / plain);
#ifdef WS_BENCH_NETTLE
  const double nettle = best_of(3, [&] { ok = load_manifest(dir, true, &kNettle) && ok; });
  printf("  %-30s %8.3f s  %6.0f MB/s\n", "verify_blobs(), nettle engine", nettle, mb_per_s(blob.size(), nettle));
  printf("  verification costs %.3f s (x%.2f)\n", nettle - plain, nettle / plain);
#endif
  if (!keep) {
    unlink(blob_path.c_str());
    unlink((dir + "/manifest.json").c_str());
    rmdir((dir + "/blobs").c_str());
    rmdir(dir.c_str());
  }
  return ok ? 0 : 1;
}

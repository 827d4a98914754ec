// ws-bench-model [--cli PATH] [--weights 1000,10000,100000] [--shards 400,8000] [--keep DIR]: the
// model layer's cost per weight and per file as models grow (issue #16). For each size, an MLX model (model.safetensors with n
// 4-bit g32 linears — U32 [2, 4] packed weight, BF16 [2, 1] scales and biases — and its
// config.json) is written to a temporary directory, then the CLI is timed on it:
//   inspect --json FILE            (every header, the logical model, its plan, every byte read)
//   dequant --all -o DIR FILE      (every weight decoded to f32, one output file each)
// Printed: seconds per run, microseconds per weight, and the ratio of each size's time per weight
// to the smallest's (the issue asks for at most 2 at 100k against 1k). Then, for each shard count, a
// Hugging Face sharded model (model.safetensors.index.json and n shards of two F32 [2] tensors):
//   validate FILE                  (the index, every shard's header and data, the cross-checks)
// with seconds per shard and the ratio to the smallest count's. Wall time of the whole command,
// best of three runs; the output directory is emptied between runs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "host_info.h"

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/ws-bench-model-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

bool write_file(const std::string& path, const std::string& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return fclose(f) == 0 && ok;
}

// The safetensors file: header entries in data order (weight, scales, biases per linear).
std::string mlx_model(uint32_t n) {
  std::string header = "{\"__metadata__\":{\"format\":\"mlx\"}";
  std::string data;
  uint64_t at = 0;
  auto tensor = [&](const std::string& name, const char* dtype, const char* shape, uint64_t bytes, uint8_t fill) {
    header += ",\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
              std::to_string(at) + "," + std::to_string(at + bytes) + "]}";
    for (uint64_t i = 0; i < bytes; ++i) data.push_back(char(fill + (i & 7)));
    at += bytes;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".proj.";
    tensor(p + "weight", "U32", "[2,4]", 32, 0x11);
    tensor(p + "scales", "BF16", "[2,1]", 4, 0x3c);
    tensor(p + "biases", "BF16", "[2,1]", 4, 0x3b);
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[size_t(b)] = char((uint64_t(header.size()) >> (8 * b)) & 0xFF);
  return out + header + data;
}

// A safetensors file of F32 [2] tensors holding `value`, header entries in data order.
std::string f32_file(const std::vector<std::string>& names, float value) {
  std::string header = "{";
  std::string data;
  uint64_t at = 0;
  for (const std::string& name : names) {
    if (header.size() > 1) header += ",";
    header += "\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" + std::to_string(at) + "," +
              std::to_string(at + 8) + "]}";
    for (int k = 0; k < 2; ++k) data.append(reinterpret_cast<const char*>(&value), 4);
    at += 8;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[size_t(b)] = char((uint64_t(header.size()) >> (8 * b)) & 0xFF);
  return out + header + data;
}

// model-00001-of-0000N.safetensors ..., as Hugging Face names shards.
std::string shard_name(size_t i, size_t n) {
  char buf[64];
  snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", i + 1, n);
  return buf;
}

// A sharded model of n shards in dir: its index's path, or "" when a file cannot be written.
std::string write_sharded(const std::string& dir, size_t n) {
  std::string map;
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> names;
    for (int k = 0; k < 2; ++k) {
      names.push_back("model.layers." + std::to_string(i) + ".w" + std::to_string(k));
      map += std::string(map.empty() ? "" : ",") + "\"" + names.back() + "\":\"" + shard_name(i, n) + "\"";
    }
    if (!write_file(dir + "/" + shard_name(i, n), f32_file(names, float(i)))) return "";
  }
  const std::string index = dir + "/model.safetensors.index.json";
  const std::string doc = "{\"metadata\":{\"total_size\":" + std::to_string(n * 16) + "},\"weight_map\":{" + map + "}}";
  return write_file(index, doc) ? index : "";
}

double run_seconds(const std::string& cmd, int repeats, const std::string& cleanup) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    if (!cleanup.empty() && system(cleanup.c_str()) != 0) return -1;
    const auto t0 = std::chrono::steady_clock::now();
    if (system(cmd.c_str()) != 0) return -1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cli = WS_CLI_PATH;
  std::vector<uint32_t> sizes = {1000, 10000, 100000};
  std::vector<uint32_t> shard_counts = {400, 8000};
  std::string keep;
  auto parse_list = [](const char* p, std::vector<uint32_t>* out) {
    out->clear();
    while (*p) {
      out->push_back(uint32_t(strtoul(p, const_cast<char**>(&p), 10)));
      if (*p == ',') ++p;
      else if (*p) break;
    }
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cli" && i + 1 < argc) {
      cli = argv[++i];
    } else if (a == "--weights" && i + 1 < argc) {
      parse_list(argv[++i], &sizes);
    } else if (a == "--shards" && i + 1 < argc) {
      parse_list(argv[++i], &shard_counts);
    } else if (a == "--keep" && i + 1 < argc) {
      keep = argv[++i];
    } else {
      fprintf(stderr, "usage: ws-bench-model [--cli PATH] [--weights 1000,10000,100000] [--shards 400,8000] [--keep DIR]\n");
      return 2;
    }
  }
  printf("CPU: %s\nCLI: %s\n\n", wsbench::cpu_model().c_str(), cli.c_str());
  printf("%10s %12s %14s %12s %14s %12s %12s\n", "weights", "inspect s", "inspect us/w", "dequant s", "dequant us/w",
         "inspect x", "dequant x");
  double base_inspect = 0, base_dequant = 0;
  for (uint32_t n : sizes) {
    const std::string dir = keep.empty() ? temp_dir() : keep + "/" + std::to_string(n);
    if (!keep.empty()) mkdir(keep.c_str(), 0755), mkdir(dir.c_str(), 0755);
    const std::string model = dir + "/model.safetensors";
    if (!write_file(model, mlx_model(n)) ||
        !write_file(dir + "/config.json", "{\"quantization\": {\"group_size\": 32, \"bits\": 4}}")) {
      fprintf(stderr, "ws-bench-model: cannot write %s\n", dir.c_str());
      return 1;
    }
    const std::string out = dir + "/out";
    const double inspect = run_seconds("'" + cli + "' inspect --json --no-progress '" + model + "' > /dev/null", 3, "");
    const double dequant = run_seconds("'" + cli + "' dequant --all --no-progress -o '" + out + "' '" + model + "' > /dev/null", 3,
                                       "rm -rf '" + out + "'");
    if (inspect < 0 || dequant < 0) {
      fprintf(stderr, "ws-bench-model: the CLI failed on %s\n", model.c_str());
      return 1;
    }
    const double iw = inspect / n * 1e6, dw = dequant / n * 1e6;
    if (base_inspect == 0) base_inspect = iw, base_dequant = dw;
    printf("%10u %12.3f %14.2f %12.3f %14.2f %12.2f %12.2f\n", n, inspect, iw, dequant, dw, iw / base_inspect,
           dw / base_dequant);
    fflush(stdout);
    if (keep.empty() && system(("rm -rf '" + dir + "'").c_str()) != 0) return 1;
  }
  printf("\n%10s %12s %14s %12s\n", "shards", "validate s", "validate us/f", "validate x");
  double base_shard = 0;
  for (uint32_t n : shard_counts) {
    const std::string dir = keep.empty() ? temp_dir() : keep + "/shards-" + std::to_string(n);
    if (!keep.empty()) mkdir(keep.c_str(), 0755), mkdir(dir.c_str(), 0755);
    const std::string index = write_sharded(dir, n);
    if (index.empty()) {
      fprintf(stderr, "ws-bench-model: cannot write %s\n", dir.c_str());
      return 1;
    }
    const double validate = run_seconds("'" + cli + "' validate --no-progress '" + index + "' > /dev/null", 3, "");
    if (validate < 0) {
      fprintf(stderr, "ws-bench-model: the CLI failed on %s\n", index.c_str());
      return 1;
    }
    const double per = validate / n * 1e6;
    if (base_shard == 0) base_shard = per;
    printf("%10u %12.3f %14.2f %12.2f\n", n, validate, per, per / base_shard);
    fflush(stdout);
    if (keep.empty() && system(("rm -rf '" + dir + "'").c_str()) != 0) return 1;
  }
  return 0;
}

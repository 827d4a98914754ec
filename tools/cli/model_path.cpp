// weightstream CLI — model directories (see model_path.h).
#include "model_path.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "weightstream/model_loader.h"

namespace wscli {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const std::string x = suffix;
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The number before ".uqff" (model-10.uqff -> 10), so model-2 sorts before model-10.
unsigned long long shard_number(const std::string& name) {
  size_t end = name.size() - 5, begin = end;
  while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9') --begin;
  return begin < end ? strtoull(name.substr(begin, end - begin).c_str(), nullptr, 10) : 0;
}

}  // namespace

bool resolve_model_dir(const std::string& path, std::string* resolved, std::string* why) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  resolved->clear();
  const std::string dir = path.empty() || path.back() == '/' ? path : path + "/";
  if (is_file(dir + "model.safetensors.index.json")) {
    *resolved = dir + "model.safetensors.index.json";
    return true;
  }
  std::vector<std::string> uqff, models;
  if (DIR* d = opendir(path.c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (!is_file(dir + name)) continue;
      if (ws::model_entry_from_name(name.data(), name.size()) == ws::ModelEntry::UqffFiles) uqff.push_back(name);
      if (ends_with(name, ".safetensors") || ends_with(name, ".gguf")) models.push_back(name);
    }
    closedir(d);
  }
  if (!uqff.empty()) {
    std::sort(uqff.begin(), uqff.end(), [](const std::string& a, const std::string& b) {
      return shard_number(a) != shard_number(b) ? shard_number(a) < shard_number(b) : a < b;
    });
    *resolved = dir + uqff.front();
    return true;
  }
  if (is_file(dir + "model.safetensors")) {
    *resolved = dir + "model.safetensors";
    return true;
  }
  if (models.size() == 1) {
    *resolved = dir + models.front();
    return true;
  }
  *why = models.empty() ? "the directory holds no model.safetensors.index.json, *.uqff, *.safetensors or *.gguf file"
                        : "the directory holds " + std::to_string(models.size()) +
                              " model files and no model.safetensors.index.json: name one of them";
  return true;
}

}  // namespace wscli

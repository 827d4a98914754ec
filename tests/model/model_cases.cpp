// tests/model — the goldens' cases (see model_cases.h).
#include "model_cases.h"

#include <dirent.h>

#include <fstream>

using clitest::Json;

namespace modeltest {
namespace {

const std::string kRoot = WS_SOURCE_DIR;

std::vector<std::string> listdir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

bool ends_with(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

const std::vector<Case>& cases() {
  static std::vector<Case> all = [] {
    std::vector<Case> out;
    std::ifstream in(kRoot + "/tests/model/golden/cli.jsonl");
    std::string line;
    std::getline(in, line);  // {"cli_commit": ...}
    std::map<std::string, size_t> at;
    while (std::getline(in, line)) {
      const Json j = clitest::parse_json(line);
      const std::string name = j["case"].str();
      if (!at.count(name)) {
        at[name] = out.size();
        out.push_back(Case());
        out.back().name = name;
        out.back().variant = name.rfind("variants/", 0) == 0;
      }
      Case& c = out[at[name]];
      Record r;
      for (const Json& a : j["argv"].items) r.argv.push_back(a.str());
      r.exit = int(j["exit"].u64());
      if (j.has("stdout")) {
        try {
          r.out = clitest::parse_json(j["stdout"].str());
          r.has_stdout = true;
        } catch (...) {
        }
      }
      if (j.has("outputs"))
        for (const auto& m : j["outputs"].members) r.outputs[m.first] = m.second.str();
      c.entry = r.argv.back();
      std::string key = r.argv[0];
      if (key == "dequant") key += r.argv[4] == "f16" ? "-f16" : "-f32";
      c.rec[key] = r;
    }
    return out;
  }();
  return all;
}

const modeltest::VariantDirs& variants() {
  static modeltest::VariantDirs v = modeltest::model_variants();
  return v;
}

// How the loader opens a case: its files, entry kind and name, and (UQFF) the directory listing.
Opened open_case(const Case& c) {
  Opened o;
  const size_t slash = c.entry.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : c.entry.substr(0, slash);
  o.name = c.entry.substr(slash + 1);
  if (c.variant) {
    const auto& files = variants().at(dir);
    o.files = modeltest::memory_files(files);
    for (const auto& f : files) o.listing.push_back(f.first);
  } else {
    o.files = modeltest::disk_files(kRoot + "/" + dir);
    o.listing = listdir(kRoot + "/" + dir);
  }
  if (ends_with(o.name, ".index.json")) o.entry = ws::ModelEntry::ShardIndex;
  else if (ends_with(o.name, ".uqff")) o.entry = ws::ModelEntry::UqffFiles;
  else if (o.name == "manifest.json") o.entry = ws::ModelEntry::OllamaManifest;
  if (o.entry != ws::ModelEntry::UqffFiles) o.listing.clear();
  return o;
}

}  // namespace modeltest

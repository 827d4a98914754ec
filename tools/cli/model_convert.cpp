// weightstream CLI — `convert` (model_convert.h): the plan is the library's (ws::ConvertPlan, built
// at ModelReady); this file opens files, moves the bytes, hashes and resumes.
#include "model_convert.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dequant_output.h"
#include "model_host.h"
#include "problem_text.h"
#include "progress.h"
#include "scan_model.h"
#include "text_format.h"
#include "weightstream/convert_plan.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/sha256.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "convert writes host-order values");

namespace wscli {
namespace {

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

// SHA-256 of the output files: the host's engine (nettle) where it has one. ws::Sha256 ran at
// ~200 MB/s here, 80% of a conversion's time (perf, bench/convert_bench.py).
class Hasher {
 public:
  Hasher() : engine_(host_sha256_engine()) {
    if (engine_) engine_->init(state_);
  }
  void update(const void* p, size_t n) {
    if (engine_) engine_->update(state_, p, n);
    else own_.update(p, n);
  }
  void finish(uint8_t out[ws::kSha256Bytes]) {
    if (engine_) engine_->finish(state_, out);
    else own_.finish(out);
  }

 private:
  const ws::Sha256Engine* engine_;
  alignas(16) uint8_t state_[ws::kSha256EngineState];
  ws::Sha256 own_;
};

// The execution state of one of the plan's output files.
struct Shard {
  std::string name;
  ws::SafetensorsWriter writer;
  std::string header;
  uint64_t size = 0;
  bool kept = false;      // complete from an earlier run
  bool done = false;
  FILE* file = nullptr;
  std::unique_ptr<Hasher> sha;
};

bool file_sha256(const std::string& path, uint8_t digest[ws::kSha256Bytes]) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return false;
  Hasher h;
  std::vector<uint8_t> buf(1 << 20);
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
  const bool ok = !ferror(f);
  fclose(f);
  h.finish(digest);
  return ok;
}

std::string read_small(const std::string& path, bool* ok) {
  *ok = false;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return "";
  std::string s;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  *ok = !ferror(f);
  fclose(f);
  return s;
}

bool write_whole(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".partial";
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) return false;
  bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = fclose(f) == 0 && ok;
  return ok && rename(tmp.c_str(), path.c_str()) == 0;
}

class Convert {
 public:
  explicit Convert(const CliOptions& o) : opt_(o), args_(o.convert), path_(o.files[0]), dir_(o.dequant.output) {}
  int run();

 private:
  bool on_ready(ws::ModelLoader& L);
  bool on_event(ws::ModelLoader& L, const ws::ModelEvent& e);
  bool plan_shard_headers(const ws::ModelLoader& L);
  bool open_shard(uint32_t s);
  bool close_shard(uint32_t s);
  bool write_config();
  bool io_fail(const std::string& what) {
    problem_ = io_problem(what, strerror(errno), 0);
    exit_ = 2;
    return false;
  }
  bool writer_fail(const Shard& s) {
    const ws::Error& e = s.writer.error();
    problem_ = usage_problem(ws::status_name(e.code),
                             s.name + ": " + ws::status_description(e.code) + " at output offset " +
                                 std::to_string(e.offset),
                             "");
    exit_ = 2;
    return false;
  }

  const CliOptions& opt_;
  const ConvertArgs& args_;
  const std::string path_;
  const std::string dir_;
  HostSettings settings_;
  ModelHost* host_ = nullptr;
  ws::ConvertOptions copt_;
  ws::ConvertPlan plan_;
  std::vector<uint64_t> plan_arena_;
  std::vector<std::string> skipped_;
  std::vector<Shard> shards_;
  uint64_t total_ = 0, written_total_ = 0;
  int cur_shard_ = -1;
  int64_t cur_entry_ = -1;
  std::unique_ptr<Progress> progress_;
  std::optional<Problem> problem_;
  int exit_ = 0;
};

bool Convert::on_ready(ws::ModelLoader& L) {
  skipped_.clear();
  shards_.clear();
  auto filter = [](void* ctx, const char* name, size_t n) {
    const std::vector<std::string>& globs = *static_cast<const std::vector<std::string>*>(ctx);
    const std::string s(name, n);
    for (const std::string& g : globs)
      if (fnmatch(g.c_str(), s.c_str(), 0) == 0) return true;
    return false;
  };
  void* fctx = const_cast<std::vector<std::string>*>(&args_.filters);
  ws::ConvertFilter f = args_.filters.empty() ? nullptr : +filter;
  ws::Status st = plan_.build(L, copt_, f, fctx, plan_arena_.data(), plan_arena_.size() * 8);
  if (st == ws::Status::ArenaExhausted) {
    plan_arena_.assign(plan_.arena_needed() / 8 + 1, 0);
    st = plan_.build(L, copt_, f, fctx, plan_arena_.data(), plan_arena_.size() * 8);
  }
  shards_.resize(plan_.shard_count());
  for (uint32_t s = 0; s < plan_.shard_count(); ++s) shards_[s].name = plan_.shard(s).name;
  if (st != ws::Status::Ok) {
    const uint32_t s = plan_.failed_shard();
    problem_ = usage_problem(ws::status_name(st),
                             (s < shards_.size() ? shards_[s].name + ": " : std::string()) +
                                 ws::status_description(st) + " at output offset " +
                                 std::to_string(plan_.error().offset),
                             "");
    exit_ = 2;
    return false;
  }
  for (uint32_t i = 0; i < plan_.skipped_count(); ++i) skipped_.push_back(str(L.weight(plan_.skipped(i)).name));
  if (!plan_shard_headers(L)) return false;
  // The weights of the shards still to write.
  total_ = 0;
  for (uint32_t k = 0; k < plan_.entry_count(); ++k) {
    const ws::ConvertEntry& e = plan_.entry(k);
    if (shards_[e.shard].kept) continue;
    L.select(e.weight);
    total_ += e.decision.bytes;
  }
  progress_.reset(new Progress("convert", true, total_, opt_.scan.progress));
  return true;
}

// Each shard's header from the plan, and whether an earlier run left it complete: the file there
// with the planned size, the planned header, and the digest recorded when it was finished.
bool Convert::plan_shard_headers(const ws::ModelLoader&) {
  for (uint32_t i = 0; i < shards_.size(); ++i) {
    Shard& s = shards_[i];
    if (plan_.init_writer(i, &s.writer) != ws::Status::Ok) return writer_fail(s);
    s.size = s.writer.file_size();
    s.header.resize(size_t(s.writer.header_size()));
    size_t got = 0;
    if (s.writer.header(reinterpret_cast<uint8_t*>(&s.header[0]), s.header.size(), &got) != ws::Status::Ok ||
        got != s.header.size())
      return writer_fail(s);
    const std::string path = dir_ + "/" + s.name;
    struct stat st;
    bool ok = false;
    const std::string recorded = read_small(dir_ + "/." + s.name + ".sha256", &ok);
    if (!ok || stat(path.c_str(), &st) != 0 || uint64_t(st.st_size) != s.size) continue;
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) continue;
    std::string head(s.header.size(), '\0');
    const bool same_header = fread(&head[0], 1, head.size(), f) == head.size() && head == s.header;
    fclose(f);
    if (!same_header) continue;
    uint8_t digest[ws::kSha256Bytes];
    char hex[ws::kSha256HexChars + 1];
    if (!file_sha256(path, digest)) continue;
    ws::sha256_to_hex(digest, hex);
    if (recorded.compare(0, ws::kSha256HexChars, hex) == 0) s.kept = true;
  }
  return true;
}

bool Convert::open_shard(uint32_t i) {
  Shard& s = shards_[i];
  const std::string path = dir_ + "/" + s.name + ".partial";
  s.file = fopen(path.c_str(), "wb");
  if (!s.file) return io_fail("cannot write " + path);
  if (fwrite(s.header.data(), 1, s.header.size(), s.file) != s.header.size()) return io_fail("cannot write " + path);
  s.sha.reset(new Hasher());
  s.sha->update(s.header.data(), s.header.size());
  cur_shard_ = int(i);
  return true;
}

bool Convert::close_shard(uint32_t i) {
  Shard& s = shards_[i];
  if (s.writer.finish() != ws::Status::Ok) return writer_fail(s);
  const std::string path = dir_ + "/" + s.name;
  if (fclose(s.file) != 0) {
    s.file = nullptr;
    return io_fail("cannot write " + path + ".partial");
  }
  s.file = nullptr;
  unlink((dir_ + "/." + s.name + ".sha256").c_str());
  if (rename((path + ".partial").c_str(), path.c_str()) != 0) return io_fail("cannot rename to " + path);
  uint8_t digest[ws::kSha256Bytes];
  char hex[ws::kSha256HexChars + 1];
  s.sha->finish(digest);
  ws::sha256_to_hex(digest, hex);
  if (!write_whole(dir_ + "/." + s.name + ".sha256", std::string(hex) + "\n"))
    return io_fail("cannot write " + dir_ + "/." + s.name + ".sha256");
  s.done = true;
  cur_shard_ = -1;
  return true;
}

bool Convert::on_event(ws::ModelLoader& L, const ws::ModelEvent& e) {
  switch (e.type) {
    case ws::ModelEventType::ModelReady:
      return on_ready(L);
    case ws::ModelEventType::WeightBegin: {
      cur_entry_ = int64_t(plan_.entry_of_weight(e.weight));
      const ws::ConvertEntry& en = plan_.entry(uint32_t(cur_entry_));
      if (cur_shard_ != int(en.shard)) {
        if (cur_shard_ >= 0 && !close_shard(uint32_t(cur_shard_))) return false;
        if (!open_shard(en.shard)) return false;
      }
      return true;
    }
    case ws::ModelEventType::WeightData: {
      // A weight passed stored hands out its packed piece (the output) and any companions
      // (not outputs: a kept weight has none to decode with).
      if (e.role != ws::PieceRole::Packed) return true;
      const ws::ConvertEntry& en = plan_.entry(uint32_t(cur_entry_));
      Shard& s = shards_[en.shard];
      if (s.writer.data(en.row, e.size) != ws::Status::Ok) return writer_fail(s);
      if (fwrite(e.data, 1, e.size, s.file) != e.size)
        return io_fail("cannot write " + dir_ + "/" + s.name + ".partial");
      s.sha->update(e.data, e.size);
      written_total_ += e.size;
      progress_->update(written_total_);
      return true;
    }
    case ws::ModelEventType::WeightEnd: {
      const ws::ConvertEntry& en = plan_.entry(uint32_t(cur_entry_));
      Shard& s = shards_[en.shard];
      // The shard's last weight: the file is complete (zero-byte weights after it need no data).
      if (s.writer.current_tensor() == plan_.shard(en.shard).count && !close_shard(en.shard)) return false;
      return true;
    }
    default:
      return true;
  }
}

bool Convert::write_config() {
  // config.json beside the model, without its quantization sections, when the plan writes one.
  if (!plan_.writes_config()) return true;
  bool ok = false;
  const std::string in = read_small(host_->dir() + "config.json", &ok);
  if (!ok) return true;  // no config.json: none written
  std::string out;
  uint32_t removed = 0;
  auto sink = [](void* ctx, const uint8_t* p, size_t n) {
    static_cast<std::string*>(ctx)->append(reinterpret_cast<const char*>(p), n);
    return true;
  };
  if (ws::config_without_quantization(reinterpret_cast<const uint8_t*>(in.data()), in.size(), sink, &out, &removed) !=
      ws::Status::Ok)
    out = in;  // not an object: copied as it is
  if (!write_whole(dir_ + "/config.json", out)) return io_fail("cannot write " + dir_ + "/config.json");
  return true;
}

int Convert::run() {
  if (path_ == "-") {
    fprintf(stderr, "weightstream: convert reads the model by ranges: give a file, not standard input\n");
    return 2;
  }
  ws::OutType to;
  ws::out_type_from_name(args_.to.c_str(), &to);
  copt_.to = to;
  copt_.max_shard_size = args_.max_shard_size;
  uint64_t stored_formats = 0;
  for (const std::string& k : args_.keep) {
    ws::DType d;
    std::string up = k;
    for (char& c : up) c = char(toupper(static_cast<unsigned char>(c)));
    if (!ws::dtype_from_name(up.data(), up.size(), &d)) {
      fprintf(stderr, "weightstream: --keep wants a safetensors dtype (F32, BF16, F16, ...), not '%s'\n", k.c_str());
      return 2;
    }
    copt_.keep_dtypes |= 1u << uint32_t(d);
  }
  stored_formats = ws::convert_stored_formats(copt_.keep_dtypes);
  if (std::optional<Problem> p = prepare_output_dir(dir_)) {
    fprintf(stderr, "weightstream: %s\n", problem_line(*p).c_str());
    return 2;
  }
  settings_ = model_settings(path_, opt_.scan);
  settings_.mode = ws::ModelLoadMode::Decode;
  settings_.out = to;
  settings_.pass_stored = true;
  settings_.stored_formats = stored_formats;
  settings_.scan.progress = false;  // one bar: the conversion's
  ModelHost h(settings_);
  host_ = &h;
  h.run([this](ws::ModelLoader& L, const ws::ModelEvent& e) { return on_event(L, e); });
  if (progress_) progress_->finish();
  print_warnings(path_, h.warnings());  // what the library warned of in the weights it decoded
  if (!problem_ && h.io()) {
    problem_ = *h.io();
    exit_ = 2;
  } else if (!problem_ && h.failed()) {
    problem_ = h.problem();
    exit_ = problem_->io ? 2 : 1;
  }
  // Shards with nothing selected (complete from an earlier run, or only zero-byte weights).
  for (uint32_t s = 0; !problem_ && s < shards_.size(); ++s) {
    Shard& sh = shards_[s];
    if (sh.kept || sh.done) continue;
    if (cur_shard_ != int(s) && !open_shard(s)) break;
    close_shard(s);
  }
  if (cur_shard_ >= 0 && shards_[size_t(cur_shard_)].file) {
    fclose(shards_[size_t(cur_shard_)].file);  // an interrupted shard stays .partial
    shards_[size_t(cur_shard_)].file = nullptr;
  }
  if (!problem_ && shards_.size() > 1) {
    std::string out;
    auto sink = [](void* ctx, const uint8_t* p, size_t n) {
      static_cast<std::string*>(ctx)->append(reinterpret_cast<const char*>(p), n);
      return true;
    };
    plan_.write_index(sink, &out);
    if (!write_whole(dir_ + "/" + ws::kConvertIndexName, out)) io_fail("cannot write the index");
  }
  if (!problem_) write_config();
  if (problem_) {
    fprintf(stderr, "weightstream: %s: %s\n", display_text(path_).c_str(), problem_line(*problem_).c_str());
    return exit_ ? exit_ : 1;
  }
  uint32_t kept = 0;
  for (const Shard& s : shards_) kept += s.kept;
  for (const std::string& n : skipped_) printf("%s: skipped: no float decoding and no safetensors dtype\n", n.c_str());
  printf("%u weights to %s in %zu file%s (%s of %s from %s)%s\n", plan_.entry_count(), dir_.c_str(), shards_.size(),
         shards_.size() == 1 ? "" : "s", bytes_text(total_).c_str(), args_.to.c_str(), plan_.converted_from(),
         kept ? (", " + std::to_string(kept) + " kept from an earlier run").c_str() : "");
  return 0;
}

}  // namespace

int run_convert(const CliOptions& options) {
  Convert job(options);
  return job.run();
}

}  // namespace wscli

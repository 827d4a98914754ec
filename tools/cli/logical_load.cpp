// weightstream CLI — logical weights of a file or sharded model (see logical_load.h).
#include "logical_load.h"

#include "json_doc_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "error_text.h"
#include "file_source.h"
#include "manifest_blobs.h"
#include "scan_sharded.h"
#include "text_format.h"
#include "weightstream/dequant.h"

namespace wscli {
namespace {

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Streams a file into `t->reader` until its header validated (the data is not read). One retry
// with the arena the reader measured, as scan_file does.
std::optional<Problem> read_header(const ScanOptions& options, LoadedTable* t, bool* not_safetensors) {
  size_t arena_size = options.arena_size;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ChunkedFile file;
    if (!file.open(t->path)) return io_problem("cannot open " + t->path, file.error(), 0);
    t->arena.assign((arena_size + 7) / 8, 0);
    t->reader.reset(new ws::Reader(t->arena.data(), t->arena.size() * 8));
    if (file.size_known()) t->reader->set_input_size(file.size());
    for (;;) {
      const ws::Event e = t->reader->next();
      if (e.type == ws::EventType::NeedInput) {
        const uint8_t* data;
        size_t size;
        const ChunkedFile::Result r = file.next(options.chunk_size, &data, &size);
        if (r == ChunkedFile::Result::Failed) return io_problem("cannot read " + t->path, file.error(), file.position());
        if (r == ChunkedFile::Result::End)
          t->reader->finish();
        else
          t->reader->feed(data, size);
        continue;
      }
      if (t->reader->format() == ws::Format::Gguf) {
        *not_safetensors = true;
        return std::nullopt;
      }
      if (e.type == ws::EventType::HeaderReady) return std::nullopt;
      if (e.type == ws::EventType::Error) {
        const ws::Error& err = t->reader->error();
        if (err.code == ws::Status::ArenaExhausted && attempt == 0 && t->reader->arena_needed() > arena_size) {
          arena_size = (t->reader->arena_needed() + 7) & ~size_t(7);
          break;
        }
        ErrorFacts facts;
        facts.offset = err.offset;
        if (file.size_known()) {
          facts.input_size = file.size();
          facts.input_size_exact = true;
        }
        facts.arena_size = t->arena.size() * 8;
        facts.arena_needed = t->reader->arena_needed();
        Problem p = problem_from(err, facts);
        p.shard = t->shard;
        return p;
      }
      if (e.type == ws::EventType::End) return std::nullopt;  // an empty model: no tensors
    }
  }
  return std::nullopt;
}

// config.json beside the model, when it has a quantization section. A config.json that does not
// parse is reported only when the files say MLX (it is then the model's quantization source).
std::optional<Problem> load_config(const std::string& model_path, bool mlx_files, LogicalView* v) {
  const std::string path = directory_of(model_path) + "config.json";
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  const ws::Status s = read_json_doc(f, 1 << 16, &v->config_arena, &v->config);
  fclose(f);
  if (s != ws::Status::Ok) {
    std::optional<Problem> p;
    if (mlx_files) {
      ErrorFacts facts;
      facts.code = s;
      facts.offset = v->config->error().offset;
      p = problem_from(v->config->error(), facts);
      p->shard = path;  // the offset is in config.json
      v->config_rejected = true;
      v->convention = ws::Convention::Mlx;
      v->config_path = path;
    }
    v->config.reset();
    return p;
  }
  if (!v->config->has_quantization()) {
    v->config.reset();
    return std::nullopt;
  }
  v->config_path = path;
  return std::nullopt;
}

std::optional<Problem> load_index(const std::string& path, const ScanOptions& options, LogicalView* v) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return io_problem("cannot open " + path, strerror(errno), 0);
  const ws::Status s = read_json_doc(f, options.arena_size, &v->index_arena, &v->index);
  fclose(f);
  if (s != ws::Status::Ok) {
    ErrorFacts facts;
    facts.code = s;
    facts.arena_needed = v->index->arena_needed();
    return problem_from(v->index->error(), facts);
  }
  return std::nullopt;
}

// An index error that names a tensor: say which shard the index places it in.
Problem shard_problem(const ws::ShardIndex& index, const std::string& shard) {
  ErrorFacts facts;
  facts.code = index.error().code;
  const ws::Error& err = index.error();
  if (err.tensor_name) {
    const uint32_t entry = index.find_tensor(err.tensor_name, err.tensor_name_size);
    if (entry != ws::kNoTensor) facts.index_shard = str(index.shard_name(index.tensor_shard(entry)));
  }
  if (index.has_total_size()) facts.index_total_size = index.total_size();
  facts.tensors_total_size = index.checked_bytes();
  Problem p = problem_from(err, facts);
  p.shard = shard;
  return p;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A UQFF model's files beside `path`: every `*.uqff` in its directory in numeric order of their
// trailing number (model-0, model-1, ..., model-10: the first holds the version tensors), then
// residual.safetensors when present, as mistral.rs loads them.
std::vector<std::string> uqff_files(const std::string& path) {
  const std::string dir = directory_of(path);
  std::vector<std::pair<uint64_t, std::string>> shards;
  DIR* d = opendir(dir.empty() ? "." : dir.c_str());
  if (d) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (!ends_with(name, ".uqff")) continue;
      size_t digits_end = name.size() - 5, digits_begin = digits_end;
      while (digits_begin > 0 && name[digits_begin - 1] >= '0' && name[digits_begin - 1] <= '9') --digits_begin;
      const uint64_t n = digits_begin < digits_end ? strtoull(name.substr(digits_begin, digits_end - digits_begin).c_str(), nullptr, 10) : 0;
      shards.push_back({n, name});
    }
    closedir(d);
  }
  std::sort(shards.begin(), shards.end());
  std::vector<std::string> out;
  for (const auto& s : shards) out.push_back(s.second);
  FILE* f = fopen((dir + "residual.safetensors").c_str(), "rb");
  if (f) {
    fclose(f);
    out.push_back("residual.safetensors");
  }
  return out;
}

// UQFF keeps each layer's format tag, GGML type, shape, bits, ... in tiny tensors: read exactly
// those by range and hand them to the model.
std::optional<Problem> feed_uqff_scalars(LogicalView* v) {
  ws::LogicalModel& m = *v->model;
  for (uint32_t t = 0; t < m.table_count(); ++t) {
    const ws::TensorTable& tab = m.table(t);
    for (uint32_t i = 0; i < tab.count(); ++i) {
      if (!m.uqff_wants(t, i)) continue;
      const ws::TensorInfo info = tab.get(i);
      const uint64_t at = m.data_start(t) + info.begin;
      std::vector<uint8_t> bytes(info.end - info.begin);
      FILE* f = fopen(v->tables[t]->path.c_str(), "rb");
      const bool ok = f && fseeko(f, off_t(at), SEEK_SET) == 0 && fread(bytes.data(), 1, bytes.size(), f) == bytes.size();
      if (f) fclose(f);
      if (!ok) {
        Problem p = io_problem("cannot read " + v->tables[t]->path, "the file is shorter than its header says", at);
        p.shard = v->tables[t]->shard;
        return p;
      }
      if (m.feed_uqff(t, i, at, bytes.data(), bytes.size()) != ws::Status::Ok) return std::nullopt;  // resolve reports
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Problem> load_logical(const std::string& path, const ScanOptions& options, LogicalView* v,
                                    bool* not_safetensors) {
  *not_safetensors = false;
  if (path == "-") {
    *not_safetensors = true;
    return std::nullopt;
  }
  const bool sharded = is_index_path(path);
  const bool uqff = !sharded && ends_with(path, ".uqff");
  const bool manifest = !sharded && !uqff && is_manifest_path(path);
  if (manifest) {
    v->convention = ws::Convention::Ollama;  // also for a manifest whose blobs are not all there
    if (std::optional<Problem> p = read_manifest(path, options, &v->manifest)) return p;
    for (const ManifestBlob& b : v->manifest.blobs) {
      std::unique_ptr<LoadedTable> t(new LoadedTable);
      t->shard = b.file;
      t->path = b.path;
      bool gguf = false;
      if (std::optional<Problem> p = read_header(options, t.get(), &gguf)) {
        p->shard = b.file;
        return p;
      }
      if (gguf) {
        Problem p;
        p.code = "ManifestBlobNotSafetensors";
        p.tensor = b.name;
        p.shard = b.file;
        p.message = "the blob of tensor layer " + quoted(b.name) + " is a GGUF file: weightstream reads Ollama's "
                    "safetensors tensor blobs from a manifest (give a GGUF blob to weightstream directly).";
        return p;
      }
      if (std::optional<Problem> p = check_blob_tensors(v->manifest, b, t->reader->tensors())) return p;
      v->tables.push_back(std::move(t));
    }
  } else if (uqff) {
    for (const std::string& name : uqff_files(path)) {
      std::unique_ptr<LoadedTable> t(new LoadedTable);
      t->shard = name;
      t->path = directory_of(path) + name;
      bool gguf = false;
      if (std::optional<Problem> p = read_header(options, t.get(), &gguf)) {
        p->shard = name;
        return p;
      }
      v->tables.push_back(std::move(t));
    }
  } else if (sharded) {
    if (std::optional<Problem> p = load_index(path, options, v)) return p;
    // Shards in file-name order (model-00001-of-... first): the order a sequential reader streams
    // them in, which the load plan assumes for tables.
    std::vector<std::string> names;
    for (uint32_t i = 0; i < v->index->shard_count(); ++i) names.push_back(str(v->index->shard_name(i)));
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      std::unique_ptr<LoadedTable> t(new LoadedTable);
      t->shard = name;
      if (!safe_shard_name(t->shard)) {
        Problem p;
        p.code = "UnsafeShardPath";
        p.message = "the index names a shard outside its own directory (" + quoted(t->shard) +
                    "); weightstream only opens shards beside the index";
        return p;
      }
      t->path = directory_of(path) + t->shard;
      bool gguf = false;
      if (std::optional<Problem> p = read_header(options, t.get(), &gguf)) {
        if (p->io) p->shard = t->shard;
        return p;
      }
      if (v->index->check_shard(t->shard.data(), t->shard.size(), t->reader->tensors()) != ws::Status::Ok)
        return shard_problem(*v->index, t->shard);
      v->tables.push_back(std::move(t));
    }
    if (v->index->finish_checks() != ws::Status::Ok) return shard_problem(*v->index, "");
  } else {
    std::unique_ptr<LoadedTable> t(new LoadedTable);
    t->path = path;
    if (std::optional<Problem> p = read_header(options, t.get(), not_safetensors)) return p;
    if (*not_safetensors) return std::nullopt;
    v->tables.push_back(std::move(t));
  }

  size_t tensors = 0;
  bool ollama = false, mlx = false;
  for (const auto& t : v->tables) {
    const ws::TensorTable& tab = t->reader->tensors();
    tensors += tab.count();
    const ws::Convention said = ws::convention_signal(tab);
    ollama = ollama || said == ws::Convention::Ollama;
    mlx = mlx || said == ws::Convention::Mlx;
  }
  ollama = ollama || manifest;
  if (!ollama && !uqff) {
    if (std::optional<Problem> p = load_config(path, mlx, v)) return p;
    mlx = mlx || v->config;
  }
  v->storage.assign(tensors ? tensors : 1, ws::LogicalWeight());
  v->model.reset(new ws::LogicalModel(v->storage.data(), uint32_t(v->storage.size())));
  for (const auto& t : v->tables) {
    if (v->model->add_table(&t->reader->tensors(), t->reader->data_start()) != ws::Status::Ok) {
      Problem p;
      p.code = "UsageError";
      p.message = "weightstream reads at most " + std::to_string(ws::LogicalModel::kMaxTables) +
                  " shards as one logical model";
      return p;
    }
  }
  ws::Status s;
  if (uqff) {
    v->convention = ws::Convention::Uqff;
    s = v->model->build_uqff();
    if (s == ws::Status::Ok) {
      if (std::optional<Problem> p = feed_uqff_scalars(v)) return p;
      s = v->model->resolve_uqff();
    }
  } else {
    v->convention = ollama ? ws::Convention::Ollama : mlx ? ws::Convention::Mlx : ws::Convention::Plain;
    s = ollama ? v->model->build_ollama() : mlx ? v->model->build_mlx(v->config.get()) : v->model->build_plain();
  }
  if (s != ws::Status::Ok) {
    const ws::Error& err = v->model->error();
    ErrorFacts facts;
    facts.code = s;
    facts.offset = err.offset;
    Problem p = problem_from(err, facts);
    // UQFF companion-set errors say which suffix is missing or unexpected (or which type).
    const ws::StrView detail = v->model->error_detail();
    if (detail.size) p.message += " (" + display_text(str(detail)) + ")";
    const uint32_t t = v->model->error_table();
    if ((sharded || uqff || manifest) && t < v->tables.size()) p.shard = v->tables[t]->shard;
    return p;
  }
  return std::nullopt;
}

std::string quant_text(const ws::LogicalModel& m, const ws::LogicalWeight& w) {
  if (w.params.mode == ws::QuantMode::None)
    return std::string("plain ") + ws::dtype_name(m.tensor(w.ref(ws::PieceRole::Packed)).dtype());
  std::string s = ws::quant_mode_name(w.params.mode);
  s += " " + std::to_string(w.params.bits) + "-bit g" + std::to_string(w.params.group);
  return s;
}

uint64_t stored_bytes(const ws::LogicalModel& m, const ws::LogicalWeight& w) {
  uint64_t n = 0;
  for (uint32_t r = 0; r < ws::kPieceRoles; ++r)
    if (w.piece[r].present()) n += m.piece_end(w.piece[r]) - m.piece_begin(w.piece[r]);
  return n;
}

}  // namespace wscli

// weightstream CLI — sharded models (see scan_sharded.h).
#include "scan_sharded.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "error_text.h"
#include "file_source.h"
#include "text_format.h"
#include "weightstream/shard_index.h"

namespace wscli {
namespace {

// The index arena and the index live together: check_shard() needs the index for the whole scan.
struct LoadedIndex {
  std::vector<uint64_t> arena;  // uint64_t storage: 8-byte alignment
  std::unique_ptr<ws::ShardIndex> index;
};

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

// Streams the index JSON once with an arena of `arena_size` bytes. Returns the status of the
// first failure (or Ok); `io` is set on a read failure.
ws::Status load_once(ChunkedFile* file, size_t arena_size, size_t chunk, LoadedIndex* out,
                     std::string* io) {
  out->arena.assign((arena_size + 7) / 8, 0);
  out->index.reset(new ws::ShardIndex(out->arena.data(), out->arena.size() * 8));
  for (;;) {
    const uint8_t* data;
    size_t size;
    const ChunkedFile::Result r = file->next(chunk, &data, &size);
    if (r == ChunkedFile::Result::Failed) {
      *io = file->error();
      return ws::Status::Ok;
    }
    if (r == ChunkedFile::Result::End) return out->index->finish();
    const ws::Status s = out->index->feed(data, size);
    if (s != ws::Status::Ok) return s;
  }
}

// Where the index places a tensor, for messages ("the index places it in model-00002...").
std::string shard_of(const ws::ShardIndex& index, const std::optional<std::string>& tensor) {
  if (!tensor) return "";
  const uint32_t entry = index.find_tensor(tensor->data(), tensor->size());
  if (entry == ws::kNoTensor) return "";
  return str(index.shard_name(index.tensor_shard(entry)));
}

Problem index_problem(const ws::ShardIndex& index, ws::Status s, const std::string& shard,
                      const ShardedReport& rep) {
  const ws::Error& err = index.error();
  ErrorFacts facts;
  facts.code = s;
  facts.arena_size = 0;
  facts.arena_needed = index.arena_needed();
  std::optional<std::string> tensor;
  if (err.tensor_name) tensor = std::string(err.tensor_name, err.tensor_name_size);
  facts.index_shard = shard_of(index, tensor);
  if (rep.total_size) facts.index_total_size = *rep.total_size;
  facts.tensors_total_size = index.checked_bytes();
  Problem p = problem_from(err, facts);
  p.shard = shard;
  return p;
}

}  // namespace

// An index from the internet names files to open: only names inside the index's directory are
// followed (no absolute paths, no ".." components), so a crafted index cannot make the validator
// read /dev/zero or files elsewhere on the machine.
bool safe_shard_name(const std::string& name) {
  if (name.empty() || name[0] == '/') return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    if (name.compare(start, end - start, "..") == 0 && end - start == 2) return false;
    start = end + 1;
  }
  return name.find('\0') == std::string::npos;
}

bool is_index_path(const std::string& path) {
  static const std::string kSuffix = ".index.json";
  return path.size() >= kSuffix.size() &&
         path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

ShardedReport scan_sharded(const std::string& index_path, const ScanOptions& options) {
  ShardedReport rep;
  rep.path = index_path;
  ChunkedFile file;
  if (!file.open(index_path)) {
    rep.problem = io_problem("cannot open", file.error(), 0);
    return rep;
  }

  LoadedIndex idx;
  std::string io;
  size_t arena_size = options.arena_size;
  ws::Status s = load_once(&file, arena_size, options.chunk_size, &idx, &io);
  // Same policy as for a safetensors header: one retry with the measured size.
  if (io.empty() && s == ws::Status::ArenaExhausted && idx.index->arena_needed() > arena_size &&
      file.rewindable() && file.rewind()) {
    arena_size = idx.index->arena_needed();
    s = load_once(&file, arena_size, options.chunk_size, &idx, &io);
  }
  if (!io.empty()) {
    rep.problem = io_problem("cannot read", io, file.position());
    return rep;
  }
  const ws::ShardIndex& index = *idx.index;
  if (s != ws::Status::Ok) {
    rep.problem = index_problem(index, s, "", rep);
    if (s == ws::Status::ArenaExhausted) {
      ErrorFacts facts;
      facts.arena_size = idx.arena.size() * 8;
      facts.arena_needed = index.arena_needed();
      facts.code = s;
      rep.problem->message = error_message(facts);
    }
    return rep;
  }

  rep.index_ok = true;
  rep.tensor_count = index.tensor_count();
  if (index.has_total_size()) rep.total_size = index.total_size();
  rep.shards.resize(index.shard_count());
  for (uint32_t i = 0; i < index.shard_count(); ++i) rep.shards[i].file = str(index.shard_name(i));
  for (uint32_t e = 0; e < index.tensor_count(); ++e) {
    const uint32_t shard = index.tensor_shard(e);
    if (shard < rep.shards.size()) ++rep.shards[shard].index_tensors;
  }
  // The index numbers shards by first mention in a weight_map sorted by tensor name; people (and
  // the file names) count model-00001, model-00002, ...
  std::sort(rep.shards.begin(), rep.shards.end(),
            [](const ShardRow& a, const ShardRow& b) { return a.file < b.file; });

  // Shards are named relative to the index's directory, as the Hugging Face loaders resolve them.
  const size_t slash = index_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : index_path.substr(0, slash + 1);

  // All names are checked before any shard is opened: a hostile index is refused as a whole.
  for (const ShardRow& shard : rep.shards) {
    if (!safe_shard_name(shard.file)) {
      // Offset 0 and no shard: the problem is the index as a whole (the entry's position is not
      // kept by ShardIndex), and the shard was never opened.
      Problem p;
      p.code = "UnsafeShardPath";
      p.message = "the index names a shard outside its own directory (" + quoted(shard.file) +
                  "). Shard names must be relative paths without \"..\": this index may be crafted "
                  "to read other files.";
      rep.problem = p;
      return rep;
    }
  }

  for (ShardRow& shard : rep.shards) {
    // check_shard runs at HeaderReady: a mismatch with the index is found before any tensor data
    // is read, which matters when shards are gigabytes.
    const HeaderHook check = [&](const ws::Reader& reader, FileReport* fr) {
      const ws::Status cs =
          idx.index->check_shard(shard.file.data(), shard.file.size(), reader.tensors());
      if (cs == ws::Status::Ok) return true;
      fr->problem = index_problem(*idx.index, cs, shard.file, rep);
      return false;
    };
    FileReport fr = scan_file(dir + shard.file, options, check);
    if (fr.problem) {
      rep.problem = *fr.problem;
      rep.problem->shard = shard.file;
      if (rep.problem->io)
        rep.problem->message += " The index names this shard: is the download complete?";
      return rep;
    }
    shard.scanned = true;
    for (const TensorRow& t : fr.tensors) shard.tensor_bytes += t.end - t.begin;
  }

  const ws::Status fs = idx.index->finish_checks();
  rep.checked_bytes = index.checked_bytes();
  if (fs != ws::Status::Ok) {
    // The offset is in the index here (the entry of a tensor no shard held); the message names
    // the shard that should have held it.
    rep.problem = index_problem(index, fs, "", rep);
    return rep;
  }
  rep.valid = true;
  return rep;
}

}  // namespace wscli

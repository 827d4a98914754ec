// weightstream CLI — one file through ws::Reader (see scan_file.h).
#include "scan_file.h"

#include <string.h>

#include <vector>

#include "error_text.h"
#include "file_source.h"
#include "gguf_infos.h"
#include "gguf_kv.h"
#include "progress.h"
#include "weightstream/status.h"

namespace wscli {
namespace {

size_t round_up8(size_t n) { return (n + 7) & ~size_t(7); }

uint64_t load_u64le(const std::string& b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return v;
}

struct Attempt {
  bool arena_exhausted = false;
  size_t arena_needed = 0;
};

Attempt scan_once(ChunkedFile* file, size_t arena_size, const ScanOptions& opt, FileReport* rep) {
  Attempt result;
  // uint64_t storage: the reader wants an 8-byte aligned arena.
  std::vector<uint64_t> arena((arena_size + 7) / 8);
  rep->arena_size = arena.size() * 8;
  ws::Reader reader(arena.data(), rep->arena_size);
  if (file->size_known()) reader.set_input_size(file->size());

  Progress progress(rep->path, file->size_known(), file->size(), opt.progress);
  std::string prefix;  // the first 8 bytes: the header length, and a clue to what the file is
  GgufKvCollector kvs;
  GgufInfoCopy infos;
  // The piece last fed: the reader only views it, so it is copied into `infos` (when it holds
  // tensor infos) before the next piece replaces it.
  const uint8_t* piece = nullptr;
  size_t piece_size = 0;
  uint64_t piece_at = 0;
  auto keep_piece = [&]() {
    // Without key-values, the tensor infos follow the preamble directly; no KvEnd marks them.
    if (!infos.started() && reader.format() == ws::Format::Gguf &&
        reader.position() >= kGgufPreambleBytes && reader.gguf_kv_count() == 0)
      infos.start(kGgufPreambleBytes);
    infos.keep(piece, piece_size, piece_at);
  };
  bool finished = false;
  // The u64 length prefix means something only in a safetensors file.
  struct FormatOnExit {
    const ws::Reader& r;
    FileReport* rep;
    ~FormatOnExit() {
      rep->format = r.format();
      if (rep->format != ws::Format::Safetensors) rep->header_size.reset();
    }
  } on_exit{reader, rep};
  ws::GgufFactsCollector model_facts;  // architecture facts, as the key-values stream past
  for (;;) {
    const ws::Event e = reader.next();
    switch (e.type) {
      case ws::EventType::NeedInput: {
        if (finished) {
          // The reader must end after finish(); asking again would loop forever.
          ws::Error err;
          err.code = ws::Status::UsageError;
          err.offset = reader.position();
          rep->problem = problem_from(err, ErrorFacts());
          return result;
        }
        keep_piece();
        piece = nullptr;  // kept; and the file's next piece replaces it
        piece_size = 0;
        const uint8_t* data;
        size_t size;
        const uint64_t at = file->position();
        const ChunkedFile::Result r = file->next(opt.chunk_size, &data, &size);
        if (r == ChunkedFile::Result::Failed) {
          rep->problem = io_problem("cannot read", file->error(), file->position());
          return result;
        }
        if (r == ChunkedFile::Result::End) {
          reader.finish();
          finished = true;
        } else {
          if (prefix.size() < 8)
            prefix.append(reinterpret_cast<const char*>(data),
                          size < 8 - prefix.size() ? size : 8 - prefix.size());
          if (prefix.size() == 8 && !rep->header_size) rep->header_size = load_u64le(prefix);
          reader.feed(data, size);
          piece = data;
          piece_size = size;
          piece_at = at;
          progress.update(file->position());
        }
        break;
      }
      case ws::EventType::HeaderReady:
        infos.stop();
        if (reader.format() == ws::Format::Gguf && model_facts.facts().has_architecture()) {
          rep->model_facts = ModelFactsReport();
          rep->model_facts->source = "gguf";
          rep->model_facts->facts = model_facts.facts();
        }
        snapshot_header(reader, &kvs, rep);
        break;
      case ws::EventType::KvEnd:
        // The last key-value ends where the tensor infos begin.
        if (uint64_t(e.kv) + 1 == reader.gguf_kv_count()) infos.start(reader.position());
        kvs.on_event(e);
        model_facts.on_event(e);
        break;
      case ws::EventType::KvBegin:
      case ws::EventType::KvScalar:
      case ws::EventType::KvBytes:
        kvs.on_event(e);
        model_facts.on_event(e);
        break;
      case ws::EventType::End:
        rep->valid = true;
        return result;
      case ws::EventType::Error: {
        const ws::Error& err = reader.error();
        // Given the input size, the reader checks it against the validated header and reports a
        // short or over-long file instead of HeaderReady; the table is complete then, and showing
        // it tells the user which tensors the file lacks.
        if (!rep->header_ready &&
            (err.code == ws::Status::TruncatedData || err.code == ws::Status::TrailingBytes))
          snapshot_header(reader, &kvs, rep);
        ErrorFacts facts;
        facts.code = err.code;
        facts.prefix = prefix;
        if (reader.format() == ws::Format::Safetensors) facts.declared_header = rep->header_size;
        facts.offset = err.offset;
        facts.input_size = file->size_known() ? file->size() : file->position();
        facts.input_size_exact = file->size_known();
        // The data's end is known once the header was parsed, which for a short file the reader
        // may report (TruncatedData) before HeaderReady.
        if (reader.data_start() != 0) facts.data_end = data_end_of(reader.data_start(), reader.data_size());
        facts.arena_size = rep->arena_size;
        facts.arena_needed = reader.arena_needed();
        if (reader.format() == ws::Format::Gguf) {
          keep_piece();  // the rejected field may be in the piece being read
          add_gguf_facts(reader, err, infos, kvs, &facts);
        }
        rep->problem = problem_from(err, facts);
        // A tensor index without a name (the reader had not stored it): take it from the table.
        if (!rep->problem->tensor && err.tensor != ws::kNoTensor && err.tensor < rep->tensors.size())
          rep->problem->tensor = rep->tensors[err.tensor].name;
        if (err.code == ws::Status::ArenaExhausted) {
          result.arena_exhausted = true;
          result.arena_needed = reader.arena_needed();
        }
        return result;
      }
      default:
        break;  // TensorBegin/Bytes/End: validation needs nothing from the data itself
    }
  }
}

}  // namespace

// Copies the validated table out of the arena. GGUF key-values were gathered from events while
// the header streamed; they join the report only now that the header proved valid.
void snapshot_header(const ws::Reader& r, GgufKvCollector* kvs, FileReport* rep) {
  rep->header_ready = true;
  const bool gguf = r.format() == ws::Format::Gguf;
  if (!gguf) rep->header_size = r.header_size();
  rep->data_start = r.data_start();
  rep->data_size = r.data_size();
  const uint32_t n = r.tensor_count();
  rep->tensors.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const ws::TensorInfo t = r.tensor(i);
    TensorRow row;
    row.name.assign(t.name.data ? t.name.data : "", t.name.size);
    row.dtype = gguf ? ws::ggml_type_info(t.type, r.gguf_dialect()).name : ws::dtype_name(t.dtype());
    for (ws::ShapeIter it = t.shape(); !it.done();) row.shape.push_back(it.next());
    row.begin = t.begin;
    row.end = t.end;
    rep->tensors.push_back(std::move(row));
  }
  if (gguf) {
    GgufFacts g;
    g.version = r.gguf_version();
    g.alignment = r.gguf_alignment();
    g.kv_count = r.gguf_kv_count();
    const ws::StrView arch = r.gguf_architecture();
    if (arch.data && arch.size) g.architecture = std::string(arch.data, arch.size);
    g.bitnet = r.gguf_dialect() == ws::GgmlDialect::BitNet;
    rep->gguf = g;
    rep->has_metadata = true;  // a GGUF file always has its key-value section, maybe empty
    rep->metadata = kvs->take();
    return;
  }
  const ws::TensorTable& table = r.tensors();
  rep->has_metadata = table.has_metadata();
  uint32_t cursor = 0;
  for (uint32_t i = 0; i < table.metadata_count(); ++i) {
    const ws::MetadataEntry m = table.metadata_at(&cursor);
    MetadataRow row;
    row.key.assign(m.key.data ? m.key.data : "", m.key.size);
    row.value.text.assign(m.value.data ? m.value.data : "", m.value.size);
    row.value.full_size = m.value.size;
    rep->metadata.push_back(std::move(row));
  }
}

// The values behind a GGUF rejection that ws::Error does not carry, read back from the CLI's copy
// of the tensor infos and from the key-values collected so far.
void add_gguf_facts(const ws::Reader& r, const ws::Error& err, const GgufInfoCopy& infos,
                    const GgufKvCollector& kvs, ErrorFacts* facts) {
  switch (err.code) {
    case ws::Status::GgufInvalidType:
    case ws::Status::GgufRetiredType: {
      uint32_t id;
      if (!infos.read_u32(err.offset, &id)) break;
      facts->ggml_type_id = id;
      const ws::GgmlTypeInfo info = ws::ggml_type_info(id, r.gguf_dialect());
      if (info.kind == ws::GgmlTypeKind::Retired) facts->ggml_type_name = info.name;
      if (r.gguf_dialect() == ws::GgmlDialect::Upstream) {
        const ws::GgmlTypeInfo bitnet = ws::ggml_type_info(id, ws::GgmlDialect::BitNet);
        if (bitnet.kind != ws::GgmlTypeKind::Unknown && bitnet.kind != ws::GgmlTypeKind::Retired &&
            info.kind == ws::GgmlTypeKind::Retired)
          facts->bitnet_type_name = bitnet.name;
      }
      break;
    }
    case ws::Status::GgufInvalidTensorOffset: {
      uint64_t found, expected;
      if (infos.read_u64(err.offset, &found) &&
          infos.expected_data_offset(err.offset, r.gguf_alignment(), r.gguf_dialect(), &expected)) {
        facts->tensor_offset_found = found;
        facts->tensor_offset_expected = expected;
        facts->gguf_alignment = r.gguf_alignment();
      }
      break;
    }
    case ws::Status::GgufDuplicateKey: {
      const std::vector<MetadataRow>& rows = kvs.rows();
      for (const MetadataRow& row : rows) {
        if (row.offset != err.offset) continue;
        facts->gguf_key = row.key;
        for (const MetadataRow& other : rows)
          if (other.key == row.key && other.offset != row.offset) {
            facts->gguf_key_other = other.offset;
            break;
          }
        break;
      }
      break;
    }
    default:
      break;
  }
}

Problem io_problem(const std::string& what, const std::string& why, uint64_t offset) {
  Problem p;
  p.code = "IoError";
  p.offset = offset;
  p.message = what + ": " + why + ".";
  p.io = true;
  return p;
}

Problem usage_problem(const std::string& code, const std::string& message, const std::string& tensor) {
  Problem p;
  p.code = code;
  p.tensor = tensor;
  p.message = message;
  return p;
}

Problem problem_from(const ws::Error& error, const ErrorFacts& facts) {
  Problem p;
  p.code = ws::status_name(error.code);
  p.offset = error.offset;
  if (error.tensor_name) p.tensor = std::string(error.tensor_name, error.tensor_name_size);
  ErrorFacts f = facts;
  f.code = error.code;
  f.offset = error.offset;
  if (error.has_found && !f.found) f.found = error.found;
  if (error.has_expected && !f.expected) f.expected = error.expected;
  p.message = error_message(f);
  return p;
}

FileReport scan_file(const std::string& path, const ScanOptions& options) {
  FileReport rep;
  rep.path = path;
  ChunkedFile file;
  if (!file.open(path)) {
    rep.problem = io_problem("cannot open", file.error(), 0);
    return rep;
  }
  rep.size_known = file.size_known();
  rep.file_size = file.size();

  Attempt a = scan_once(&file, options.arena_size, options, &rep);
  // One retry with the size the reader measured. Only regular files can be read twice; for a pipe
  // the message tells the user which --arena-size to pass.
  if (a.arena_exhausted && a.arena_needed > rep.arena_size && file.rewindable()) {
    if (!file.rewind()) {
      rep.problem = io_problem("cannot re-read", file.error(), 0);
      return rep;
    }
    FileReport again;
    again.path = path;
    again.size_known = rep.size_known;
    again.file_size = rep.file_size;
    scan_once(&file, round_up8(a.arena_needed), options, &again);
    return again;
  }
  return rep;
}

}  // namespace wscli

// weightstream CLI — a file's report pieces (see file_report.h).
#include "file_report.h"

#include <string.h>

#include <vector>

#include "error_text.h"
#include "gguf_infos.h"
#include "gguf_kv.h"
#include "weightstream/status.h"

namespace wscli {

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

}  // namespace wscli

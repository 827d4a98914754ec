// weightstream CLI — the validate summary of either kind of input (see report.h).
#include "report.h"

namespace wscli {

Verdict verdict_of(const FileReport& r) {
  Verdict v;
  v.path = r.path;
  v.valid = r.valid;
  // An input too short or too strange to recognise has no format, rather than "unknown".
  if (r.format != ws::Format::Unknown) v.format = ws::format_name(r.format);
  v.tensors = r.tensors.size();
  v.problem = r.problem;
  v.splits = static_cast<uint32_t>(r.splits.size());
  v.warnings = r.warnings;
  return v;
}

Verdict verdict_of(const ShardedReport& r) {
  Verdict v;
  v.path = r.path;
  v.valid = r.valid;
  // The index itself is JSON; the model it describes is safetensors once the index parsed.
  if (r.index_ok) v.format = ws::format_name(ws::Format::Safetensors);
  v.tensors = r.tensor_count;
  v.problem = r.problem;
  v.is_index = true;
  v.is_manifest = r.manifest;
  v.shards = static_cast<uint32_t>(r.shards.size());
  v.warnings = r.warnings;
  return v;
}

}  // namespace wscli

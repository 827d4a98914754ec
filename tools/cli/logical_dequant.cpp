// weightstream CLI — dequant of logical weights (see logical_dequant.h).
#include "logical_dequant.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "dequant.h"
#include "error_text.h"
#include "logical_load.h"
#include "manifest_blobs.h"
#include "problem_text.h"
#include "scan_sharded.h"
#include "text_format.h"
#include "weightstream/load_plan.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dequant writes host-order floats");

namespace wscli {
namespace {

constexpr size_t kOutputPiece = 1 << 20;  // bytes of values per write, as dequant.cpp

Problem make_problem(const std::string& code, const std::string& message, const std::string& tensor) {
  Problem p;
  p.code = code;
  p.tensor = tensor;
  p.message = message;
  return p;
}

// Reads [offset, offset + n) of a file whole (a companion: scales are a small fraction of a weight).
bool read_range(const std::string& path, uint64_t offset, uint64_t n, std::vector<uint8_t>* out, std::string* why) {
  out->assign(n, 0);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = strerror(errno);
    return false;
  }
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = pread(fd, out->data() + got, size_t(n - got), off_t(offset + got));
    if (r <= 0) {
      *why = r < 0 ? strerror(errno) : "the file is shorter than its header says";
      close(fd);
      return false;
    }
    got += uint64_t(r);
  }
  close(fd);
  return true;
}

float f32le(const uint8_t* p) {
  float f;
  memcpy(&f, p, 4);
  return f;
}

class LogicalJob {
 public:
  explicit LogicalJob(const CliOptions& o) : opt_(o), path_(o.files[0]) {}
  std::optional<int> run();

 private:
  int finish();
  DequantTensor describe(const ws::LogicalWeight& w, uint32_t index) const;
  void run_all();
  bool decode(const ws::LogicalWeight& w, DequantTensor* row);
  void fail(Problem p, int code) {
    problem_ = std::move(p);
    exit_ = code;
  }

  const CliOptions& opt_;
  const std::string path_;
  LogicalView view_;
  std::vector<DequantTensor> rows_;  // --tensor: the one weight; --all: every weight
  std::optional<Problem> problem_;
  int exit_ = 0;
};

std::optional<int> LogicalJob::run() {
  const DequantArgs& args = opt_.dequant;
  if (path_ == "-") return std::nullopt;
  // Models of several files: a sharded model's index, one file of a UQFF directory, or an Ollama
  // manifest.
  const bool sharded = is_index_path(path_) || (path_.size() > 5 && path_.compare(path_.size() - 5, 5, ".uqff") == 0) ||
                       is_manifest_path(path_);
  bool not_safetensors = false;
  std::optional<Problem> p = load_logical(path_, opt_.scan, &view_, &not_safetensors);
  if (not_safetensors) return std::nullopt;
  if (p) {
    // A single file's header errors are reported by the tensor path in its own words; index,
    // shard and convention errors (an MLX model's config.json among them) are this model's.
    if (!sharded && !view_.model && !view_.config_rejected) return std::nullopt;
    fail(*p, p->io ? 2 : 1);
    return finish();
  }
  // A single file of plain tensors: the tensor path streams it in one pass (same values).
  if (!sharded && view_.convention == ws::Convention::Plain) return std::nullopt;
  if (args.all) {
    run_all();
    return finish();
  }
  const ws::LogicalModel& m = *view_.model;
  const uint32_t index = m.find(args.tensor.data(), args.tensor.size());
  if (index == ws::kNoTensor) {
    // A stored tensor that is no logical weight (a companion): the tensor path decodes it as stored.
    if (!sharded && view_.tables[0]->reader->tensors().find(args.tensor.data(), args.tensor.size()) != ws::kNoTensor)
      return std::nullopt;
    std::vector<std::string> names;
    for (uint32_t i = 0; i < m.weight_count(); ++i) names.emplace_back(m.weight(i).name.data, m.weight(i).name.size);
    const std::vector<std::string> close = close_names(args.tensor, names, 5);
    std::string msg = "no logical weight named " + quoted(args.tensor) + " among the " +
                      std::to_string(names.size()) + (names.size() == 1 ? " weight" : " weights") + " of the " +
                      (sharded && !view_.manifest.parsed ? "sharded model"
                                                         : std::string(ws::convention_name(view_.convention)) + " model");
    if (!close.empty()) {
      msg += "; close names: ";
      for (size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : "") + quoted(close[i]);
    } else {
      msg += " (weightstream inspect lists them)";
    }
    fail(make_problem("TensorNotFound", msg, args.tensor), 2);
    return finish();
  }
  const ws::LogicalWeight& w = m.weight(index);
  // A plain weight of a single file: the tensor path writes exactly the same values.
  if (!sharded && w.convention == ws::Convention::Plain) return std::nullopt;
  rows_.push_back(describe(w, index));
  DequantTensor& row = rows_.back();
  row.selected = true;
  if (!row.format) {
    fail(make_problem("UnsupportedFormat", "weight " + quoted(row.name) + " cannot be decoded: " + row.skip_reason,
                      row.name),
         2);
    return finish();
  }
  if (args.output.empty()) return finish();  // --json without -o: a description only
  row.output_file = args.output;
  if (decode(w, &row) && !opt_.json) {
    FILE* to = args.output == "-" ? stderr : stdout;
    fprintf(to, "%s\n", written_line(row, args.f16).c_str());
  }
  return finish();
}

// --all: every logical weight in model order, each to DIR/<name>.bin, one at a time (the scratch
// of one weight: its companions, one chunk and one output piece). Weights without a decoding are
// listed with their reason; the first failure stops.
void LogicalJob::run_all() {
  const DequantArgs& args = opt_.dequant;
  const ws::LogicalModel& m = *view_.model;
  if (!args.output.empty()) {
    if (std::optional<Problem> p = prepare_output_dir(args.output)) {
      fail(*p, 2);
      return;
    }
  }
  std::vector<std::string> taken;
  for (uint32_t i = 0; i < m.weight_count(); ++i) rows_.push_back(describe(m.weight(i), i));
  for (uint32_t i = 0; i < m.weight_count(); ++i) {
    DequantTensor& row = rows_[i];
    if (!row.format || args.output.empty()) continue;
    row.selected = true;
    row.output_file = args.output + "/" + output_file_stem(row.name, &taken) + ".bin";
    if (!decode(m.weight(i), &row)) return;
    if (!opt_.json) {
      printf("%s\n", written_line(row, args.f16).c_str());
      fflush(stdout);
    }
  }
}

DequantTensor LogicalJob::describe(const ws::LogicalWeight& w, uint32_t index) const {
  const ws::LogicalModel& m = *view_.model;
  const ws::TensorRef packed = w.ref(ws::PieceRole::Packed);
  DequantTensor t;
  t.logical = true;
  t.name.assign(w.name.data, w.name.size);
  t.convention = ws::convention_name(w.convention);
  t.mode = ws::quant_mode_name(w.params.mode);
  t.stored = ws::dtype_name(m.tensor(packed).dtype());
  if (w.decodable) t.format = w.format;
  t.bits = w.params.bits;
  t.group = w.params.group;
  t.shape.assign(w.shape, w.shape + w.rank);
  t.elements = w.elements;
  t.stored_bytes = stored_bytes(m, w);
  t.data_offset = m.piece_begin(packed);
  t.shard = view_.tables[packed.table]->shard;
  t.output_bytes = w.decodable ? w.elements * (opt_.dequant.f16 ? 2 : 4) : 0;
  if (!w.decodable) t.skip_reason = no_decoding_reason(t.stored, false);
  // The seekable schedule: companions first, the packed piece last.
  const ws::LoadPlan plan = ws::plan_weight(m, index, opt_.scan.chunk_size);
  for (uint32_t i = 0; i < plan.schedule_count; ++i) {
    const ws::TensorRef r = w.ref(plan.schedule[i].role);
    DequantPiece piece;
    piece.role = ws::piece_role_name(plan.schedule[i].role);
    piece.tensor.assign(m.tensor(r).name.data, m.tensor(r).name.size);
    piece.shard = view_.tables[r.table]->shard;
    piece.offset = plan.schedule[i].begin;
    piece.bytes = plan.schedule[i].size();
    t.pieces.push_back(piece);
  }
  return t;
}

bool LogicalJob::decode(const ws::LogicalWeight& w, DequantTensor* row) {
  const ws::LogicalModel& m = *view_.model;
  const DequantArgs& args = opt_.dequant;
  const ws::TensorRef packed = w.ref(ws::PieceRole::Packed);
  const LoadedTable& table = *view_.tables[packed.table];
  const std::string& output = row->output_file;

  ws::DequantSpec spec = w.spec();
  spec.out = args.f16 ? ws::OutType::F16 : ws::OutType::F32;
  spec.input_offset = m.piece_begin(packed);
  std::vector<uint8_t> companion[ws::kPieceRoles];
  for (uint32_t r = 1; r < ws::kPieceRoles; ++r) {
    const ws::TensorRef ref = w.piece[r];
    if (!ref.present()) continue;
    std::string why;
    const uint64_t at = m.piece_begin(ref);
    if (!read_range(view_.tables[ref.table]->path, at, m.piece_end(ref) - at, &companion[r], &why)) {
      fail(io_problem("cannot read the " + std::string(ws::piece_role_name(ws::PieceRole(r))) + " of " + row->name,
                      why, at),
           2);
      problem_->shard = view_.tables[ref.table]->shard;
      return false;
    }
  }
  if (w.piece[uint32_t(ws::PieceRole::Scales)].present()) {
    spec.scales = companion[uint32_t(ws::PieceRole::Scales)].data();
    spec.scales_offset = m.piece_begin(w.piece[uint32_t(ws::PieceRole::Scales)]);
  }
  if (w.piece[uint32_t(ws::PieceRole::Biases)].present()) spec.biases = companion[uint32_t(ws::PieceRole::Biases)].data();
  if (w.piece[uint32_t(ws::PieceRole::GlobalScale)].present()) {
    spec.has_global_scale = true;
    spec.global_scale = f32le(companion[uint32_t(ws::PieceRole::GlobalScale)].data());
  }
  ws::Dequantizer d;
  if (d.init(spec) != ws::Status::Ok) {
    fail(problem_from(d.error(), ErrorFacts()), 1);
    problem_->tensor = row->name;
    problem_->shard = table.shard;
    return false;
  }
  FILE* out = output == "-" ? stdout : fopen(output.c_str(), "wb");
  if (!out) {
    fail(io_problem("cannot write " + output, strerror(errno), 0), 2);
    return false;
  }
  // A weight cut short leaves no partial file behind.
  auto abandon = [&]() {
    if (out != stdout) {
      fclose(out);
      unlink(output.c_str());
    }
  };
  const int fd = ::open(table.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fail(io_problem("cannot open " + table.path, strerror(errno), 0), 2);
    abandon();
    return false;
  }
  std::vector<uint8_t> in(opt_.scan.chunk_size), values(kOutputPiece);
  uint64_t at = m.piece_begin(packed);
  const uint64_t end = m.piece_end(packed);
  uint64_t written = 0;
  bool ok = true;
  while (ok && at < end) {
    const size_t want = size_t(end - at < in.size() ? end - at : in.size());
    const ssize_t n = pread(fd, in.data(), want, off_t(at));
    if (n <= 0) {
      fail(io_problem("cannot read " + row->name, n < 0 ? strerror(errno) : "the file is shorter than its header says",
                      at),
           2);
      ok = false;
      break;
    }
    size_t used = 0;
    while (ok && used < size_t(n)) {
      size_t in_used = 0, out_bytes = 0;
      if (d.decode(in.data() + used, size_t(n) - used, &in_used, values.data(), values.size(), &out_bytes) !=
          ws::Status::Ok) {
        fail(problem_from(d.error(), ErrorFacts()), 1);
        problem_->tensor = row->name;
        problem_->shard = table.shard;
        ok = false;
      } else if (out_bytes && fwrite(values.data(), 1, out_bytes, out) != out_bytes) {
        fail(io_problem("cannot write " + output, strerror(errno), 0), 2);
        ok = false;
      } else if (in_used == 0 && out_bytes == 0) {  // the decoder always progresses; never loop
        ws::Error e;
        e.code = ws::Status::UsageError;
        fail(problem_from(e, ErrorFacts()), 2);
        ok = false;
      }
      used += in_used;
      written += out_bytes;
    }
    at += uint64_t(n);
  }
  close(fd);
  if (ok && (!d.done() || written != row->output_bytes)) {
    ws::Error e;
    e.code = ws::Status::UsageError;
    fail(problem_from(e, ErrorFacts()), 2);
    ok = false;
  }
  if (!ok) {
    abandon();
    return false;
  }
  if (out == stdout ? fflush(out) != 0 : fclose(out) != 0) {
    fail(io_problem("cannot write " + output, strerror(errno), 0), 2);
    if (out != stdout) unlink(output.c_str());
    return false;
  }
  row->written = true;
  return true;
}

int LogicalJob::finish() {
  const DequantArgs& args = opt_.dequant;
  if (opt_.json) {
    printf("%s\n", dequant_json(path_, ws::Format::Safetensors, std::string(ws::convention_name(view_.convention)),
                                args.f16, rows_, args.all, problem_)
                       .c_str());
  } else if (args.all && !problem_) {
    fputs(all_summary_text(rows_, args.output).c_str(), stdout);
  }
  if (problem_ && !opt_.json) {
    const std::string where = problem_->code == "TensorNotFound" || problem_->code == "UnsupportedFormat"
                                  ? display_text(problem_->message)
                                  : problem_line(*problem_);  // names the shard when there is one
    fprintf(stderr, "weightstream: %s: %s\n", display_text(path_).c_str(), where.c_str());
  }
  fflush(stdout);
  return problem_ ? exit_ : 0;
}

}  // namespace

std::optional<int> run_logical_dequant(const CliOptions& options) {
  LogicalJob job(options);
  return job.run();
}

}  // namespace wscli

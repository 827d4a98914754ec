// weightstream CLI — `dequant` as a host of ws::ModelLoader (see model_dequant.h): the loader reads
// the model (a file, standard input, an index, a manifest, a UQFF directory), decides what each
// weight is and decodes it; this file names the outputs, writes the pieces it is handed and
// reports, in the rows and words dequant always printed (dequant_output.h).
#include "model_dequant.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <map>

#include "error_text.h"
#include "model_host.h"
#include "problem_text.h"
#include "file_report.h"
#include "scan_model.h"
#include "tensor_rows.h"
#include "text_format.h"
#include "weightstream/load_plan.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dequant writes host-order floats");

namespace wscli {
namespace {

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

class ModelDequant {
 public:
  explicit ModelDequant(const CliOptions& o) : opt_(o), args_(o.dequant), path_(o.files[0]) {}
  int run();

 private:
  int load();
  bool on_ready(ws::ModelLoader& L);
  bool on_event(ws::ModelLoader& L, const ws::ModelEvent& e);
  DequantTensor describe(const ws::ModelLoader& L, uint32_t w) const;
  std::string shard_of(const ws::ModelLoader& L, uint32_t table) const;
  bool select_one(ws::ModelLoader& L);
  void fail(Problem p, int code) {
    problem_ = std::move(p);
    exit_ = code;
  }
  void abandon();
  int finish();

  const CliOptions& opt_;
  const DequantArgs& args_;
  const std::string path_;
  HostSettings settings_;
  ModelHost* host_ = nullptr;
  bool several_ = false;  // a model of several files (index, manifest, UQFF directory)
  bool logical_ = false;  // rows are logical weights (a convention, or several files)
  bool fallback_ = false;  // --tensor names a stored tensor that is no weight: loaded again as stored
  ws::Format format_ = ws::Format::Unknown;
  std::optional<std::string> convention_;
  std::vector<DequantTensor> rows_;
  uint32_t one_weight_ = ws::kNoTensor;  // --tensor: the weight, and its row (a plain weight of a
  uint32_t one_row_ = ws::kNoTensor;     // convention file is shown as the tensor it is)
  std::optional<Problem> problem_;
  std::vector<WarningRow> warnings_;  // the load's (ModelHost::warnings)
  int exit_ = 0;
  // The weight being written.
  DequantTensor* current_ = nullptr;
  FILE* out_ = nullptr;
  uint64_t written_ = 0;
};

std::string ModelDequant::shard_of(const ws::ModelLoader& L, uint32_t table) const {
  if (!several_) return "";  // the file itself
  std::string name = str(L.file_name(L.table_file(table)));
  return name.rfind("blobs/", 0) == 0 ? name.substr(6) : name;
}

DequantTensor ModelDequant::describe(const ws::ModelLoader& L, uint32_t index) const {
  const ws::LogicalModel& m = *L.model();
  const ws::LogicalWeight& w = L.weight(index);
  const ws::TensorRef packed = w.ref(ws::PieceRole::Packed);
  DequantTensor t;
  t.logical = true;
  t.name = str(w.name);
  t.convention = ws::convention_name(w.convention);
  t.plain = ws::convention_info(w.convention).plain;
  t.mode = ws::quant_mode_name(w.params.mode);
  t.stored = ws::dtype_name(L.tensor(packed).dtype());
  if (w.decodable) t.format = w.format;
  t.bits = w.params.bits;
  t.group = w.params.group;
  ws::QuantParameter qp[ws::kMaxQuantParameters];
  const uint32_t nq = ws::quant_parameters(w, qp, ws::kMaxQuantParameters);
  for (uint32_t k = 0; k < nq && k < ws::kMaxQuantParameters; ++k)
    t.parameters += std::string(k ? " " : "") + qp[k].key + "=" + (qp[k].text ? qp[k].text : std::to_string(qp[k].number));
  t.shape.assign(w.shape, w.shape + w.rank);
  t.elements = w.elements;
  for (uint32_t r = 0; r < ws::kPieceRoles; ++r)
    if (w.piece[r].present()) t.stored_bytes += L.piece_end(w.piece[r]) - L.piece_begin(w.piece[r]);
  t.data_offset = L.piece_begin(packed);
  t.shard = shard_of(L, packed.table);
  t.output_bytes = w.decodable ? w.elements * (args_.f16 ? 2 : 4) : 0;
  if (!w.decodable) t.skip_reason = no_decoding_reason(t.stored, false);
  // The seekable schedule: companions first, the packed piece last.
  const ws::LoadPlan plan = ws::plan_weight(m, index, opt_.scan.chunk_size);
  for (uint32_t i = 0; i < plan.schedule_count; ++i) {
    const ws::TensorRef r = w.ref(plan.schedule[i].role);
    DequantPiece piece;
    piece.role = ws::piece_role_name(plan.schedule[i].role);
    piece.tensor = str(L.tensor(r).name);
    piece.shard = shard_of(L, r.table);
    piece.offset = plan.schedule[i].begin;
    piece.bytes = plan.schedule[i].size();
    t.pieces.push_back(piece);
  }
  return t;
}

// --tensor NAME: the weight, or the reason there is none to decode.
bool ModelDequant::select_one(ws::ModelLoader& L) {
  uint32_t found = ws::kNoTensor;
  for (uint32_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].name == args_.tensor) {
      found = i;
      break;
    }
  if (found == ws::kNoTensor) {
    // A stored tensor of a single file that is no logical weight (a companion): the file is
    // loaded again as stored tensors (the loader's as_stored model), where it is one.
    if (logical_ && !several_ && !settings_.as_stored &&
        L.table(0).find(args_.tensor.data(), args_.tensor.size()) != ws::kNoTensor) {
      if (path_ == "-") {
        fail(usage_problem("UnsupportedFormat",
                           "tensor " + quoted(args_.tensor) + " is a companion of a " + *convention_ +
                               " weight: decoding it as stored reads the file again, which standard input cannot",
                           args_.tensor),
             2);
        return false;
      }
      fallback_ = true;
      return false;
    }
    std::vector<std::string> names;
    for (const DequantTensor& t : rows_) names.push_back(t.name);
    if (logical_)
      fail(name_not_found(args_.tensor, names, "logical weight", "weight",
                          settings_.entry == ws::ModelEntry::ShardIndex ? "sharded model" : *convention_ + " model"),
           2);
    else
      fail(name_not_found(args_.tensor, names, "tensor", "tensor", "file"), 2);
    return false;
  }
  DequantTensor& row = rows_[found];
  row.selected = true;
  if (!row.format) {
    fail(usage_problem("UnsupportedFormat",
                       (row.logical ? "weight " : "tensor ") + quoted(row.name) + " cannot be decoded: " + row.skip_reason,
                       row.name),
         2);
    return false;
  }
  if (row.format == ws::QuantFormat::I2_S && path_ == "-") {
    // The loader could keep the tensor whole until its tail; the CLI has always refused it here.
    fail(usage_problem("UnsupportedFormat",
                       "tensor " + quoted(row.name) + " is I2_S, whose scale follows its codes: decoding it "
                       "needs a file that can be read twice, not standard input",
                       row.name),
         2);
    return false;
  }
  row.output_file = args_.output;
  if (args_.output.empty()) return false;  // --json without -o: a description only
  one_row_ = found;
  one_weight_ = logical_ || !L.model() ? found : L.model()->find(row.name.data(), row.name.size());
  L.select(one_weight_);
  return true;
}

bool ModelDequant::on_ready(ws::ModelLoader& L) {
  rows_.clear();  // (a retry with a larger arena starts over)
  convention_.reset();
  one_weight_ = one_row_ = ws::kNoTensor;
  format_ = L.format();
  logical_ = several_ || (format_ == ws::Format::Safetensors && !ws::convention_info(L.convention()).plain);
  if (logical_) {
    convention_ = ws::convention_name(L.convention());
    for (uint32_t i = 0; i < L.weight_count(); ++i) rows_.push_back(describe(L, i));
    // A single file's plain weight asked for by name: the tensor it is, as the file stores it.
    if (!several_ && !args_.all) {
      for (uint32_t i = 0; i < L.weight_count(); ++i) {
        if (rows_[i].name != args_.tensor || !ws::convention_info(L.weight(i).convention).plain) continue;
        logical_ = false;
        convention_.reset();
        rows_.clear();
        break;
      }
    }
  }
  if (!logical_) {
    // Tensors as the files store them, in the model's order (a split GGUF model: every split's,
    // each row naming its split).
    rows_.clear();
    for (uint32_t t = 0; t < L.table_count(); ++t) {
      std::vector<DequantTensor> rows = plan_tensors(*L.file_reader(L.table_file(t)), args_.f16);
      for (DequantTensor& r : rows) {
        if (L.table_count() > 1) r.split = str(L.file_name(L.table_file(t)));
        rows_.push_back(std::move(r));
      }
    }
  }
  // BitNet I2_S keeps its scale after the codes: shown with the row (the loader reads it too).
  if (!logical_ && path_ != "-") {
    for (DequantTensor& t : rows_) {
      if (t.format != ws::QuantFormat::I2_S) continue;
      FILE* f = fopen((t.split.empty() ? path_ : host_->dir() + t.split).c_str(), "rb");
      uint8_t b[4];
      if (f && fseeko(f, off_t(t.data_offset + t.elements / 4), SEEK_SET) == 0 && fread(b, 1, 4, f) == 4) {
        float v;
        memcpy(&v, b, 4);
        t.i2s_scale = v;
      }
      if (f) fclose(f);
    }
  }
  // Tensor rows are the file's tensors in file order, and so are its weights (plain, or GGUF).
  if (!args_.all) return select_one(L);
  if (!args_.output.empty()) {
    if (std::optional<Problem> p = prepare_output_dir(args_.output)) {
      fail(*p, 2);
      return false;
    }
  }
  std::unordered_set<std::string> taken;  // hashed: --all over 100,000 weights
  for (uint32_t i = 0; i < rows_.size(); ++i) {
    DequantTensor& row = rows_[i];
    if (!row.format || args_.output.empty()) continue;
    row.selected = true;
    row.output_file = args_.output + "/" + output_file_stem(row.name, &taken) + ".bin";
    L.select(i);
  }
  return !args_.output.empty();
}

bool ModelDequant::on_event(ws::ModelLoader& L, const ws::ModelEvent& e) {
  switch (e.type) {
    case ws::ModelEventType::ModelReady:
      return on_ready(L);
    case ws::ModelEventType::WeightBegin: {
      current_ = &rows_[e.weight == one_weight_ ? one_row_ : e.weight];
      if (logical_) {
        // A weight a forward stream resolves as it passes its data (the loader's: bitsandbytes'
        // quant_state) has its shape and parameters from its begin: the row says them as now.
        const DequantTensor now = describe(L, e.weight);
        current_->shape = now.shape;
        current_->parameters = now.parameters;
        current_->group = now.group;
      }
      written_ = 0;
      out_ = current_->output_file == "-" ? stdout : fopen(current_->output_file.c_str(), "wb");
      if (!out_) {
        fail(io_problem("cannot write " + current_->output_file, strerror(errno), 0), 2);
        current_ = nullptr;
        return false;
      }
      return true;
    }
    case ws::ModelEventType::WeightData:
      if (fwrite(e.data, 1, e.size, out_) != e.size) {
        fail(io_problem("cannot write " + current_->output_file, strerror(errno), 0), 2);
        abandon();
        return false;
      }
      written_ += e.size;
      return true;
    case ws::ModelEventType::WeightEnd: {
      DequantTensor& t = *current_;
      const bool ok = out_ == stdout ? fflush(out_) == 0 : fclose(out_) == 0;
      out_ = nullptr;
      current_ = nullptr;
      if (!ok) {
        fail(io_problem("cannot write " + t.output_file, strerror(errno), 0), 2);
        if (t.output_file != "-") unlink(t.output_file.c_str());
        return false;
      }
      t.written = true;
      if (!opt_.json) {
        FILE* to = t.output_file == "-" ? stderr : stdout;
        fprintf(to, "%s\n", written_line(t, args_.f16).c_str());
        fflush(to);
      }
      // One tensor asked for and written: the rest of the model is not needed — unless files are
      // being verified, which takes every byte of them (and the verdict at the end).
      return args_.all || host_->verifying();
    }
    default:
      return true;
  }
}

// A weight cut short leaves no partial file behind: a half-written tensor looks like a whole one.
void ModelDequant::abandon() {
  if (out_ && out_ != stdout) {
    fclose(out_);
    unlink(current_->output_file.c_str());
  }
  out_ = nullptr;
  current_ = nullptr;
}

int ModelDequant::run() {
  settings_ = model_settings(path_, opt_.scan);
  several_ = settings_.entry != ws::ModelEntry::File;
  settings_.mode = ws::ModelLoadMode::Decode;
  settings_.out = args_.f16 ? ws::OutType::F16 : ws::OutType::F32;
  int status = load();
  if (fallback_) {
    // --tensor named a companion: the same file as stored tensors.
    fallback_ = false;
    settings_.as_stored = true;
    status = load();
  }
  return status;
}

int ModelDequant::load() {
  ModelHost h(settings_);
  host_ = &h;
  h.run([this](ws::ModelLoader& L, const ws::ModelEvent& e) { return on_event(L, e); });
  if (fallback_) return 0;
  warnings_ = h.warnings();
  const ws::ModelLoader& L = h.loader();
  if (h.io() && !problem_) {
    abandon();
    fail(*h.io(), 2);
  } else if (h.failed() && !problem_) {
    abandon();
    if (format_ == ws::Format::Unknown) {
      const ws::Reader* r = L.file_count() ? L.file_reader(L.table_count() ? L.table_file(0) : 0) : nullptr;
      if (r) format_ = r->format();
    }
    if (several_ || L.convention_error()) {
      // The model's convention (a manifest is Ollama's before its blobs are read).
      if (!convention_)
        convention_ = settings_.entry == ws::ModelEntry::OllamaManifest ? "ollama" : ws::convention_name(L.convention());
      if (several_ && format_ == ws::Format::Unknown) format_ = ws::Format::Safetensors;
    }
    Problem p = h.problem();
    if (L.error().code == ws::Status::DigestMismatch) {
      // A file of the model is not what its digest says: nothing decoded from the model stays.
      for (DequantTensor& t : rows_) {
        if (!t.written || t.output_file == "-") continue;
        unlink(t.output_file.c_str());
        t.written = false;
      }
    }
    if (settings_.entry == ws::ModelEntry::OllamaManifest) word_manifest_problem(h, settings_.blobs_dir, &p);
    if (!several_ && L.error_file() == 0) p.shard.clear();
    if (L.error().code == ws::Status::ShardNotGiven) {
      // On disk a shard the index names that is not there is an I/O error (exit 2), as always.
      const std::string shard = p.shard;
      p = io_problem("cannot open " + h.dir() + shard, strerror(ENOENT), 0);
      p.shard = shard;
    }
    if (settings_.entry == ws::ModelEntry::ShardIndex && L.error_file() == L.entry_file()) p.shard.clear();
    fail(p, p.io ? 2 : 1);
  }
  return finish();
}

int ModelDequant::finish() {
  if (opt_.json) {
    printf("%s\n", dequant_json(path_, format_, convention_, args_.f16, rows_, args_.all, problem_, warnings_).c_str());
  } else if (args_.all && !problem_) {
    fputs(all_summary_text(rows_, args_.output).c_str(), stdout);
  }
  if (problem_ && !opt_.json) {
    const std::string where = problem_->code == "TensorNotFound" || problem_->code == "UnsupportedFormat"
                                  ? display_text(problem_->message)
                                  : problem_line(*problem_);  // names the shard when there is one
    fprintf(stderr, "weightstream: %s: %s\n", display_text(path_).c_str(), where.c_str());
  }
  fflush(stdout);
  print_warnings(path_, warnings_);
  return problem_ ? exit_ : 0;
}

}  // namespace

int run_dequant(const CliOptions& options) {
  ModelDequant job(options);
  return job.run();
}

}  // namespace wscli

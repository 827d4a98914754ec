// weightstream CLI — dequant (see dequant.h).
#include "dequant.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "error_text.h"
#include "file_source.h"
#include "json_writer.h"
#include "model_dequant.h"
#include "problem_text.h"
#include "progress.h"
#include "scan_file.h"
#include "text_format.h"

// The values are written as the host holds them; the format promises little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dequant writes host-order floats");

namespace wscli {
namespace {

constexpr size_t kOutputPiece = 1 << 20;  // bytes of values per write
constexpr uint32_t kI2sTail = 32;         // I2_S: the scale tail after the codes

float load_f32le(const uint8_t* p) {
  float f;
  memcpy(&f, p, 4);
  return f;
}

// One run over the file: reader events in, values out.
class DequantJob {
 public:
  DequantJob(const CliOptions& options) : opt_(options), args_(options.dequant), path_(options.files[0]) {}

  int run();

 private:
  struct Attempt {
    bool arena_exhausted = false;
    size_t arena_needed = 0;
  };

  Attempt read_once(size_t arena_size);
  bool on_header(const ws::Reader& reader);
  bool select_tensors();
  bool read_i2s_scales();
  bool begin_tensor(uint32_t index);
  bool feed(const uint8_t* data, size_t size);
  bool end_tensor();
  void abandon_output();
  void fail(Problem p, int exit_code) {
    problem_ = std::move(p);
    exit_code_ = exit_code;
  }
  void report_written(const DequantTensor& t);

  const CliOptions& opt_;
  const DequantArgs& args_;
  const std::string path_;
  ChunkedFile file_;
  ws::Format format_ = ws::Format::Unknown;
  std::vector<DequantTensor> tensors_;
  std::optional<Problem> problem_;
  int exit_code_ = 0;
  size_t remaining_selected_ = 0;

  // The tensor being decoded.
  DequantTensor* current_ = nullptr;
  ws::Dequantizer decoder_;
  FILE* out_ = nullptr;
  uint64_t input_left_ = 0;  // stored bytes the decoder still takes (I2_S: not the tail)
  uint64_t written_ = 0;
  std::vector<uint8_t> buffer_;
};

}  // namespace

std::vector<DequantTensor> plan_tensors(const ws::Reader& reader, bool f16) {
  std::vector<DequantTensor> out;
  const bool gguf = reader.format() == ws::Format::Gguf;
  const ws::GgmlDialect dialect = reader.gguf_dialect();
  const uint32_t n = reader.tensor_count();
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const ws::TensorInfo t = reader.tensor(i);
    DequantTensor d;
    d.name.assign(t.name.data ? t.name.data : "", t.name.size);
    for (ws::ShapeIter it = t.shape(); !it.done();) d.shape.push_back(it.next());
    // GGUF lists ne[0], the contiguous dimension, first: row-major order is the reverse.
    if (gguf) std::reverse(d.shape.begin(), d.shape.end());
    d.elements = t.element_count();
    d.stored_bytes = t.byte_size();
    d.data_offset = reader.data_start() + t.begin;
    ws::QuantFormat f;
    bool decodable;
    if (gguf) {
      d.ggml_type = t.type;
      d.stored = ws::ggml_type_info(t.type, dialect).name;
      decodable = ws::quant_format_from_ggml(t.type, dialect, &f);
    } else {
      d.stored = ws::dtype_name(t.dtype());
      decodable = ws::quant_format_from_dtype(t.dtype(), &f);
    }
    if (!decodable) {
      d.skip_reason = no_decoding_reason(d.stored, gguf);
      out.push_back(std::move(d));
      continue;
    }
    // The decoder's own checks, before any byte is read: a kernel this build lacks, or a tensor
    // that is not whole blocks (the reader checks GGUF rows; I2_S's 128-value groups it does not).
    ws::DequantSpec spec;
    spec.format = f;
    spec.elements = d.elements;
    spec.has_global_scale = f == ws::QuantFormat::I2_S;
    ws::Dequantizer probe;
    const ws::Status s = probe.init(spec);
    const ws::QuantFormatInfo info = ws::quant_format_info(f);
    const uint64_t tail = f == ws::QuantFormat::I2_S ? kI2sTail : 0;
    if (s == ws::Status::UnsupportedFormat) {
      d.skip_reason = "this build of weightstream has no kernel for " + d.stored;
    } else if (s != ws::Status::Ok) {
      d.skip_reason = "its " + std::to_string(d.elements) + " values are not whole blocks of " +
                      std::to_string(info.block_elems);
    } else if (probe.input_bytes() + tail != d.stored_bytes) {
      d.skip_reason = "its " + std::to_string(d.stored_bytes) + " stored bytes are not the " +
                      std::to_string(probe.input_bytes() + tail) + " its " + std::to_string(d.elements) +
                      " values take";
    } else if (__builtin_mul_overflow(d.elements, uint64_t(f16 ? 2 : 4), &d.output_bytes)) {
      d.skip_reason = "its values would not fit in a file";
    } else {
      d.format = f;
      d.block_elems = info.block_elems;
      d.block_bytes = info.block_bytes;
    }
    if (!d.format) d.output_bytes = 0;
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

// The text line for a tensor written (stdout, or stderr when the values go to stdout).
void DequantJob::report_written(const DequantTensor& t) {
  if (opt_.json) return;
  FILE* to = t.output_file == "-" ? stderr : stdout;
  fprintf(to, "%s\n", written_line(t, args_.f16).c_str());
  fflush(to);
}

bool DequantJob::select_tensors() {
  if (!args_.all) {
    DequantTensor* found = nullptr;
    for (DequantTensor& t : tensors_)
      if (t.name == args_.tensor) {
        found = &t;
        break;
      }
    if (!found) {
      std::vector<std::string> names;
      for (const DequantTensor& t : tensors_) names.push_back(t.name);
      fail(name_not_found(args_.tensor, names, "tensor", "tensor", "file"), 2);
      return false;
    }
    if (!found->format) {
      fail(usage_problem("UnsupportedFormat",
                         "tensor " + quoted(found->name) + " cannot be decoded: " + found->skip_reason,
                         found->name),
           2);
      found->selected = true;  // listed in the JSON with its reason
      return false;
    }
    found->selected = true;
    found->output_file = args_.output;
    remaining_selected_ = 1;
    return true;
  }
  std::unordered_set<std::string> taken;  // hashed: --all over 100,000 weights
  for (DequantTensor& t : tensors_) {
    if (!t.format) continue;
    t.selected = true;
    if (!args_.output.empty()) t.output_file = args_.output + "/" + output_file_stem(t.name, &taken) + ".bin";
    ++remaining_selected_;
  }
  if (!args_.output.empty()) {
    if (std::optional<Problem> p = prepare_output_dir(args_.output)) {
      fail(*p, 2);
      return false;
    }
  }
  return true;
}

// BitNet I2_S keeps its scale after the codes: read it before decoding them, from a second
// descriptor (the stream itself has not reached the tail yet).
bool DequantJob::read_i2s_scales() {
  for (DequantTensor& t : tensors_) {
    if (!t.selected || t.format != ws::QuantFormat::I2_S) continue;
    if (path_ == "-") {
      fail(usage_problem("UnsupportedFormat",
                         "tensor " + quoted(t.name) + " is I2_S, whose scale follows its codes: decoding it "
                         "needs a file that can be read twice, not standard input",
                         t.name),
           2);
      return false;
    }
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    uint8_t b[4];
    const uint64_t at = t.data_offset + t.elements / 4;
    const ssize_t n = fd < 0 ? -1 : pread(fd, b, 4, off_t(at));
    const int err = errno;
    if (fd >= 0) close(fd);
    if (n != 4) {
      fail(io_problem("cannot read the I2_S scale of " + t.name, n < 0 ? strerror(err) : "the file is short", at),
           2);
      return false;
    }
    t.i2s_scale = load_f32le(b);
  }
  return true;
}

bool DequantJob::on_header(const ws::Reader& reader) {
  tensors_ = plan_tensors(reader, args_.f16);
  if (!select_tensors()) return false;
  return read_i2s_scales();
}

bool DequantJob::begin_tensor(uint32_t index) {
  if (index >= tensors_.size() || !tensors_[index].selected || tensors_[index].output_file.empty()) return true;
  DequantTensor& t = tensors_[index];
  ws::DequantSpec spec;
  spec.format = *t.format;
  spec.out = args_.f16 ? ws::OutType::F16 : ws::OutType::F32;
  spec.elements = t.elements;
  spec.input_offset = t.data_offset;
  if (t.i2s_scale) {
    spec.has_global_scale = true;
    spec.global_scale = *t.i2s_scale;
  }
  if (decoder_.init(spec) != ws::Status::Ok) {  // plan_tensors made the same call: a bug
    ErrorFacts facts;
    fail(problem_from(decoder_.error(), facts), 1);
    problem_->tensor = t.name;
    return false;
  }
  out_ = t.output_file == "-" ? stdout : fopen(t.output_file.c_str(), "wb");
  if (!out_) {
    fail(io_problem("cannot write " + t.output_file, strerror(errno), 0), 2);
    return false;
  }
  current_ = &t;
  input_left_ = decoder_.input_bytes();
  written_ = 0;
  if (buffer_.empty()) buffer_.resize(kOutputPiece);
  return true;
}

bool DequantJob::feed(const uint8_t* data, size_t size) {
  if (!current_) return true;
  const size_t n = size < input_left_ ? size : size_t(input_left_);  // I2_S: not the tail
  size_t used = 0;
  while (used < n) {
    size_t in_used = 0, out_bytes = 0;
    const ws::Status s = decoder_.decode(data + used, n - used, &in_used, buffer_.data(), buffer_.size(), &out_bytes);
    if (s != ws::Status::Ok) {
      ErrorFacts facts;
      fail(problem_from(decoder_.error(), facts), 1);
      problem_->tensor = current_->name;
      return false;
    }
    if (out_bytes != 0 && fwrite(buffer_.data(), 1, out_bytes, out_) != out_bytes) {
      fail(io_problem("cannot write " + current_->output_file, strerror(errno), 0), 2);
      return false;
    }
    written_ += out_bytes;
    used += in_used;
    if (in_used == 0 && out_bytes == 0) {  // the decoder always progresses; never loop forever
      ws::Error e;
      e.code = ws::Status::UsageError;
      fail(problem_from(e, ErrorFacts()), 2);
      return false;
    }
  }
  input_left_ -= n;
  return true;
}

bool DequantJob::end_tensor() {
  if (!current_) return true;
  DequantTensor& t = *current_;
  if (!decoder_.done() || written_ != t.output_bytes) {
    ws::Error e;
    e.code = ws::Status::UsageError;
    fail(problem_from(e, ErrorFacts()), 2);
    return false;
  }
  const bool ok = out_ == stdout ? fflush(out_) == 0 : fclose(out_) == 0;
  out_ = nullptr;
  current_ = nullptr;
  if (!ok) {
    fail(io_problem("cannot write " + t.output_file, strerror(errno), 0), 2);
    if (t.output_file != "-") unlink(t.output_file.c_str());
    return false;
  }
  t.written = true;
  --remaining_selected_;
  report_written(t);
  return true;
}

// A tensor cut short leaves no partial file behind: a half-written tensor looks like a whole one.
void DequantJob::abandon_output() {
  if (!current_) return;
  if (out_ && out_ != stdout) {
    fclose(out_);
    unlink(current_->output_file.c_str());
  }
  out_ = nullptr;
  current_ = nullptr;
}

DequantJob::Attempt DequantJob::read_once(size_t arena_size) {
  Attempt result;
  std::vector<uint64_t> arena((arena_size + 7) / 8);
  ws::Reader reader(arena.data(), arena.size() * 8);
  if (file_.size_known()) reader.set_input_size(file_.size());
  Progress progress(path_, file_.size_known(), file_.size(), opt_.scan.progress);
  for (;;) {
    const ws::Event e = reader.next();
    format_ = reader.format();
    switch (e.type) {
      case ws::EventType::NeedInput: {
        const uint8_t* data;
        size_t size;
        const ChunkedFile::Result r = file_.next(opt_.scan.chunk_size, &data, &size);
        if (r == ChunkedFile::Result::Failed) {
          fail(io_problem("cannot read", file_.error(), file_.position()), 2);
          return result;
        }
        if (r == ChunkedFile::Result::End) {
          reader.finish();
        } else {
          reader.feed(data, size);
          progress.update(file_.position());
        }
        break;
      }
      case ws::EventType::HeaderReady:
        if (!on_header(reader)) return result;
        // Nothing to write (a --json description without -o): the header says it all.
        if (args_.output.empty()) return result;
        break;
      case ws::EventType::TensorBegin:
        if (!begin_tensor(e.tensor)) return result;
        break;
      case ws::EventType::TensorBytes:
        if (!feed(e.data, e.size)) return result;
        break;
      case ws::EventType::TensorEnd:
        if (!end_tensor()) return result;
        // One tensor asked for and written: the rest of the file is not needed.
        if (!args_.all && remaining_selected_ == 0) {
          progress.finish();
          return result;
        }
        break;
      case ws::EventType::End:
        progress.finish();
        return result;
      case ws::EventType::Error: {
        progress.finish();
        const ws::Error& err = reader.error();
        if (err.code == ws::Status::ArenaExhausted) {
          result.arena_exhausted = true;
          result.arena_needed = reader.arena_needed();
        }
        ErrorFacts facts;
        facts.offset = err.offset;
        facts.input_size = file_.size_known() ? file_.size() : file_.position();
        facts.input_size_exact = file_.size_known();
        if (reader.data_start() != 0) facts.data_end = data_end_of(reader.data_start(), reader.data_size());
        facts.arena_size = arena.size() * 8;
        facts.arena_needed = reader.arena_needed();
        fail(problem_from(err, facts), 1);
        if (!problem_->tensor && err.tensor < tensors_.size()) problem_->tensor = tensors_[err.tensor].name;
        return result;
      }
      default:
        break;
    }
  }
}

int DequantJob::run() {
  if (!file_.open(path_)) {
    fail(io_problem("cannot open", file_.error(), 0), 2);
  } else {
    Attempt a = read_once(opt_.scan.arena_size);
    // As inspect and validate: one retry with the arena the reader measured (the header comes
    // before any tensor, so nothing was written yet).
    if (a.arena_exhausted && a.arena_needed > opt_.scan.arena_size && file_.rewindable() && file_.rewind()) {
      problem_.reset();
      exit_code_ = 0;
      read_once((a.arena_needed + 7) & ~size_t(7));
    }
    if (problem_ && !problem_->io && exit_code_ == 1 && path_ != "-" && !current_) {
      // A rejected file: validate's message has the most to say (it reads the file again).
      const FileReport rep = scan_file(path_, opt_.scan);
      if (rep.problem && rep.problem->code == problem_->code) problem_ = rep.problem;
    }
    abandon_output();
  }
  if (opt_.json) {
    printf("%s\n", dequant_json(path_, format_, std::nullopt, args_.f16, tensors_, args_.all, problem_).c_str());
  } else {
    if (args_.all && problem_ == std::nullopt) fputs(all_summary_text(tensors_, args_.output).c_str(), stdout);
    if (problem_) {
      const std::string where = problem_->code == "TensorNotFound" || problem_->code == "UnsupportedFormat"
                                    ? display_text(problem_->message)
                                    : problem_line(*problem_);
      fprintf(stderr, "weightstream: %s: %s\n", display_text(path_).c_str(), where.c_str());
    }
  }
  fflush(stdout);
  return problem_ ? exit_code_ : 0;
}

}  // namespace

int run_dequant(const CliOptions& options) {
  // The model loader decodes every model; only a stored tensor that is no weight (a companion of a
  // single file, --tensor) is decoded as stored, tensor by tensor.
  if (std::optional<int> status = run_model_dequant(options)) return *status;
  DequantJob job(options);
  return job.run();
}

}  // namespace wscli

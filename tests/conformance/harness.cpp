// Conformance harness: chunked feeding, normalized event recording, protocol checks.
#include "harness.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

namespace wstest {

bool read_file(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  f.seekg(0, std::ios::end);
  std::streamoff n = f.tellg();
  if (n < 0) return false;
  f.seekg(0, std::ios::beg);
  out->assign(size_t(n), 0);
  if (n > 0 && !f.read(reinterpret_cast<char*>(out->data()), n)) return false;
  return true;
}

std::vector<std::string> list_files(const std::string& dir, const std::string& extension) {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string path = e.path().string();
    if (path.size() >= extension.size() &&
        path.compare(path.size() - extension.size(), extension.size(), extension) == 0)
      v.push_back(path);
  }
  std::sort(v.begin(), v.end());  // directory order is not stable
  return v;
}

size_t find_nth(const std::string& text, const std::string& needle, int k) {
  size_t pos = std::string::npos, from = 0;
  for (int i = 0; i < k; ++i) {
    pos = text.find(needle, from);
    if (pos == std::string::npos) return pos;
    from = pos + 1;
  }
  return pos;
}

std::vector<uint8_t> make_safetensors(const std::string& header, const std::string& data) {
  std::vector<uint8_t> v;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) v.push_back(uint8_t(n >> (8 * i)));
  v.insert(v.end(), header.begin(), header.end());
  v.insert(v.end(), data.begin(), data.end());
  return v;
}

std::string entry_json(const std::string& name, const std::string& dtype, const std::string& shape,
                       uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[" + shape +
         "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

std::string pattern_bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char((i * 37 + 11) & 0xFF);
  return s;
}

std::string Chunking::name() const {
  switch (kind) {
    case kWhole: return "whole";
    case kFixed: return std::to_string(size) + "B";
    case kRandom: return "random" + std::to_string(seed);
  }
  return "?";
}

std::vector<Chunking> standard_chunkings() {
  std::vector<Chunking> v = {Chunking::whole(), Chunking::fixed(1)};
  for (uint32_t seed = 1; seed <= 5; ++seed) v.push_back(Chunking::random(seed));
  return v;
}

PieceSizer::PieceSizer(const Chunking& c) : c_(c) {
  // Two words of mt19937 output seed a small xorshift, so no <random> object is kept (keeps the
  // sizer trivially copyable and allocation-free).
  std::mt19937 g(c.seed);
  state_[0] = g() | 1;
  state_[1] = g() | 1;
}

uint32_t PieceSizer::draw() {
  uint32_t x = state_[0], y = state_[1];
  state_[0] = y;
  x ^= x << 23;
  x ^= x >> 17;
  x ^= y ^ (y >> 26);
  state_[1] = x;
  return x + y;
}

size_t PieceSizer::next(size_t remaining) {
  size_t n = remaining;
  switch (c_.kind) {
    case Chunking::kWhole: break;
    case Chunking::kFixed: n = c_.size; break;
    case Chunking::kRandom: {
      // A quarter each of 1–8, 9–64, 65–1024 and 1025–8192 bytes, and now and then an empty
      // piece (a network stream can deliver one; it must change nothing).
      static const size_t lo[4] = {1, 9, 65, 1025}, hi[4] = {8, 64, 1024, 8192};
      uint32_t r = draw();
      if ((r >> 28) == 0) return 0;
      size_t band = r & 3;
      n = lo[band] + (r >> 2) % (hi[band] - lo[band] + 1);
      break;
    }
  }
  return n < remaining ? n : remaining;
}

std::string to_string(const RecordedEvent& e) {
  std::string s = ws::event_type_name(e.type);
  if (e.type == ws::EventType::TensorBegin || e.type == ws::EventType::TensorBytes ||
      e.type == ws::EventType::TensorEnd)
    s += "(t" + std::to_string(e.tensor) + " @" + std::to_string(e.offset) +
         (e.type == ws::EventType::TensorBytes ? " +" + std::to_string(e.size) : "") + ")";
  return s;
}

std::string printable(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      o += char(c);
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
    }
  }
  return o + "\"";
}

std::string RunResult::summary() const {
  if (ended) return "Ok(End@" + std::to_string(position) + ")";
  std::string s = status_name() + "@" + std::to_string(error_offset);
  if (error_has_name) s += "[" + printable(error_tensor_name) + "]";
  return s;
}

namespace {

TensorRow row_of(const ws::Reader& reader, const ws::TensorInfo& t) {
  TensorRow r;
  r.name.assign(t.name.data, t.name.size);
  r.dtype = reader.format() == ws::Format::Gguf
                ? ws::ggml_type_info(t.type, reader.gguf_dialect()).name
                : ws::dtype_name(t.dtype());
  ws::ShapeIter it = t.shape();
  while (!it.done()) r.shape.push_back(it.next());
  r.begin = t.begin;
  r.end = t.end;
  r.type_id = t.type;
  r.entry_offset = t.entry_offset;
  return r;
}

// Tracks one run: the stream protocol as reader.h describes it.
class Recorder {
 public:
  Recorder(RunResult* out, const RunOptions& opt) : out_(out), opt_(opt) {}

  void violation(const std::string& what) {
    if (out_->violations.size() < 20) out_->violations.push_back(what);
  }

  // The piece currently fed: [piece, piece + piece_size) holds input bytes from `piece_pos` on.
  void set_piece(const uint8_t* piece, size_t size, uint64_t pos) {
    piece_ = piece;
    piece_size_ = size;
    piece_pos_ = pos;
  }

  void on_event(const ws::Event& e, const ws::Reader& r) {
    using ws::EventType;
    switch (e.type) {
      case EventType::NeedInput: return;
      case EventType::HeaderReady: on_header(r); break;
      case EventType::TensorBegin: on_begin(e); break;
      case EventType::TensorBytes: on_bytes(e); return;  // merged, pushed by itself
      case EventType::TensorEnd: on_end(e); break;
      case EventType::End: on_finish(r); break;
      case EventType::Error: break;
      case EventType::KvBytes:
        on_kv_piece(e);
        on_kv_bytes(e);  // merged, pushed by itself
        return;
      case EventType::KvBegin:
      case EventType::KvScalar:
      case EventType::KvEnd:
        on_kv_event(e);
        push({e.type, e.kv, e.offset, 0});  // GGUF key-value events carry the KV index
        return;
    }
    push({e.type, e.tensor, e.offset, 0});
  }

 private:
  void push(const RecordedEvent& ev) { out_->events.push_back(ev); }

  void on_header(const ws::Reader& r) {
    if (out_->header_ready) violation("HeaderReady twice");
    out_->header_ready = true;
    out_->header_size = r.header_size();
    out_->data_start = r.data_start();
    out_->data_size = r.data_size();
    out_->tensor_count = r.tensor_count();
    if (r.format() == ws::Format::Gguf) {
      out_->gguf_version = r.gguf_version();
      out_->gguf_alignment = r.gguf_alignment();
      out_->gguf_kv_count = r.gguf_kv_count();
      out_->gguf_dialect = r.gguf_dialect();
      ws::StrView arch = r.gguf_architecture();
      out_->gguf_architecture.assign(arch.data ? arch.data : "", arch.size);
      if (out_->kvs.size() != r.gguf_kv_count())
        violation("HeaderReady after " + std::to_string(out_->kvs.size()) + " KvBegin of " +
                  std::to_string(r.gguf_kv_count()));
      if (!out_->kvs.empty() && !out_->kvs.back().ended) violation("HeaderReady inside a KV");
    }
    out_->tensor_bytes.assign(r.tensor_count(), std::string());
    begin_.assign(r.tensor_count(), 0);
    size_.assign(r.tensor_count(), 0);
    for (uint32_t i = 0; i < r.tensor_count(); ++i) {
      ws::TensorInfo t = r.tensor(i);
      const ws::StrView n = r.tensors().name(i);  // the name-only accessor agrees with get()
      if (n.data != t.name.data || n.size != t.name.size) violation("TensorTable::name(" + std::to_string(i) + ") differs from get()");
      begin_[i] = t.begin;
      size_[i] = t.end - t.begin;
      if (opt_.snapshot_table) out_->tensors.push_back(row_of(r, t));
    }
    if (opt_.snapshot_table) {
      const ws::TensorTable& table = r.tensors();
      out_->has_metadata = table.has_metadata();
      uint32_t cursor = 0;
      for (uint32_t i = 0; i < table.metadata_count(); ++i) {
        ws::MetadataEntry m = table.metadata_at(&cursor);
        out_->metadata.emplace_back(std::string(m.key.data, m.key.size),
                                    std::string(m.value.data, m.value.size));
      }
    }
  }

  void on_begin(const ws::Event& e) {
    if (!out_->header_ready) return violation("TensorBegin before HeaderReady");
    if (open_) violation("TensorBegin while tensor " + std::to_string(cur_) + " is open");
    if (e.tensor != next_tensor_)
      violation("TensorBegin t" + std::to_string(e.tensor) + ", expected t" +
                std::to_string(next_tensor_));
    if (e.tensor >= out_->tensor_count) return violation("TensorBegin beyond the table");
    cur_ = e.tensor;
    next_tensor_ = e.tensor + 1;
    open_ = true;
    done_ = 0;
    if (e.offset != out_->data_start + begin_[cur_])
      violation("TensorBegin t" + std::to_string(cur_) + " offset " + std::to_string(e.offset) +
                " != data_start + begin " + std::to_string(out_->data_start + begin_[cur_]));
  }

  void on_bytes(const ws::Event& e) {
    if (!open_ || e.tensor != cur_) return violation("TensorBytes outside its tensor");
    if (e.size == 0) return;  // carries nothing; not part of the normalized stream
    uint64_t expect_off = out_->data_start + begin_[cur_] + done_;
    if (e.offset != expect_off)
      violation("TensorBytes t" + std::to_string(cur_) + " at " + std::to_string(e.offset) +
                ", expected " + std::to_string(expect_off));
    // Zero copy: the view must lie inside the piece just fed, at the matching position.
    if (!(e.data >= piece_ && e.data + e.size <= piece_ + piece_size_)) {
      violation("TensorBytes view outside the fed piece");
    } else if (piece_pos_ + uint64_t(e.data - piece_) != e.offset) {
      violation("TensorBytes offset does not match its position in the piece");
    }
    done_ += e.size;
    if (done_ > size_[cur_]) violation("TensorBytes past the tensor's end");
    if (opt_.record_bytes && done_ <= size_[cur_])
      out_->tensor_bytes[cur_].append(reinterpret_cast<const char*>(e.data), e.size);
    if (!out_->events.empty() && out_->events.back().type == ws::EventType::TensorBytes &&
        out_->events.back().tensor == cur_) {
      out_->events.back().size += e.size;
    } else {
      push({ws::EventType::TensorBytes, cur_, e.offset, e.size});
    }
  }

  // KvBegin / KvScalar / KvEnd: assembled into out_->kvs, checking event.h's protocol (KVs in
  // file order, one KvBegin and one KvEnd each, a scalar only for scalar types, every element).
  void on_kv_event(const ws::Event& e) {
    using ws::EventType;
    std::vector<KvRecord>& kvs = out_->kvs;
    if (e.type == EventType::KvBegin) {
      if (e.kv != kvs.size()) violation("KvBegin kv " + std::to_string(e.kv) + ", expected " +
                                        std::to_string(kvs.size()));
      if (!kvs.empty() && !kvs.back().ended) violation("KvBegin before the previous KvEnd");
      KvRecord k;
      k.index = e.kv;
      k.key.assign(e.key.data ? e.key.data : "", e.key.size);
      k.offset = e.offset;
      k.type = e.value_type;
      if (e.value_type == ws::GgufType::Array) {
        k.elem_type = e.elem_type;
        k.count = e.count;
      }
      kvs.push_back(std::move(k));
      return;
    }
    KvRecord* k = current_kv(e);
    if (!k) return;
    if (e.type == EventType::KvScalar) {
      if (k->has_scalar || k->type == ws::GgufType::String || k->type == ws::GgufType::Array)
        violation("KvScalar for kv " + std::to_string(e.kv) + " of type " +
                  ws::gguf_type_name(k->type));
      k->has_scalar = true;
      k->u = e.u;
      k->i = e.i;
      memcpy(&k->f_bits, &e.f, 8);
      k->value_offset = e.offset;
      return;
    }
    // KvEnd: the value is complete.
    bool complete = true;
    if (k->type == ws::GgufType::Array) {
      if (k->elem_type == ws::GgufType::String) complete = k->strings.size() == k->count && !open_string_;
      else complete = k->bytes.size() == k->count * ws::gguf_type_size(k->elem_type);
    } else if (k->type == ws::GgufType::String) {
      complete = saw_string_end_;
    } else {
      complete = k->has_scalar;
    }
    if (!complete) violation("KvEnd for kv " + std::to_string(e.kv) + " before its whole value");
    k->ended = true;
  }

  // KvBytes: a piece of a string (of string element `index`) or whole numeric elements.
  void on_kv_piece(const ws::Event& e) {
    KvRecord* k = current_kv(e);
    if (!k) return;
    if (opt_.record_bytes && e.size) {
      // Views must lie in the piece just fed, or (an element split across pieces) be whole.
      bool in_piece = e.data >= piece_ && e.data + e.size <= piece_ + piece_size_;
      if (in_piece && piece_pos_ + uint64_t(e.data - piece_) != e.offset)
        violation("KvBytes offset does not match its position in the piece");
    }
    if (k->type == ws::GgufType::String ||
        (k->type == ws::GgufType::Array && k->elem_type == ws::GgufType::String)) {
      bool array = k->type == ws::GgufType::Array;
      if (e.first) {
        if (open_string_) violation("KvBytes first piece inside an open string");
        if (array && e.index != k->strings.size())
          violation("string element " + std::to_string(e.index) + ", expected " +
                    std::to_string(k->strings.size()));
        if (!array && saw_string_end_) violation("a second string value");
        if (array) k->strings.emplace_back();
        open_string_ = true;
      } else if (!open_string_) {
        violation("KvBytes continuation without a first piece");
        return;
      }
      std::string& dst = array ? k->strings.back() : k->bytes;
      if (opt_.record_bytes) dst.append(reinterpret_cast<const char*>(e.data), e.size);
      if (e.last) {
        open_string_ = false;
        if (!array) saw_string_end_ = true;
      }
      return;
    }
    if (k->type != ws::GgufType::Array) return violation("KvBytes for a scalar KV");
    uint32_t elem = ws::gguf_type_size(k->elem_type);
    if (elem == 0 || e.size % elem != 0) return violation("KvBytes of partial numeric elements");
    if (e.index * elem != k->bytes.size())
      violation("numeric KvBytes from element " + std::to_string(e.index) + " after " +
                std::to_string(k->bytes.size() / elem) + " elements");
    k->bytes.append(reinterpret_cast<const char*>(e.data), e.size);
  }

  KvRecord* current_kv(const ws::Event& e) {
    std::vector<KvRecord>& kvs = out_->kvs;
    if (kvs.empty() || kvs.back().index != e.kv || kvs.back().ended) {
      violation(std::string(ws::event_type_name(e.type)) + " for kv " + std::to_string(e.kv) +
                " outside its KvBegin/KvEnd");
      return nullptr;
    }
    if (e.type == ws::EventType::KvBegin) return nullptr;
    if (kvs.size() != last_kv_seen_) {  // a new KV: reset the per-value state
      last_kv_seen_ = kvs.size();
      open_string_ = saw_string_end_ = false;
    }
    return &kvs.back();
  }

  // GGUF value bytes come in pieces whose size depends on the chunking, like tensor bytes.
  void on_kv_bytes(const ws::Event& e) {
    if (e.size == 0) return;
    out_->kv_bytes.append(reinterpret_cast<const char*>(e.data), e.size);
    if (!out_->events.empty() && out_->events.back().type == ws::EventType::KvBytes &&
        out_->events.back().tensor == e.kv &&
        out_->events.back().offset + out_->events.back().size == e.offset) {
      out_->events.back().size += e.size;
    } else {
      push({ws::EventType::KvBytes, e.kv, e.offset, e.size});
    }
  }

  void on_end(const ws::Event& e) {
    if (!open_ || e.tensor != cur_) return violation("TensorEnd without TensorBegin");
    if (done_ != size_[cur_])
      violation("TensorEnd t" + std::to_string(cur_) + " after " + std::to_string(done_) +
                " of " + std::to_string(size_[cur_]) + " bytes");
    if (e.offset != out_->data_start + begin_[cur_])
      violation("TensorEnd t" + std::to_string(cur_) + " offset is not the tensor's first byte");
    open_ = false;
  }

  void on_finish(const ws::Reader& r) {
    if (!out_->header_ready) violation("End before HeaderReady");
    if (open_ || next_tensor_ != out_->tensor_count) violation("End before every tensor ended");
    out_->ended = true;
    out_->position = r.position();
  }

  RunResult* out_;
  const RunOptions& opt_;
  const uint8_t* piece_ = nullptr;
  size_t piece_size_ = 0;
  uint64_t piece_pos_ = 0;
  std::vector<uint64_t> begin_, size_;
  uint32_t next_tensor_ = 0, cur_ = 0;
  bool open_ = false;
  uint64_t done_ = 0;
  // GGUF: state of the KV being assembled.
  size_t last_kv_seen_ = 0;
  bool open_string_ = false, saw_string_end_ = false;
};

}  // namespace

RunResult run_reader(const uint8_t* data, size_t size, const Chunking& chunking,
                     const RunOptions& opt) {
  RunResult out;
  Recorder rec(&out, opt);
  // One arena buffer, reused by every run of the thread: a fresh zeroed 8 MiB per run dominated
  // the suites' time (under ASan especially). The reader must not depend on the arena's prior
  // content; if it did, chunkings would disagree.
  static thread_local std::vector<uint64_t> arena;
  if (arena.size() < (opt.arena_size + 7) / 8) arena.resize((opt.arena_size + 7) / 8);
  ws::Reader r(arena.data(), opt.arena_size, opt.limits);
  if (opt.declare_input_size) r.set_input_size(size);
  PieceSizer sizer(chunking);

  // Scratch for copied pieces; each piece is placed at its end (see RunOptions::copy_pieces).
  size_t max_piece = chunking.kind == Chunking::kFixed    ? chunking.size
                     : chunking.kind == Chunking::kRandom ? 8192
                                                          : size;
  std::vector<uint8_t> scratch(opt.copy_pieces ? (max_piece ? max_piece : 1) : 0);
  uint8_t* last_piece = nullptr;
  size_t last_piece_size = 0;

  size_t fed = 0;
  bool finished = false;
  // Generous bound on next() calls: a reader that stops making progress fails instead of hanging.
  uint64_t budget = 16 * uint64_t(size) + 4096;
  for (;;) {
    if (budget-- == 0) {
      rec.violation("reader made no progress (next() call budget exhausted)");
      out.status = ws::Status::Aborted;
      break;
    }
    ws::Event e = r.next();
    if (e.type == ws::EventType::NeedInput) {
      if (last_piece) memset(last_piece, 0xA5, last_piece_size);
      if (finished) {
        rec.violation("NeedInput after finish()");
        out.status = ws::Status::Aborted;
        break;
      }
      if (fed == size) {
        r.finish();
        finished = true;
        continue;
      }
      size_t n = sizer.next(size - fed);
      const uint8_t* piece = data + fed;
      if (opt.copy_pieces) {
        uint8_t* dst = scratch.data() + scratch.size() - n;
        memcpy(dst, data + fed, n);
        piece = dst;
        last_piece = dst;
        last_piece_size = n;
      }
      rec.set_piece(piece, n, fed);
      r.feed(piece, n);
      fed += n;
      continue;
    }
    rec.on_event(e, r);
    if (e.type == ws::EventType::End) {
      ws::Event again = r.next();
      if (again.type != ws::EventType::End) rec.violation("next() after End did not return End");
      break;
    }
    if (e.type == ws::EventType::Error) {
      const ws::Error& err = r.error();
      out.status = err.code;
      out.error_offset = err.offset;
      out.error_tensor = err.tensor;
      out.position = r.position();
      if (err.tensor_name) {
        out.error_has_name = true;
        out.error_tensor_name.assign(err.tensor_name, size_t(err.tensor_name_size));
      }
      if (err.code == ws::Status::Ok) rec.violation("Error event with status Ok");
      ws::Event again = r.next();
      if (again.type != ws::EventType::Error || r.error().code != err.code ||
          r.error().offset != err.offset)
        rec.violation("the error is not sticky");
      break;
    }
  }
  out.arena_peak = r.arena_peak();
  out.arena_needed = r.arena_needed();
  return out;
}

}  // namespace wstest

// Conformance harness: feeds an input to ws::Reader in chosen piece sizes and records what it
// reports, so tests can compare any two chunkings and compare the result with an expectation file.
//
// Shared by every conformance test (and, later, GGUF). What it records is normalized so that it
// does not depend on the chunking: NeedInput events are dropped and consecutive TensorBytes of one
// tensor (KvBytes of one GGUF key-value) are merged: their sizes depend on where the pieces were
// cut, their content must not.
// While feeding it checks the reader's stream protocol (tensor order, contiguous offsets, views
// that point into the piece just fed, sticky errors) and lists every breach in `violations`.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include "weightstream/reader.h"

namespace wstest {

// --- input files ---------------------------------------------------------------------------

// Whole file into *out; false if it cannot be read.
bool read_file(const std::string& path, std::vector<uint8_t>* out);
// Paths of the files in `dir` whose name ends in `extension` (e.g. ".safetensors"), sorted.
std::vector<std::string> list_files(const std::string& dir, const std::string& extension);

// Position of the k-th (1-based) occurrence of `needle` in `text`, or std::string::npos: how tests
// compute expected offsets from the bytes they build.
size_t find_nth(const std::string& text, const std::string& needle, int k = 1);

// A safetensors file built in memory: u64 LE length of `header`, `header`, then `data`.
std::vector<uint8_t> make_safetensors(const std::string& header, const std::string& data = "");
// One header entry `"name":{"dtype":..,"shape":[shape],"data_offsets":[begin,end]}`; name and
// shape are raw JSON text.
std::string entry_json(const std::string& name, const std::string& dtype, const std::string& shape,
                       uint64_t begin, uint64_t end);
// `n` deterministic, non-constant data bytes.
std::string pattern_bytes(size_t n);

// --- chunking --------------------------------------------------------------------------------

struct Chunking {
  enum Kind { kWhole, kFixed, kRandom };
  Kind kind = kWhole;
  size_t size = 0;    // kFixed: bytes per piece
  uint32_t seed = 0;  // kRandom: seed of the piece-size sequence

  static Chunking whole() { return Chunking(); }
  static Chunking fixed(size_t n) { return Chunking{kFixed, n, 0}; }
  static Chunking random(uint32_t seed) { return Chunking{kRandom, 0, seed}; }
  std::string name() const;  // "whole", "1B", "random7", ...
};

// The chunkings every corpus case and real file is fed in: whole, 1 byte at a time, and random
// piece sizes for five fixed seeds.
std::vector<Chunking> standard_chunkings();

// Produces the piece sizes of a chunking. Random sizes mix tiny pieces (which cut every token) with
// large ones and the odd empty piece; the sequence depends only on the seed (std::mt19937 is fully
// specified).
class PieceSizer {
 public:
  explicit PieceSizer(const Chunking& c);
  size_t next(size_t remaining);

 private:
  Chunking c_;
  uint32_t state_[2];
  uint32_t draw();
};

// --- recording -------------------------------------------------------------------------------

struct RecordedEvent {
  ws::EventType type;
  uint32_t tensor;
  uint64_t offset;
  uint64_t size;  // TensorBytes: merged size
  bool operator==(const RecordedEvent& o) const {
    return type == o.type && tensor == o.tensor && offset == o.offset && size == o.size;
  }
};
std::string to_string(const RecordedEvent& e);

struct TensorRow {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
  uint32_t type_id = 0;       // GGUF: the GGML type id as stored (dtype is its name)
  uint64_t entry_offset = 0;  // absolute offset of the tensor's entry in the header
};

// One GGUF key-value as its events reported it (KvBegin, KvScalar / KvBytes, KvEnd), assembled:
// what a caller that keeps metadata would end up with.
struct KvRecord {
  uint32_t index = 0;
  std::string key;
  uint64_t offset = 0;  // KvBegin: the KV's first byte (its key length)
  ws::GgufType type = ws::GgufType::U8;
  ws::GgufType elem_type = ws::GgufType::U8;  // arrays
  uint64_t count = 0;                         // arrays
  bool has_scalar = false;                    // a KvScalar came
  uint64_t u = 0;
  int64_t i = 0;
  uint64_t f_bits = 0;        // KvScalar's double, as bits (NaN-safe comparison)
  uint64_t value_offset = 0;  // KvScalar's offset
  std::string bytes;                 // string value, or the raw bytes of numeric array elements
  std::vector<std::string> strings;  // string-array elements
  bool ended = false;                // KvEnd came
  bool operator==(const KvRecord& o) const {
    return index == o.index && key == o.key && offset == o.offset && type == o.type &&
           elem_type == o.elem_type && count == o.count && has_scalar == o.has_scalar &&
           u == o.u && i == o.i && f_bits == o.f_bits && value_offset == o.value_offset &&
           bytes == o.bytes && strings == o.strings && ended == o.ended;
  }
};

struct RunOptions {
  ws::Limits limits;
  size_t arena_size = 8u << 20;
  // Feed each piece from a scratch buffer that is poisoned as soon as the reader asks for more
  // input (the API lets it forget the piece then), with the piece at the very end of the buffer so
  // that sanitizers catch reads past it. Off for huge inputs.
  bool copy_pieces = true;
  bool record_bytes = true;    // keep every tensor's streamed bytes (and GGUF KV values)
  bool snapshot_table = true;  // copy the tensor table and metadata at HeaderReady
  // Tell the reader the input's size up front (Reader::set_input_size), as a caller that knows
  // the file size or Content-Length would.
  bool declare_input_size = false;
};

struct RunResult {
  bool ended = false;  // End was reported
  ws::Status status = ws::Status::Ok;
  uint64_t error_offset = 0;
  uint32_t error_tensor = ws::kNoTensor;
  bool error_has_name = false;
  std::string error_tensor_name;
  uint64_t position = 0;  // Reader::position() when End or Error came

  std::vector<RecordedEvent> events;      // normalized (see above); KV events carry the KV index
  std::vector<std::string> tensor_bytes;  // streamed bytes per tensor index
  std::string kv_bytes;                   // GGUF: every KvBytes piece, concatenated
  std::vector<KvRecord> kvs;              // GGUF: every key-value, assembled from its events

  bool header_ready = false;
  uint64_t header_size = 0, data_start = 0, data_size = 0;
  uint32_t tensor_count = 0;
  std::vector<TensorRow> tensors;  // table at HeaderReady, index order
  bool has_metadata = false;
  std::vector<std::pair<std::string, std::string>> metadata;  // header order
  size_t arena_peak = 0, arena_needed = 0;
  // GGUF facts at HeaderReady (Reader::gguf_*).
  uint32_t gguf_version = 0, gguf_alignment = 0;
  uint64_t gguf_kv_count = 0;
  ws::GgmlDialect gguf_dialect = ws::GgmlDialect::Upstream;
  std::string gguf_architecture;

  std::vector<std::string> violations;  // stream-protocol breaches seen while feeding

  std::string status_name() const { return ws::status_name(status); }
  // "Ok" or "Code@offset[tensor]" for messages.
  std::string summary() const;
};

// Feeds data[0, size) in the pieces of `chunking`, then finish(), until End or Error.
RunResult run_reader(const uint8_t* data, size_t size, const Chunking& chunking,
                     const RunOptions& options = RunOptions());

// Quotes a byte string for messages (non-printable bytes as \xNN).
std::string printable(const std::string& s);

}  // namespace wstest

// libFuzzer target: ws::ModelLoader over a small virtual directory (issue #16).
//
// Input: `u8 chunk_seed, u8 entry_kind, u8 file_count (% 5 + 1)`, then per file `u8 name_length,
// name bytes, u32 LE length, bytes` (the last file's bytes are the rest of the input). entry_kind:
// its low 3 bits % 6 are the entry (Auto, File, ShardIndex, UqffFiles, OllamaManifest,
// GgufSplits); bit 3 asks for verify_blobs(), bit 4 gives every file its true SHA-256
// (expect_sha256), bit 5 gives the last file a wrong one (issue #17; seeds of issue #16 have none
// of these bits), bit 6 sets pass_stored (weights without a decoding go out as stored) and bit 7
// as_stored (every tensor its own weight, no convention). The first file is the entry (UqffFiles, GgufSplits: every name is given with
// add_file()); names are what the loader asks for ("config.json", "blobs/sha256-<hex>", an index's
// shard names, a split GGUF model's "<prefix>-%05d-of-%05d.gguf"), so every convention is
// reachable: plain, sharded, MLX with config, Ollama with manifest, UQFF, GGUF, split GGUF.
//
// The model is loaded in Decode mode (f32) four ways: seekable with whole reads, seekable in
// seed-chosen pieces, sequential in pieces (Validate for UQFF, which resolves only after its last
// byte, and for a model whose sequential Decode the loader refuses as UsageError) and Validate.
// bitsandbytes decodes sequentially, each weight resolved as its quant_state passes: a verdict
// from that data comes where the stream reaches it (after ModelReady, of the weight first in file
// order), so it may be another convention verdict than the seekable load's (which reads every
// quant_state before ModelReady), or a decode error of a weight before it. Each piece the host feeds is a heap copy of exactly its size, freed at the
// next NeedRead: reading it later is an ASan report. Checked: every load ends; the seekable loads
// agree on verdict (code, offset, tensor, file) and every weight's bytes; a sequential load gives
// the same, or — reading every byte — Validate's verdict; output pieces come in order and fill
// exactly the weight's elements. With digests: true ones never give DigestMismatch and, where the
// plain seekable decode is valid, give its weights; no load ends (Done) with a digest that failed
// or was not checked. Every load that ends well read exactly what it planned: bytes_read() at
// ModelReady plus bytes_to_read() after the selection is bytes_read() at Done (the host gives
// every file's size), and bytes_read() is every byte the host fed. Seeds: fuzz/corpus/fuzz_model_loader (every golden case of tests/model and
// every split GGUF fixture case, written by model_loader_test and split_gguf_test with
// WS_MODEL_SEED_DIR set).
#include <map>
#include <memory>

#include "common.h"
#include "weightstream/model_loader.h"
#include "weightstream/sha256.h"

namespace {

constexpr uint32_t kMaxFiles = 5;
constexpr size_t kMaxArena = 16 << 20;

struct File {
  std::string name;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

struct Dir {
  ws::ModelEntry entry = ws::ModelEntry::Auto;
  std::vector<File> files;
  bool verify_blobs = false, true_digests = false, wrong_last = false;
  bool pass_stored = false, as_stored = false;
};

struct Result {
  std::string verdict = "Ok";
  bool ready = false;
  std::map<std::string, std::string> weights;  // name -> output bytes (ended weights)
  std::map<uint32_t, std::string> open;         // weight -> output bytes so far (begun, not ended)
  // A sequential Decode the loader refuses because the model's data phase has streamed past its
  // weights (UsageError at the data phase: bitsandbytes' quant_state read before ModelReady).
  bool seek_only = false;
  bool convention_error = false;  // ModelLoader::convention_error()
  bool operator==(const Result& o) const { return verdict == o.verdict && weights == o.weights; }
};

bool parse(const uint8_t* data, size_t size, Dir* dir, uint8_t* seed) {
  if (size < 3) return false;
  *seed = data[0];
  dir->entry = ws::ModelEntry((data[1] & 7) % 6);
  dir->verify_blobs = data[1] & 8;
  dir->true_digests = data[1] & 16;
  dir->wrong_last = data[1] & 32;
  dir->pass_stored = data[1] & 64;
  dir->as_stored = data[1] & 128;
  const uint32_t count = data[2] % kMaxFiles + 1;
  size_t at = 3;
  for (uint32_t i = 0; i < count; ++i) {
    if (at >= size) return false;
    File f;
    const size_t n = data[at++];
    if (size - at < n) return false;
    f.name.assign(reinterpret_cast<const char*>(data + at), n);
    at += n;
    if (i + 1 < count) {
      if (size - at < 4) return false;
      const uint32_t len = uint32_t(data[at]) | uint32_t(data[at + 1]) << 8 | uint32_t(data[at + 2]) << 16 |
                           uint32_t(data[at + 3]) << 24;
      at += 4;
      if (size - at < len) return false;
      f.data = data + at;
      f.size = len;
      at += len;
    } else {
      f.data = data + at;
      f.size = size - at;
      at = size;
    }
    dir->files.push_back(f);
  }
  return true;
}

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

Result load(const Dir& dir, ws::ModelLoadMode mode, bool seekable, uint64_t chunk_seed, bool digests = false,
            size_t arena_size = 1 << 20) {
  Result out;
  std::vector<uint64_t> arena(arena_size / 8 + 2);
  ws::ModelLoaderOptions opt;
  opt.mode = mode;
  opt.seekable = seekable;
  opt.read_size = 4096;
  opt.out_size = 4096;
  opt.pass_stored = dir.pass_stored;
  opt.as_stored = dir.as_stored;
  ws::ModelLoader L(arena.data(), arena_size, opt);
  if (dir.entry == ws::ModelEntry::UqffFiles || dir.entry == ws::ModelEntry::GgufSplits)
    for (const File& f : dir.files) L.add_file(f.name.data(), f.name.size());
  if (digests) {
    if (dir.verify_blobs) L.verify_blobs();
    for (size_t i = 0; i < dir.files.size(); ++i) {
      uint8_t d[ws::kSha256Bytes];
      ws::sha256(dir.files[i].data, dir.files[i].size, d);
      if (dir.wrong_last && i + 1 == dir.files.size()) d[0] ^= 1;
      if (dir.true_digests || (dir.wrong_last && i + 1 == dir.files.size()))
        L.expect_sha256(dir.files[i].name.data(), dir.files[i].name.size(), d);
    }
  }
  L.open(dir.entry, dir.files[0].name.data(), dir.files[0].name.size());
  wsfuzz::Chunker ch(chunk_seed);
  std::map<uint32_t, uint64_t> position;
  std::unique_ptr<uint8_t[]> piece;
  std::map<uint32_t, uint64_t> out_pos;
  uint64_t fed = 0, read_at_ready = 0, planned = 0;
  for (size_t steps = 0;; ++steps) {
    WS_CHECK(steps < 20000000, steps);  // every load ends
    const ws::ModelEvent e = L.next();
    switch (e.type) {
      case ws::ModelEventType::NeedRead: {
        piece.reset();  // the last piece is gone: a loader that kept a view reads freed memory
        WS_CHECK(e.length >= 1 && e.length <= opt.read_size, e.length);
        const std::string name = str(L.file_name(e.file));
        const File* f = nullptr;
        for (const File& g : dir.files)
          if (g.name == name) f = &g;
        if (!f) {
          L.file_missing();
          break;
        }
        if (!seekable) WS_CHECK(e.offset == position[e.file], e.offset, position[e.file]);
        L.set_file_size(f->size);
        if (e.offset >= f->size) {
          L.end_of_file();
          break;
        }
        size_t n = size_t(f->size - e.offset < e.length ? f->size - e.offset : e.length);
        const size_t c = ch.next(n);
        if (c > 0) n = c;
        piece.reset(new uint8_t[n]);
        memcpy(piece.get(), f->data + e.offset, n);
        position[e.file] = e.offset + n;
        fed += n;
        L.feed(piece.get(), n);
        break;
      }
      case ws::ModelEventType::ModelReady:
        out.ready = true;
        read_at_ready = L.bytes_read();
        if (dir.as_stored) {  // every tensor one weight, no convention
          WS_CHECK(L.convention() == ws::Convention::Plain, int(L.convention().id));
          uint64_t tensors = 0;
          for (uint32_t t = 0; t < L.table_count(); ++t) tensors += L.table(t).count();
          WS_CHECK(tensors == L.weight_count(), tensors, L.weight_count());
        }
        L.select_all();
        planned = L.bytes_to_read();
        if (mode == ws::ModelLoadMode::Headers) WS_CHECK(planned == 0, planned);
        break;
      case ws::ModelEventType::WeightBegin:
        out_pos[e.weight] = 0;
        break;
      case ws::ModelEventType::WeightData: {
        WS_CHECK(e.offset == out_pos[e.weight], e.offset, out_pos[e.weight]);
        out_pos[e.weight] += e.size;
        out.open[e.weight].append(reinterpret_cast<const char*>(e.data), e.size);
        break;
      }
      case ws::ModelEventType::WeightEnd: {
        const ws::LogicalWeight& w = L.weight(e.weight);
        if (mode == ws::ModelLoadMode::Decode && L.passes_stored(e.weight)) {
          // As stored: exactly its packed piece's bytes.
          const ws::TensorRef p = w.ref(ws::PieceRole::Packed);
          WS_CHECK(out_pos[e.weight] == L.piece_end(p) - L.piece_begin(p), out_pos[e.weight]);
        } else if (mode == ws::ModelLoadMode::Decode) {
          WS_CHECK(out_pos[e.weight] == w.elements * 4, out_pos[e.weight], w.elements);
        }
        out.weights[str(w.name)] = out.open[e.weight];
        out.open.erase(e.weight);
        break;
      }
      case ws::ModelEventType::Kv:
        break;
      case ws::ModelEventType::Warning: {
        // A warning names a weight of the model, a file and an offset in it, and a tensor.
        const ws::Warning& w = L.warning();
        WS_CHECK(w.weight < L.weight_count() && w.file < L.file_count() && w.count > 0, w.weight, w.file);
        WS_CHECK(e.offset == w.offset && w.tensor_name != nullptr, e.offset, w.offset);
        break;
      }
      case ws::ModelEventType::Done:
        WS_CHECK(out.open.empty(), out.open.size());  // every weight begun has ended
        WS_CHECK(L.bytes_read() == fed, L.bytes_read(), fed);
        if (out.ready) WS_CHECK(read_at_ready + planned == fed, read_at_ready + planned, fed);
        // A model is never Done with a file whose digest failed or, every byte read, went unchecked.
        for (uint32_t f = 0; f < L.file_count(); ++f) {
          const ws::DigestState st = L.file_digest_state(f);
          WS_CHECK(st == ws::DigestState::None || st == ws::DigestState::Verified, int(st), f);
        }
        return out;
      case ws::ModelEventType::Error: {
        WS_CHECK(L.bytes_read() == fed, L.bytes_read(), fed);
        const ws::Error& err = L.error();
        if (err.code == ws::Status::ArenaExhausted && L.arena_needed() > arena_size && L.arena_needed() <= kMaxArena)
          return load(dir, mode, seekable, chunk_seed, digests, L.arena_needed());
        out.verdict = std::string(ws::status_name(err.code)) + "@" + std::to_string(err.offset) + " " +
                      (err.tensor_name ? std::string(err.tensor_name, err.tensor_name_size) : "") + " " +
                      (L.error_file() == ws::kNoFile ? "" : str(L.file_name(L.error_file())));
        out.open.clear();  // a weight cut short is no output
        out.convention_error = L.convention_error();
        out.seek_only = err.code == ws::Status::UsageError && !seekable && mode == ws::ModelLoadMode::Decode;
        return out;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Dir dir;
  uint8_t seed = 0;
  if (!parse(data, size, &dir, &seed)) return 0;
  const bool uqff = dir.entry == ws::ModelEntry::UqffFiles;
  if (dir.verify_blobs || dir.true_digests || dir.wrong_last) {
    // Digests: the same model read forward in full, every byte hashed.
    const Result plain = load(dir, ws::ModelLoadMode::Decode, true, 0);
    const Result validate = load(dir, ws::ModelLoadMode::Validate, true, 0);
    for (bool seekable : {true, false}) {
      const Result d = load(dir, uqff && !seekable ? ws::ModelLoadMode::Validate : ws::ModelLoadMode::Decode, seekable, seed, true);
      if (dir.true_digests && !dir.wrong_last && !dir.verify_blobs) {
        // True digests change nothing but the reading order: the verdict of a decode (or, every
        // byte read, of Validate), the same weights.
        if (d.verdict.rfind("DigestMismatch", 0) == 0) wsfuzz::fail("a true digest failed");
        if (d.verdict != plain.verdict && d.verdict != validate.verdict) wsfuzz::fail("a verified load's verdict is another");
        if (plain.verdict == "Ok" && d.verdict == "Ok" && !uqff && !(d == plain)) wsfuzz::fail("verified decode gives other bytes");
      }
    }
    return 0;
  }
  const Result whole = load(dir, ws::ModelLoadMode::Decode, true, 0);
  const Result pieces = load(dir, ws::ModelLoadMode::Decode, true, seed);
  if (!(whole == pieces)) wsfuzz::fail("seekable loads differ with the chunking", seed);
  const Result validate = load(dir, ws::ModelLoadMode::Validate, true, seed);
  Result sequential = load(dir, uqff ? ws::ModelLoadMode::Validate : ws::ModelLoadMode::Decode, false, seed);
  // Decoded only from a seekable source (as UQFF): read forward it validates as Validate does.
  const bool seek_only = sequential.seek_only;
  if (seek_only) sequential = load(dir, ws::ModelLoadMode::Validate, false, seed);
  if (uqff || seek_only) {
    if (sequential.verdict != validate.verdict) wsfuzz::fail("sequential UQFF verdict differs");
    return 0;
  }
  if (sequential.verdict == "Ok" && whole.verdict == "Ok" && !(sequential == whole))
    wsfuzz::fail("sequential and seekable decode give other bytes");
  if (sequential.verdict != whole.verdict && sequential.verdict != validate.verdict) {
    // Reading every byte, a sequential load may find what a seekable decode does not read (then
    // it says what Validate says); and weights come in file order, not model order, so of two bad
    // blocks another may be first.
    auto decoding = [](const std::string& v) {
      return v.rfind("InvalidBlockData", 0) == 0 || v.rfind("InvalidQuantParams", 0) == 0;
    };
    // A convention resolved as the stream passes (bitsandbytes): the seekable load failed on
    // tensor data before ModelReady; the stream, after it, where it reached the first bad weight.
    const bool streamed = sequential.ready && !whole.ready && whole.convention_error &&
                          (sequential.convention_error || decoding(sequential.verdict));
    if (!(decoding(sequential.verdict) && decoding(whole.verdict)) && !streamed)
      wsfuzz::fail("sequential load differs from seekable and validate");
  }
  return 0;
}

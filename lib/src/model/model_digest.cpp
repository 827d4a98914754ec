// ws::ModelLoader, digests (model_loader.h: expect_sha256, set_file_sha256, verify_blobs): the
// records, the hashing as bytes arrive, the check at a file's end. The rest of the loader reaches
// this file only through digest_ops_, which these calls set: a program that gives no digest links
// none of it, nor sha256.cpp (the microcontroller build counts its bytes).
#include <string.h>

#include <new>

#include "model_loader_internal.h"

namespace ws {

namespace {

constexpr size_t kAlign = 8;

bool ends_blob_name(const char* s, size_t n, const char** hex) {
  // `sha256-<64 hex>` as a file's base name (an Ollama blob).
  static const char kPrefix[] = "sha256-";
  const size_t k = sizeof kPrefix - 1;
  if (n < k + kSha256HexChars) return false;
  const char* base = s + n - k - kSha256HexChars;
  if (memcmp(base, kPrefix, k) != 0 || (base != s && base[-1] != '/')) return false;
  *hex = base + k;
  return true;
}

}  // namespace

// The calls the rest of the loader makes (digest_ops_).
struct ModelLoader::DigestOpsImpl {
  // The hash state: the host's engine, or a ws::Sha256 placed in the record.
  static void start(const ModelLoader& L, FileDigest& d) {
    if (d.started) return;
    d.started = true;
    if (L.sha_engine_)
      L.sha_engine_->init(d.hstate);
    else
      new (d.hstate) Sha256();
  }
  static void update(const ModelLoader& L, FileDigest& d, const uint8_t* data, size_t n) {
    start(L, d);
    if (L.sha_engine_)
      L.sha_engine_->update(d.hstate, data, n);
    else
      reinterpret_cast<Sha256*>(d.hstate)->update(data, n);
  }
  static void digest(const ModelLoader& L, FileDigest& d) {
    start(L, d);
    if (L.sha_engine_)
      L.sha_engine_->finish(d.hstate, d.actual);
    else
      reinterpret_cast<Sha256*>(d.hstate)->finish(d.actual);
  }

  static void finish(const ModelLoader& L, FileDigest& d) {
    digest(L, d);
    d.state = memcmp(d.actual, d.expected, kSha256Bytes) == 0 ? DigestState::Verified : DigestState::Mismatch;
  }

  static void feed(ModelLoader& L, uint32_t f, uint64_t offset, const uint8_t* data, size_t n) {
    FileSlot& s = L.files_[f];
    FileDigest& d = *s.digest;
    if (d.state != DigestState::Pending || offset > d.hashed || offset + n <= d.hashed) return;
    const size_t skip = size_t(d.hashed - offset);  // bytes hashed already (a piece read again)
    update(L, d, data + skip, n - skip);
    d.hashed = offset + n;
    if (s.size_known && d.hashed >= s.size) finish(L, d);
  }

  static void end(ModelLoader& L, uint32_t f, uint64_t size) {
    FileDigest& d = *L.files_[f].digest;
    if (d.state != DigestState::Pending) return;
    if (d.hashed == size) {
      finish(L, d);
    } else if (d.hashed < size) {
      // Bytes before the end never came in order: the file cannot be verified, which is a
      // failed verification (actual is the hash of what came).
      digest(L, d);
      d.state = DigestState::Mismatch;
    }
  }

  static void attach(ModelLoader& L, uint32_t f) {
    FileSlot& s = L.files_[f];
    if (s.digest) return;
    for (FileDigest* d = L.digests_; d; d = d->next) {
      if (d->used || d->name_size != s.name_size || memcmp(d->name, s.name, s.name_size) != 0) continue;
      d->used = true;
      s.digest = d;
      ++L.digest_files_;
      return;
    }
  }

  // Files named sha256-<hex> (the entry given directly; a manifest's blobs) get that digest.
  static bool blobs(ModelLoader& L) {
    for (uint32_t f = 0; f < L.file_count_; ++f) {
      FileSlot& s = L.files_[f];
      const char* hex = nullptr;
      if (s.digest || s.opened || (s.kind != ModelFileKind::File && s.kind != ModelFileKind::Blob) ||
          !ends_blob_name(s.name, s.name_size, &hex))
        continue;
      uint8_t want[kSha256Bytes];
      if (!sha256_from_hex(hex, kSha256HexChars, want)) continue;
      FileDigest* d = L.new_digest(nullptr, 0, want);
      if (!d) return false;
      d->used = true;
      s.digest = d;
      ++L.digest_files_;
    }
    return true;
  }

  static const DigestOps* table() {
    static const DigestOps kOps = {&feed, &end, &attach, &blobs};
    return &kOps;
  }
};

// A record in the free middle (only called where no reader or document owns it: before open(),
// at a file's first request, right after a document or header).
ModelLoader::FileDigest* ModelLoader::new_digest(const char* name, size_t n, const uint8_t* digest) {
  void* mem = take_low(sizeof(FileDigest) + n + 1, kAlign);
  if (!mem) return nullptr;
  FileDigest* d = new (mem) FileDigest();
  memcpy(d->expected, digest, kSha256Bytes);
  if (name) {
    char* copy = reinterpret_cast<char*>(d + 1);
    if (n) memcpy(copy, name, n);
    copy[n] = '\0';
    d->name = copy;
    d->name_size = uint32_t(n);
  }
  return d;
}

Status ModelLoader::expect_sha256(const char* name, size_t n, const uint8_t digest[kSha256Bytes]) {
  if (opened_ || phase_ != Phase::Idle || !files_ || (!name && n) || !digest || n > 0xFFFFFFFu) return Status::UsageError;
  FileDigest* d = new_digest(name, n, digest);
  if (!d) {
    fail_arena(sizeof(FileDigest) + n + 1 + kAlign, kNoFile);
    return Status::ArenaExhausted;
  }
  // Kept in the order given (the accessors number them so).
  FileDigest** at = &digests_;
  while (*at) at = &(*at)->next;
  *at = d;
  digest_ops_ = DigestOpsImpl::table();
  // Names added already (add_file) get theirs now.
  for (uint32_t f = 0; f < file_count_; ++f) digest_ops_->attach(*this, f);
  return Status::Ok;
}

Status ModelLoader::expect_sha256_hex(const char* name, size_t n, const char* hex, size_t hex_size) {
  uint8_t d[kSha256Bytes];
  if (!sha256_from_hex(hex, hex_size, d)) return Status::UsageError;
  return expect_sha256(name, n, d);
}

Status ModelLoader::set_file_sha256(const uint8_t digest[kSha256Bytes]) {
  if (!awaiting_ || answer_ != Answer::None || req_file_ >= file_count_ || !digest) return Status::UsageError;
  FileSlot& s = files_[req_file_];
  if (s.opened) return Status::UsageError;  // only before its first byte
  digest_ops_ = DigestOpsImpl::table();
  if (s.digest) {  // given by name too: this one is the file's
    memcpy(s.digest->expected, digest, kSha256Bytes);
    return Status::Ok;
  }
  FileDigest* d = new_digest(nullptr, 0, digest);
  if (!d) {
    fail_arena(sizeof(FileDigest) + kAlign, req_file_);
    return Status::ArenaExhausted;
  }
  d->used = true;
  s.digest = d;
  ++digest_files_;
  return Status::Ok;
}

Status ModelLoader::set_sha256_engine(const Sha256Engine* engine) {
  if (opened_ || phase_ != Phase::Idle || !engine || engine->state_size > kSha256EngineState || !engine->init ||
      !engine->update || !engine->finish)
    return Status::UsageError;
  sha_engine_ = engine;
  digest_ops_ = DigestOpsImpl::table();
  return Status::Ok;
}

Status ModelLoader::verify_blobs() {
  if (opened_ || phase_ != Phase::Idle) return Status::UsageError;
  verify_blobs_ = true;
  digest_ops_ = DigestOpsImpl::table();
  return Status::Ok;
}

}  // namespace ws

// Ollama manifest: layers -> blob files, streamed (FORMATS.md §3).
#include "weightstream/ollama_manifest.h"

#include <algorithm>

#include "weightstream/detail/json_strings.h"

namespace ws {

namespace {

using detail::JsonLexer;
using conv_detail::small_is;

enum Ctx : uint8_t {
  kRootStart, kRootKey, kRootValue, kLayerItem, kLayerKey, kLayerValue, kSkip, kDone,
};
enum Kind : uint8_t { kOther, kLayers, kMedia, kDigest, kSize, kName };

constexpr uint32_t kAbsent = 0xFFFFFFFFu;
constexpr char kTensorMedia[] = "application/vnd.ollama.image.tensor";

}  // namespace

OllamaManifest::OllamaManifest(void* arena, size_t arena_size, const Limits& limits)
    : doc_(limits.max_nesting), limits_(limits) {
  arena_.init(arena, arena_size);
}

StrView OllamaManifest::blob_str(uint32_t off) const { return conv_detail::arena_str(arena_, off); }

Status OllamaManifest::feed(const void* data, size_t size) {
  return doc_.feed(data, size, [this](JsonLexer::Token t) { return handle(t); });
}

Status OllamaManifest::end_layer() {
  if (cur_.media == kAbsent || cur_.digest == kAbsent || !cur_.has_size)
    return doc_.fail(Status::ManifestInvalidLayer, cur_.pos);
  Layer* l = static_cast<Layer*>(arena_.grow_high(sizeof(Layer)));
  if (l) *l = cur_;
  ++layer_count_;
  if (layer_count_ > limits_.max_tensors) return doc_.fail(Status::TooManyTensors, cur_.pos);
  return Status::Ok;
}

Status OllamaManifest::handle(JsonLexer::Token t) {
  using L = JsonLexer;
  auto start_skip = [&](uint8_t back) {
    skip_return_ = back;
    ctx_ = doc_.begin_skip(t) ? back : uint8_t(kSkip);
  };
  switch (ctx_) {
    case kRootStart:
      if (t != L::kObjectBegin) return doc_.fail(Status::ManifestNotObject, doc_.lexer.token_pos());
      ctx_ = kRootKey;
      return Status::Ok;
    case kRootKey:
      if (t == L::kObjectEnd) {
        ctx_ = kDone;
        return Status::Ok;
      }
      if (!conv_detail::small_piece(doc_.lexer, small_, &small_size_, &small_overflow_)) return Status::Ok;
      key_kind_ = small_is(small_, small_size_, small_overflow_, "layers") ? kLayers : kOther;
      ctx_ = kRootValue;
      return Status::Ok;
    case kRootValue:
      if (key_kind_ != kLayers) {
        start_skip(kRootKey);
        return Status::Ok;
      }
      if (t != L::kArrayBegin || seen_layers_) return doc_.fail(Status::ManifestMissingLayers, doc_.lexer.token_pos());
      seen_layers_ = true;
      ctx_ = kLayerItem;
      return Status::Ok;
    case kLayerItem:
      if (t == L::kArrayEnd) {
        ctx_ = kRootKey;
        return Status::Ok;
      }
      if (t != L::kObjectBegin) return doc_.fail(Status::ManifestInvalidLayer, doc_.lexer.token_pos());
      cur_ = Layer{};
      cur_.media = cur_.digest = cur_.name = kAbsent;
      cur_.pos = uint32_t(doc_.lexer.token_pos());
      ctx_ = kLayerKey;
      return Status::Ok;
    case kLayerKey:
      if (t == L::kObjectEnd) {
        ctx_ = kLayerItem;
        return end_layer();
      }
      if (!conv_detail::small_piece(doc_.lexer, small_, &small_size_, &small_overflow_)) return Status::Ok;
      key_kind_ = small_is(small_, small_size_, small_overflow_, "mediaType") ? kMedia
                  : small_is(small_, small_size_, small_overflow_, "digest")  ? kDigest
                  : small_is(small_, small_size_, small_overflow_, "size")    ? kSize
                  : small_is(small_, small_size_, small_overflow_, "name")    ? kName
                                                                               : kOther;
      ctx_ = kLayerValue;
      return Status::Ok;
    case kLayerValue: {
      if (key_kind_ == kOther) {
        start_skip(kLayerKey);
        return Status::Ok;
      }
      if (key_kind_ == kSize) {
        if (t != L::kNumber || !doc_.lexer.number_is_u64())
          return doc_.fail(Status::ManifestInvalidLayer, doc_.lexer.token_pos());
        cur_.size = doc_.lexer.number_value();
        cur_.has_size = 1;
        ctx_ = kLayerKey;
        return Status::Ok;
      }
      if (t != L::kStringPiece) return doc_.fail(Status::ManifestInvalidLayer, doc_.lexer.token_pos());
      if (doc_.lexer.piece_first()) {
        str_pos_ = doc_.lexer.token_pos();
        digest_len_ = 0;
        digest_ok_ = true;
      }
      if (key_kind_ == kDigest) {
        // "sha256:" then 64 lowercase hex digits, checked as the pieces pass; stored with '-'
        // for ':' so that the record is the blob's file name.
        static const char kPrefix[] = "sha256:";
        const uint8_t* c = doc_.lexer.piece();
        for (size_t i = 0; i < doc_.lexer.piece_size(); ++i, ++digest_len_) {
          bool ok = digest_len_ < 7 ? c[i] == uint8_t(kPrefix[digest_len_])
                                    : digest_len_ < 71 && ((c[i] >= '0' && c[i] <= '9') ||
                                                           (c[i] >= 'a' && c[i] <= 'f'));
          if (!ok) digest_ok_ = false;
        }
      }
      if (!conv_detail::store_piece(doc_.lexer, &arena_, &str_off_, &str_size_)) return Status::Ok;
      if (str_size_ > limits_.max_name_bytes) return doc_.fail(Status::NameTooLong, str_pos_);
      if (key_kind_ == kDigest) {
        if (!digest_ok_ || digest_len_ != 71) return doc_.fail(Status::ManifestInvalidDigest, str_pos_);
        if (!arena_.counting()) arena_.base()[str_off_ + 4 + 6] = '-';
        cur_.digest = str_off_;
      } else {
        (key_kind_ == kMedia ? cur_.media : cur_.name) = str_off_;
      }
      ctx_ = kLayerKey;
      return Status::Ok;
    }
    case kSkip:
      if (doc_.skipping(t)) ctx_ = skip_return_;
      return Status::Ok;
    default:
      return Status::Ok;
  }
}

Status OllamaManifest::finish() {
  if (Status s = doc_.finish(); s != Status::Ok) return s;
  if (!seen_layers_) return doc_.fail(Status::ManifestMissingLayers, doc_.lexer.consumed());
  if (arena_.counting()) return doc_.fail(Status::ArenaExhausted, doc_.lexer.consumed());
  Layer* l = reinterpret_cast<Layer*>(arena_.high_begin());
  std::reverse(l, l + layer_count_);  // pushed downwards: restore manifest order
  layers_ = l;
  return Status::Ok;
}

ManifestLayer OllamaManifest::layer(uint32_t i) const {
  ManifestLayer out;
  if (i >= layer_count_) return out;
  const Layer& l = layers_[i];
  out.media_type = blob_str(l.media);
  out.blob_file = blob_str(l.digest);
  if (l.name != kAbsent) out.name = blob_str(l.name);
  out.size = l.size;
  out.is_tensor = out.media_type.equals(kTensorMedia);
  return out;
}

uint32_t OllamaManifest::find_layer_for_tensor(const char* tensor, size_t n) const {
  for (uint32_t i = 0; i < layer_count_; ++i) {
    ManifestLayer l = layer(i);
    if (!l.is_tensor || l.name.size > n || l.name.size == 0) continue;
    if (memcmp(l.name.data, tensor, l.name.size) != 0) continue;
    if (l.name.size == n || tensor[l.name.size] == '.') return i;
  }
  return kNoTensor;
}

}  // namespace ws

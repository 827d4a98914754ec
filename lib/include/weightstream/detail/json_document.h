// weightstream — what every streamed JSON document reader shares (internal; issue #25's "one JSON
// walker"): the lexer, the first error and its offset, the feed loop, finish()'s common checks and
// skipping a value. A document (ShardIndex, OllamaManifest, ConfigFactsParser) keeps only its own
// state machine: its feed() hands each token to its handler, its finish() adds its own checks.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weightstream/detail/json_lexer.h"
#include "weightstream/detail/json_skipper.h"
#include "weightstream/status.h"

namespace ws {
namespace detail {

struct JsonDocument {
  JsonLexer lexer;
  JsonSkipper skipper;
  Error error;
  bool finished = false;

  explicit JsonDocument(uint32_t max_nesting) { lexer.reset(max_nesting); }

  // Records `s` at `offset` unless an error is already recorded; returns the recorded one (a
  // document reports its first error, wherever later bytes would have failed).
  Status fail(Status s, uint64_t offset) {
    if (error.code == Status::Ok) {
      error.code = s;
      error.offset = offset;
    }
    return error.code;
  }

  // Lexes `size` bytes and calls on_token(token) for each token; stops at the first non-Ok status
  // it returns. on_bytes(from, to), when given, sees every byte the lexer consumed, token or not
  // (a document that reads a number's text back: ConfigFactsParser). A lexer error is recorded at
  // its position; a feed after finish() is UsageError.
  template <class OnToken>
  Status feed(const void* data, size_t size, OnToken&& on_token) {
    return feed(data, size, on_token, [](const uint8_t*, const uint8_t*) {});
  }
  template <class OnToken, class OnBytes>
  Status feed(const void* data, size_t size, OnToken&& on_token, OnBytes&& on_bytes) {
    if (error.code != Status::Ok) return error.code;
    if (finished) return fail(Status::UsageError, lexer.consumed());
    const uint8_t* p = static_cast<const uint8_t*>(data);
    const uint8_t* end = p + size;
    for (;;) {
      const uint8_t* from = p;
      const JsonLexer::Token t = lexer.next(&p, end);
      on_bytes(from, p);
      if (t == JsonLexer::kNeedMore) return Status::Ok;
      if (t == JsonLexer::kError) return fail(lexer.status(), lexer.error_pos());
      const Status s = on_token(t);
      if (s != Status::Ok) return s;
    }
  }

  // The checks every finish() starts with: the first error again, a second finish() UsageError, a
  // document cut short JsonUnexpectedEnd. Ok: the document is complete and the caller goes on.
  Status finish() {
    if (error.code != Status::Ok) return error.code;
    if (finished) return fail(Status::UsageError, lexer.consumed());
    finished = true;
    if (!lexer.complete()) return fail(Status::JsonUnexpectedEnd, lexer.consumed());
    return Status::Ok;
  }

  // Skipping a value the document does not read: begin_skip with its first token (true when that
  // token was the whole value, a scalar), then skipping() with each next one until it says true.
  bool begin_skip(JsonLexer::Token t) {
    skipper.start();
    return skipper.feed(t, lexer);
  }
  bool skipping(JsonLexer::Token t) { return skipper.feed(t, lexer); }
};

}  // namespace detail
}  // namespace ws

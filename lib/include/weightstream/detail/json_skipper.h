// weightstream — skips one JSON value of any shape, token by token, without recursion.
#pragma once

#include <stdint.h>

#include "weightstream/detail/json_lexer.h"

namespace ws {
namespace detail {

class JsonSkipper {
 public:
  void start() { depth_ = 0; }
  // Feeds the next token of the value being skipped; true once the value is complete.
  bool feed(JsonLexer::Token t, const JsonLexer& lexer) {
    switch (t) {
      case JsonLexer::kObjectBegin:
      case JsonLexer::kArrayBegin:
        ++depth_;
        return false;
      case JsonLexer::kObjectEnd:
      case JsonLexer::kArrayEnd:
        --depth_;
        break;
      case JsonLexer::kKeyPiece:
      case JsonLexer::kStringPiece:
        if (!lexer.piece_last()) return false;
        break;
      default:
        break;
    }
    return depth_ == 0;
  }

 private:
  uint32_t depth_ = 0;
};

}  // namespace detail
}  // namespace ws

// weightstream — GPTQModel `dynamic` rule patterns (module_regex.h): parsed into at most 63
// nodes on the stack, matched by a position-set simulation (a 64-bit set of nodes; every node's
// successors followed until nothing changes), so neither time nor memory depends on backtracking.
#include "module_regex.h"

namespace ws {
namespace conv_detail {

namespace {

enum Kind : uint8_t { kLit, kAny, kClass, kDigit, kWord, kSpace, kOpen, kAlt, kClose };
enum Quant : uint8_t { kOne, kOpt, kStar, kPlus };

struct Node {
  uint8_t kind = kLit, quant = kOne;
  bool neg = false;       // [^...]
  uint16_t a = 0, b = 0;  // kLit: a the byte; kClass: the body [a, b) of the pattern; kOpen: b its
                          // kClose; kAlt / kClose: a their kOpen
};

constexpr uint32_t kMaxNodes = 63;  // node `count` is the accepting position: bit 63 at most
constexpr uint32_t kMaxDepth = 8;

struct Program {
  Node node[kMaxNodes];
  uint32_t count = 0;
  bool end_anchor = false;
};

bool is_punct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

const char* parse(const char* p, size_t n, Program* g) {
  uint32_t stack[kMaxDepth + 1];
  uint32_t depth = 0;
  auto add = [&](uint8_t kind) -> Node* {
    if (g->count == kMaxNodes) return nullptr;
    Node* x = &g->node[g->count++];
    *x = Node();
    x->kind = kind;
    return x;
  };
  add(kOpen);  // the whole pattern is one group: a top-level `|` is its alternation
  stack[depth++] = 0;
  size_t i = n && p[0] == '^' ? 1 : 0;
  while (i < n) {
    const char c = p[i];
    uint32_t atom = 0;  // the node a quantifier after it applies to
    if (c == '$') {
      if (i + 1 != n) return "$ before the end";
      g->end_anchor = true;
      ++i;
      continue;
    }
    if (c == '^') return "^ after the start";
    if (c == '{') return "{m,n} repetition";
    if (c == '*' || c == '+' || c == '?') return "a quantifier with nothing to repeat";
    if (c == ')' && depth == 1) return "an unbalanced )";
    if (c == '(') {
      if (i + 1 < n && p[i + 1] == '?') {
        if (i + 2 >= n || p[i + 2] != ':') return "lookaround, flags or named groups";
        i += 3;
      } else {
        ++i;
      }
      if (depth == kMaxDepth + 1) return "groups nested deeper than 8";
      if (!add(kOpen)) return "more than 62 atoms";
      stack[depth++] = g->count - 1;
      continue;
    }
    if (c == '|') {
      Node* x = add(kAlt);
      if (!x) return "more than 62 atoms";
      x->a = uint16_t(stack[depth - 1]);
      ++i;
      continue;
    }
    if (c == ')') {
      const uint32_t open = stack[--depth];
      Node* x = add(kClose);
      if (!x) return "more than 62 atoms";
      x->a = uint16_t(open);
      g->node[open].b = uint16_t(g->count - 1);
      atom = g->count - 1;
      ++i;
    } else if (c == '[') {
      size_t j = i + 1;
      const bool neg = j < n && p[j] == '^';
      if (neg) ++j;
      const size_t body = j;
      if (j < n && p[j] == ']') ++j;  // a ] first is a literal
      while (j < n && p[j] != ']') {
        if (p[j] == '\\') {
          if (j + 1 >= n || !is_punct(p[j + 1])) return "a class escape other than punctuation";
          ++j;
        }
        ++j;
      }
      if (j >= n) return "an unclosed [";
      Node* x = add(kClass);
      if (!x) return "more than 62 atoms";
      x->neg = neg;
      x->a = uint16_t(body);
      x->b = uint16_t(j);
      atom = g->count - 1;
      i = j + 1;
    } else if (c == '\\') {
      if (i + 1 >= n) return "a trailing \\";
      const char e = p[i + 1];
      Node* x = add(e == 'd' ? kDigit : e == 'w' ? kWord : e == 's' ? kSpace : kLit);
      if (!x) return "more than 62 atoms";
      if (x->kind == kLit) {
        if (!is_punct(e)) return "an escape other than punctuation, \\d, \\w, \\s";
        x->a = uint8_t(e);
      }
      atom = g->count - 1;
      i += 2;
    } else {
      Node* x = add(c == '.' ? kAny : kLit);
      if (!x) return "more than 62 atoms";
      x->a = uint8_t(c);
      atom = g->count - 1;
      ++i;
    }
    if (i < n && (p[i] == '*' || p[i] == '+' || p[i] == '?')) {
      const uint8_t q = p[i] == '*' ? kStar : p[i] == '+' ? kPlus : kOpt;
      g->node[atom].quant = q;
      if (g->node[atom].kind == kClose) g->node[g->node[atom].a].quant = q;
      ++i;
      if (i < n && p[i] == '?') ++i;  // lazy: the same verdict
      if (i < n && (p[i] == '*' || p[i] == '+' || p[i] == '?')) return "a nested quantifier";
    }
    if (i < n && p[i] == '{') return "{m,n} repetition";
  }
  if (depth != 1) return "an unclosed (";
  Node* x = add(kClose);
  if (!x) return "more than 62 atoms";
  g->node[0].b = uint16_t(g->count - 1);
  return nullptr;
}

// The class body p[a, b): characters, ranges x-y, `\`-escaped punctuation.
bool in_class(const char* p, uint32_t a, uint32_t b, char c) {
  for (uint32_t k = a; k < b;) {
    char lo = p[k];
    if (lo == '\\') lo = p[++k];
    ++k;
    char hi = lo;
    if (k + 1 < b && p[k] == '-') {
      hi = p[k + 1];
      k += 2;
      if (hi == '\\' && k < b) hi = p[k++];
    }
    if (uint8_t(c) >= uint8_t(lo) && uint8_t(c) <= uint8_t(hi)) return true;
  }
  return false;
}

bool consumes(const Node& x, const char* p, char c) {
  switch (x.kind) {
    case kLit: return uint8_t(c) == x.a;
    case kAny: return c != '\n';
    case kClass: return in_class(p, x.a, x.b, c) != x.neg;
    case kDigit: return c >= '0' && c <= '9';
    case kWord: return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    case kSpace: return c == ' ' || (c >= '\t' && c <= '\r');
    default: return false;
  }
}

inline uint64_t bit(uint32_t i) { return uint64_t(1) << i; }

// Every position reachable from `s` without consuming a byte.
uint64_t closure(const Program& g, uint64_t s) {
  uint64_t done = 0;
  for (uint64_t pending = s; pending; pending = s & ~done) {
    const uint32_t i = uint32_t(__builtin_ctzll(pending));
    done |= bit(i);
    if (i >= g.count) continue;  // accepting
    const Node& x = g.node[i];
    switch (x.kind) {
      case kOpen:
        s |= bit(i + 1);
        for (uint32_t j = i + 1; j < x.b; ++j)
          if (g.node[j].kind == kAlt && g.node[j].a == i) s |= bit(j + 1);
        if (x.quant == kOpt || x.quant == kStar) s |= bit(x.b + 1u);
        break;
      case kAlt: s |= bit(g.node[x.a].b); break;
      case kClose:
        s |= bit(i + 1);
        if (x.quant == kStar || x.quant == kPlus) s |= bit(x.a);
        break;
      default:
        if (x.quant == kOpt || x.quant == kStar) s |= bit(i + 1);
    }
  }
  return s;
}

}  // namespace

const char* regex_unsupported(const char* pattern, size_t n) {
  Program g;
  return parse(pattern, n, &g);
}

bool regex_match(const char* pattern, size_t n, const char* name, size_t name_size) {
  Program g;
  if (parse(pattern, n, &g)) return false;
  const uint64_t accept = bit(g.count);
  uint64_t s = closure(g, bit(0));
  for (size_t k = 0; k < name_size; ++k) {
    if (!g.end_anchor && (s & accept)) return true;
    uint64_t next = 0;
    for (uint64_t live = s & ~accept; live; live &= live - 1) {
      const uint32_t i = uint32_t(__builtin_ctzll(live));
      const Node& x = g.node[i];
      if (x.kind >= kOpen || !consumes(x, pattern, name[k])) continue;
      if (x.quant == kStar || x.quant == kPlus) next |= bit(i);
      next |= bit(i + 1);
    }
    s = closure(g, next);
    if (!s) return false;
  }
  return (s & accept) != 0;
}

}  // namespace conv_detail
}  // namespace ws

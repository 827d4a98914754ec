// weightstream CLI — the adaptive connection count (see connection_policy.h).
#include "connection_policy.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>

#include <algorithm>

namespace wscli {

ConnectionPolicy::ConnectionPolicy(unsigned pinned, unsigned max)
    : target_(pinned ? pinned : 1), cap_(pinned ? pinned : std::max(1u, max)), settled_(pinned != 0) {}

void ConnectionPolicy::sample(double rate, double starved, bool budget_full) {
  if (settled_) return;
  if (budget_full) {
    target_ = std::max(1u, target_ - 1);
    settled_ = true;
  } else if (starved < kStarved) {
    settled_ = true;
  } else if (!have_rate_ || rate >= last_rate_ * kGain) {
    // The first sample, or the last connection paid: one more, unless at the cap.
    if (target_ >= cap_) settled_ = true;
    else ++target_;
  } else {
    // It did not: back to the count before, for good (the rate kept is the better one's).
    target_ = std::max(1u, target_ - 1);
    settled_ = true;
    return;
  }
  have_rate_ = true;
  last_rate_ = rate;
}

void ConnectionPolicy::settle(double rate) {
  if (settled_) return;
  settled_ = true;
  have_rate_ = true;
  last_rate_ = rate;
}

void ConnectionPolicy::throttled(unsigned running) {
  const unsigned n = std::max(1u, std::max(running, 1u) / 2);
  target_ = std::min(target_, n);
  cap_ = std::min(cap_, n);
  settled_ = true;
}

bool ConnectionPolicy::worth_probing(uint64_t remaining, double rate, double sample_seconds) {
  return double(remaining) > rate * 2 * sample_seconds;
}

namespace {

// A whole header value of digits (with an optional fraction, surrounding blanks): its number, or -1.
double plain_number(const std::string& v) {
  size_t i = 0, n = v.size();
  while (i < n && isspace((unsigned char)v[i])) ++i;
  while (n > i && isspace((unsigned char)v[n - 1])) --n;
  if (i == n) return -1;
  bool digits = false, dot = false;
  for (size_t k = i; k < n; ++k) {
    if (isdigit((unsigned char)v[k])) digits = true;
    else if (v[k] == '.' && !dot && digits && k + 1 < n) dot = true;
    else return -1;
  }
  return digits ? strtod(v.c_str() + i, nullptr) : -1;
}

// `name=DIGITS` in `part`, the name at its start or after ';' or a blank: DIGITS, or -1.
long param(const std::string& part, const char* name) {
  const std::string key = std::string(name) + "=";
  for (size_t at = part.find(key); at != std::string::npos; at = part.find(key, at + 1)) {
    if (at > 0 && part[at - 1] != ';' && !isspace((unsigned char)part[at - 1])) continue;
    const size_t d = at + key.size();
    if (d < part.size() && isdigit((unsigned char)part[d])) return strtol(part.c_str() + d, nullptr, 10);
  }
  return -1;
}

long either(const std::string& part, const char* a, const char* b) {
  const long x = param(part, a);
  return x >= 0 ? x : param(part, b);
}

}  // namespace

long server_wait_ms(const std::string& retry_after, const std::string& ratelimit, const std::string& remaining,
                    const std::string& reset) {
  bool blank = true;
  for (char c : retry_after) blank = blank && isspace((unsigned char)c);
  if (!blank) {
    const double s = plain_number(retry_after);
    return s >= 0 ? lround(s * 1000) : 1000;  // an HTTP date: a second
  }
  bool none_left = false;
  bool have_remaining = false;
  long wait_s = 0;
  // Several policies may be listed (comma-separated): any exhausted one counts.
  size_t b = 0;
  while (b <= ratelimit.size() && !ratelimit.empty()) {
    size_t e = ratelimit.find(',', b);
    if (e == std::string::npos) e = ratelimit.size();
    const std::string part = ratelimit.substr(b, e - b);
    const long r = either(part, "r", "remaining"), t = either(part, "t", "reset");
    if (r == 0) {
      none_left = have_remaining = true;
      wait_s = std::max(wait_s, std::max(t, 0L));
    } else if (r > 0 && !have_remaining) {
      have_remaining = true;
    } else if (r < 0 && t >= 0 && ratelimit.find("remaining=0") != std::string::npos) {
      wait_s = std::max(wait_s, t);  // the older form: limit=.., remaining=0, reset=5
    }
    b = e + 1;
  }
  if (plain_number(remaining) == 0) {
    none_left = true;
    wait_s = std::max(wait_s, std::max(0L, long(plain_number(reset))));
  }
  return none_left ? wait_s * 1000 : -1;
}

}  // namespace wscli

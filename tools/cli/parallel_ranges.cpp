// weightstream CLI — parallel Range requests for a forward read (see parallel_ranges.h).
#include "parallel_ranges.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "curl_runtime.h"
#include "http_source.h"

namespace wscli {

namespace {

constexpr double kSampleSeconds = 0.5;   // as the JS downloader's measureMs
constexpr int kResumes = 3;              // a cut block's new requests (bytes arriving reset the count)
constexpr int kThrottles = 8;            // 429 / 503 answers to one block before it is an error
constexpr long kDefaultThrottleMs = 1000;  // a 429 / 503 without Retry-After
constexpr size_t kOpenAhead = 4 << 20;   // a lone connection's bytes ahead of the reader: past this, pause

bool ascii_prefix(const std::string& line, const char* prefix) {
  const size_t n = strlen(prefix);
  return line.size() >= n && strncasecmp(line.c_str(), prefix, n) == 0;
}

std::string value_of(const std::string& line, size_t name_length) {
  size_t b = name_length, e = line.size();
  while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
  while (e > b && (line[e - 1] == ' ' || line[e - 1] == '\t' || line[e - 1] == '\r' || line[e - 1] == '\n')) --e;
  return line.substr(b, e - b);
}

std::string strip_weak(const std::string& etag) { return etag.compare(0, 2, "W/") == 0 ? etag.substr(2) : etag; }

}  // namespace

uint64_t parallel_block_size(const ParallelSettings& s) {
  const uint64_t n = s.pinned ? s.pinned : s.max;
  const uint64_t b = s.budget / (2 * std::max<uint64_t>(n, 1)) / 65536 * 65536;
  return std::max<uint64_t>(256 << 10, std::min<uint64_t>(8 << 20, b));
}

struct ParallelRanges::Block {
  uint64_t start = 0, end = 0;
  std::vector<uint8_t> data;  // bytes [start, start + data.size())
  size_t used = 0;            // handed out (data[0..used))
  Conn* conn = nullptr;       // the request running for it
  bool done = false;
  bool open = false;          // one connection's long range (up to the budget), cut to a block when more run
  int resumes = 0, throttles = 0;
  unsigned gen = 0;
  uint64_t pos() const { return start + data.size(); }
};

struct ParallelRanges::Conn {
  ParallelRanges* owner = nullptr;
  CURL* easy = nullptr;
  Block* block = nullptr;
  bool checked = false, throttled = false, failed = false, paused = false;
  uint64_t asked = 0, asked_end = 0;  // the range asked for: [asked, asked_end) (a cut may shorten the block's)
  uint64_t body = 0;   // body bytes of this response
  long status = 0;
  std::string reason, content_range, etag, retry_after, ratelimit, rl_remaining, rl_reset;
};

ParallelRanges::ParallelRanges(CURLM* multi, std::string url, std::string shown, std::vector<std::string> headers,
                               std::string validator, std::string etag, uint64_t size, uint64_t from,
                               const ParallelSettings& s)
    : multi_(multi), url_(std::move(url)), shown_(std::move(shown)), validator_(std::move(validator)),
      etag_(std::move(etag)), size_(size), s_(s), block_size_(parallel_block_size(s)), policy_(s.pinned, s.max),
      delivered_(from), next_start_(from), hold_until_(Clock::now()) {
  for (const std::string& h : headers) headers_ = curl_slist_append(headers_, h.c_str());
  if (!validator_.empty()) headers_ = curl_slist_append(headers_, ("If-Range: " + validator_).c_str());
}

ParallelRanges::~ParallelRanges() {
  // Cancellation: every request ends here, its handle removed and cleaned.
  for (auto& c : conns_) {
    if (c->block) curl_multi_remove_handle(multi_, c->easy);
    curl_easy_cleanup(c->easy);
  }
  curl_slist_free_all(headers_);
}

double ParallelRanges::seconds_since(Clock::time_point t) const {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void ParallelRanges::say(const std::string& what) {
  if (s_.verbose) fprintf(stderr, "weightstream: %s: %s\n", shown_.c_str(), what.c_str());
}

void ParallelRanges::hold(long ms, const char* why) {
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(ms);
  if (until > hold_until_) hold_until_ = until;
  say(std::to_string(policy_.target()) + " connection(s): " + why + ", new requests wait " + std::to_string(ms) + " ms");
}

bool ParallelRanges::start(Conn& c, Block& b) {
  c.block = &b;
  b.conn = &c;
  c.checked = c.throttled = c.failed = c.paused = false;
  c.asked = b.pos();
  c.asked_end = b.end;
  c.body = 0;
  c.status = 0;
  char range[64];
  snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)b.pos(), (unsigned long long)(b.end - 1));
  curl_easy_setopt(c.easy, CURLOPT_RANGE, range);
  if (curl_multi_add_handle(multi_, c.easy) != CURLM_OK) {
    c.block = nullptr;
    b.conn = nullptr;
    error_ = "cannot start a request for " + shown_;
    fatal_ = true;
    return false;
  }
  ++running_;
  peak_ = std::max(peak_, running_);
  return true;
}

void ParallelRanges::schedule() {
  if (fatal_ || Clock::now() < hold_until_) return;
  const auto free_conn = [&]() -> Conn* {
    for (auto& c : conns_)
      if (!c->block) return c.get();
    auto c = std::make_unique<Conn>();
    c->owner = this;
    c->easy = curl_easy_init();
    if (!c->easy) return nullptr;
    configure_request(c->easy, url_, headers_);
    curl_easy_setopt(c->easy, CURLOPT_HEADERFUNCTION, &ParallelRanges::on_header);
    curl_easy_setopt(c->easy, CURLOPT_HEADERDATA, c.get());
    curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, &ParallelRanges::on_body);
    curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c.get());
    conns_.push_back(std::move(c));
    return conns_.back().get();
  };
  // More than one connection: a long range read alone is cut at its next block boundary (its
  // request aborted there) and blocks go on from it.
  if (policy_.target() > 1 && !blocks_.empty() && blocks_.back().open) {
    Block& b = blocks_.back();
    b.open = false;
    const uint64_t cut = b.pos() + block_size_;
    if (cut < b.end && b.end - cut >= block_size_ / 2) {
      b.end = cut;
      next_start_ = cut;
    }
  }
  // Blocks waiting for a request again (cut, throttled) first: they come before the new ones.
  for (Block& b : blocks_) {
    if (running_ >= policy_.target()) return;
    if (b.done || b.conn) continue;
    Conn* c = free_conn();
    if (!c || !start(*c, b)) return;
  }
  while (running_ < policy_.target() && next_start_ < size_) {
    uint64_t end = next_start_ + block_size_;
    // One connection, alone: as far as the budget allows (few requests, as the serial reader's
    // growing windows), cut to a block boundary when a second one starts.
    const bool open = policy_.target() == 1 && running_ == 0;
    if (open) end = std::max(end, delivered_ + s_.budget);
    if (end > size_ || size_ - end < block_size_ / 2) end = size_;  // no tail under half a block
    if (running_ > 0 && end - delivered_ > s_.budget) {
      budget_held_ = true;
      return;
    }
    Conn* c = free_conn();
    if (!c) return;
    blocks_.emplace_back();
    Block& b = blocks_.back();
    b.start = next_start_;
    b.end = end;
    b.gen = gen_;
    b.open = open;
    if (!spare_.empty()) {  // the largest spare
      auto big = std::max_element(spare_.begin(), spare_.end(),
                                  [](const std::vector<uint8_t>& x, const std::vector<uint8_t>& y) { return x.capacity() < y.capacity(); });
      b.data = std::move(*big);
      spare_.erase(big);
      b.data.clear();
    }
    b.data.reserve(size_t(end - next_start_));
    next_start_ = end;
    if (!start(*c, b)) return;
  }
}

std::string ParallelRanges::status_text(const Conn& c) const {
  std::string s = "HTTP " + std::to_string(c.status);
  if (!c.reason.empty()) s += " " + c.reason;
  return s;
}

bool ParallelRanges::check(Conn& c) {
  c.checked = true;
  const auto fail = [&](const std::string& why) {
    c.failed = true;
    if (!fatal_) error_ = why;
    fatal_ = true;
    return false;
  };
  const auto changed = [&](const std::string& why) {
    return fail("the file at " + shown_ + " changed while it was read (" + why + " for bytes " +
                std::to_string(c.asked) + "-" + std::to_string(c.asked_end - 1) +
                "): its bytes would not continue the ones read");
  };
  if (c.status == 429 || c.status == 503) {
    c.throttled = true;  // its body is dropped; the block is asked for again after the wait
    return true;
  }
  if (c.status == 200) {
    if (!validator_.empty()) return changed(status_text(c) + " to If-Range: " + validator_);
    return fail(status_text(c) + " from " + shown_ + " (the whole file) to a Range request for bytes " +
                std::to_string(c.asked) + "-" + std::to_string(c.asked_end - 1));
  }
  if (c.status != 206) return fail(status_text(c) + " from " + shown_);
  if (!etag_.empty() && !c.etag.empty() && strip_weak(c.etag) != strip_weak(etag_))
    return changed("ETag " + c.etag + ", not " + etag_);
  unsigned long long first = 0, last = 0, total = 0;
  const int got = sscanf(c.content_range.c_str(), "bytes %llu-%llu/%llu", &first, &last, &total);
  if (got == 3 && total != size_) return changed("a " + std::to_string(total) + "-byte file, not " + std::to_string(size_));
  if (got < 2 || first != c.asked || last + 1 != c.asked_end)
    return fail(status_text(c) + " from " + shown_ + " sent '" + c.content_range + "' for bytes " +
                std::to_string(c.asked) + "-" + std::to_string(c.asked_end - 1));
  const long w = server_wait_ms("", c.ratelimit, c.rl_remaining, c.rl_reset);
  if (w >= 0) hold(w, "RateLimit says no requests remain");
  return true;
}

size_t ParallelRanges::on_header(char* data, size_t size, size_t count, void* conn) {
  Conn& c = *static_cast<Conn*>(conn);
  const std::string line(data, size * count);
  if (ascii_prefix(line, "HTTP/")) {
    const size_t sp = line.find(' ');
    c.status = sp == std::string::npos ? 0 : strtol(line.c_str() + sp + 1, nullptr, 10);
    const size_t sp2 = sp == std::string::npos ? sp : line.find(' ', sp + 1);
    c.reason = sp2 == std::string::npos ? "" : value_of(line, sp2 + 1);
    c.content_range.clear();
    c.etag.clear();
    c.retry_after.clear();
    c.ratelimit.clear();
    c.rl_remaining.clear();
    c.rl_reset.clear();
  } else if (ascii_prefix(line, "content-range:")) {
    c.content_range = value_of(line, 14);
  } else if (ascii_prefix(line, "etag:")) {
    c.etag = value_of(line, 5);
  } else if (ascii_prefix(line, "retry-after:")) {
    c.retry_after = value_of(line, 12);
  } else if (ascii_prefix(line, "ratelimit-remaining:")) {
    c.rl_remaining = value_of(line, 20);
  } else if (ascii_prefix(line, "ratelimit-reset:")) {
    c.rl_reset = value_of(line, 16);
  } else if (ascii_prefix(line, "ratelimit:")) {
    c.ratelimit = value_of(line, 10);
  }
  return size * count;
}

size_t ParallelRanges::on_body(char* data, size_t size, size_t count, void* conn) {
  Conn& c = *static_cast<Conn*>(conn);
  ParallelRanges& p = *c.owner;
  const size_t n = size * count;
  if (!c.checked && !p.check(c)) return 0;  // aborts the transfer (error_ says why)
  if (c.throttled) return n;
  Block& b = *c.block;
  if (b.open && b.data.size() - b.used >= kOpenAhead) {
    // One connection far enough ahead of the reader: held (the kernel's buffers and TCP hold the
    // server back), as the serial reader does; the reader takes bytes while they are in cache.
    c.paused = true;
    return CURL_WRITEFUNC_PAUSE;  // curl hands this piece over again after curl_easy_pause(CONT)
  }
  const size_t take = size_t(std::min<uint64_t>(n, b.end - b.pos()));
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(data);
  b.data.insert(b.data.end(), bytes, bytes + take);
  c.body += take;
  if (take) b.resumes = 0;  // bytes came: a later cut has its resumes again
  if (take < n) return take;  // a long range cut at a block boundary: its request ends here
  p.received_ += take;
  if (take && p.armed_ && b.gen == p.gen_) {
    // A sample starts at the first byte of a block started after the last decision.
    p.start_sample();
    p.sample_bytes_ -= take;
  }
  return n;
}

void ParallelRanges::start_sample() {
  armed_ = false;
  sampling_ = true;
  sample_at_ = Clock::now();
  sample_bytes_ = received_;
  sample_waited_ = waited_;
  budget_held_ = false;
}

void ParallelRanges::finished(Conn& c, CURLcode result) {
  curl_multi_remove_handle(multi_, c.easy);
  --running_;
  Block& b = *c.block;
  c.block = nullptr;
  b.conn = nullptr;
  if (!c.checked && c.status != 0 && result == CURLE_OK) check(c);  // a response without a body
  if (c.failed || fatal_) return;
  if (c.throttled) {
    if (++b.throttles > kThrottles) {
      error_ = status_text(c) + " from " + shown_ + " (" + std::to_string(b.throttles) + " times for bytes " +
               std::to_string(b.pos()) + "-" + std::to_string(b.end - 1) + ")";
      fatal_ = true;
      return;
    }
    policy_.throttled(running_ + 1);
    long w = server_wait_ms(c.retry_after, c.ratelimit, c.rl_remaining, c.rl_reset);
    if (w < 0) w = kDefaultThrottleMs;
    hold(w, c.status == 429 ? "HTTP 429" : "HTTP 503");
    return;
  }
  if (b.pos() >= b.end) {
    b.done = true;
    return;
  }
  // Ended early (a cut connection, a timeout): the rest of the block is asked for again.
  if (++b.resumes > kResumes) {
    error_ = status_text(c) + " response from " + shown_ + " ended after " + std::to_string(c.body) + " bytes of " +
             std::to_string(b.end - c.asked) + " (" + curl_easy_strerror(result) + "; " + std::to_string(kResumes) +
             " resumes)";
    if (c.status == 0) error_ = std::string(curl_easy_strerror(result)) + ": " + shown_;
    fatal_ = true;
    return;
  }
  say("bytes " + std::to_string(b.pos()) + "-" + std::to_string(b.end - 1) + " asked for again (" +
      curl_easy_strerror(result) + ")");
}

bool ParallelRanges::pump() {
  int alive = 0;
  if (curl_multi_perform(multi_, &alive) != CURLM_OK) {
    error_ = "libcurl failed while reading " + shown_;
    return false;
  }
  int queued = 0;
  while (CURLMsg* m = curl_multi_info_read(multi_, &queued)) {
    if (m->msg != CURLMSG_DONE) continue;
    for (auto& c : conns_)
      if (c->block && c->easy == m->easy_handle) {
        finished(*c, m->data.result);
        break;
      }
  }
  if (fatal_) return false;
  tick();
  schedule();
  return !fatal_;
}

void ParallelRanges::tick() {
  if (policy_.settled()) return;
  // No new block's byte came within a sample's time of the decision (the budget, a slow server):
  // the sample starts anyway.
  if (armed_ && seconds_since(decided_at_) >= kSampleSeconds) start_sample();
  if (!sampling_) return;
  const double dt = seconds_since(sample_at_);
  if (dt < kSampleSeconds) return;
  const double rate = double(received_ - sample_bytes_) / dt;
  const double starved = (waited_ - sample_waited_) / dt;
  sampling_ = false;
  if (!warm_) {
    // The first window is no sample: the connection's start (TCP slow start, the loader's first
    // work) makes it a fraction of the rate that follows. The next starts at once.
    warm_ = true;
    start_sample();
    return;
  }
  armed_ = true;
  decided_at_ = Clock::now();
  ++gen_;
  const unsigned before = policy_.target();
  const uint64_t remaining = size_ - delivered_;
  if (ConnectionPolicy::worth_probing(remaining, rate, kSampleSeconds) || !policy_.has_rate() ||
      rate < policy_.last_rate() * ConnectionPolicy::kGain) {
    policy_.sample(rate, starved, budget_held_);
  } else {
    policy_.settle(rate);
  }
  if (policy_.target() != before || policy_.settled()) {
    char what[160];
    snprintf(what, sizeof what, "%u connection(s): %s (%.1f MB/s, waited %.0f%%%s)", policy_.target(),
             policy_.settled() ? "settled" : "faster", rate / 1e6, starved * 100,
             budget_held_ ? ", budget full" : "");
    say(what);
  }
  budget_held_ = false;
}

bool ParallelRanges::read(uint64_t offset, size_t length, const uint8_t** data, size_t* n) {
  *data = nullptr;
  *n = 0;
  if (fatal_) return false;
  if (offset >= size_) return true;
  if (offset > next_start_) {
    // A jump past every block: the requests running are for bytes nobody wants.
    for (auto& c : conns_)
      if (c->block) {
        curl_multi_remove_handle(multi_, c->easy);
        c->block = nullptr;
        --running_;
      }
    blocks_.clear();
    delivered_ = next_start_ = offset;
  }
  bool performed = false;
  for (;;) {
    // Drop what was handed out, and what lies before `offset`.
    while (!blocks_.empty()) {
      Block& b = blocks_.front();
      const uint64_t at = b.start + b.used;
      if (offset > at) {
        const uint64_t drop = std::min<uint64_t>(offset - at, b.data.size() - b.used);
        b.used += size_t(drop);
        delivered_ = b.start + b.used;
      }
      if (b.used == b.end - b.start) {
        if (b.conn) {
          // Every byte is here but its request has not ended yet (its end not yet read, or a long
          // range cut at this block's end): it ends now, before the block goes.
          curl_multi_remove_handle(multi_, b.conn->easy);
          b.conn->block = nullptr;
          b.conn = nullptr;
          --running_;
        }
        // Its buffer is kept for a later block: a fresh one costs a page fault per 4 KiB.
        // Kept while the spares come to at most the budget (so the reader holds at most twice it):
        // fresh pages fault one by one, which cost this VM more than the copying (perf).
        size_t kept = b.data.capacity();
        for (const auto& v : spare_) kept += v.capacity();
        if (kept <= s_.budget) spare_.push_back(std::move(b.data));
        blocks_.pop_front();
        continue;
      }
      break;
    }
    if (!blocks_.empty()) {
      Block& b = blocks_.front();
      // As the serial reader: a whole piece (what was asked, up to the block's end) when it can,
      // not each 16 KiB as it lands (the loader's per-read costs add up).
      const size_t whole = size_t(std::min<uint64_t>(length, b.end - offset));
      if (b.start + b.used == offset && b.data.size() - b.used >= std::max<size_t>(whole, 1)) {
        *n = std::min(length, b.data.size() - b.used);
        *data = b.data.data() + b.used;
        b.used += *n;
        delivered_ = b.start + b.used;
        schedule();  // the budget moved
        return true;
      }
    }
    // What came in already first; then wait for the network (a short wait while new requests are
    // held back, for the hold's end and the samples).
    for (auto& c : conns_)
      if (c->paused && c->block && (!c->block->open || c->block->data.size() - c->block->used < kOpenAhead)) {
        c->paused = false;
        curl_easy_pause(c->easy, CURLPAUSE_CONT);  // may deliver the held piece right here
      }
    const Clock::time_point t0 = Clock::now();
    if (performed) curl_multi_poll(multi_, nullptr, 0, running_ ? 100 : 5, nullptr);
    const bool ok = pump();
    performed = true;
    waited_ += seconds_since(t0);
    if (!ok) return false;
  }
}

}  // namespace wscli

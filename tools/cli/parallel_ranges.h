// weightstream CLI — a URL's bytes from `from` to its end, fetched by up to N parallel Range
// requests (libcurl multi) and handed out strictly in order (issue #31), for HttpFile's forward
// reads (http_source.h).
//
// The file is cut into blocks; a block [s, e) is requested only when e minus the first byte not
// yet handed out fits the byte budget (--max-inflight-bytes), so memory is bounded whatever the
// network does: the blocks in flight and those waiting for an earlier one. How many run at once
// is ConnectionPolicy's answer (connection_policy.h), fed with a throughput sample every 500 ms,
// the time the reader waited for bytes, whether the budget held a block back, and the server's
// 429 / 503 / Retry-After / RateLimit answers (new requests wait as long as it says).
//
// Every block is requested with If-Range (the first response's strong ETag, else its
// Last-Modified) and its 206 checked (Content-Range starting at the byte asked for, the first
// response's total size and ETag): a file changed between ranges is an error saying so, never
// mixed bytes. A block whose response ends early is requested again from its next byte (up to 3
// times, the count starting again once bytes arrive). Every easy handle is removed and cleaned
// when the reader is dropped (the host seeks back, an error, the end): nothing runs on.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "connection_policy.h"

namespace wscli {

struct ParallelSettings {
  unsigned pinned = 0;        // --connections N; 0: auto
  unsigned max = ConnectionPolicy::kAutoMax;
  uint64_t budget = 16 << 20;  // --max-inflight-bytes
  bool verbose = false;        // say each change of the count on stderr
};

// The block size for these settings: two blocks per connection fit the budget (a connection can
// start its next block while the reader takes the one before), 256 KiB to 8 MiB, whole 64 KiBs.
uint64_t parallel_block_size(const ParallelSettings& s);

class ParallelRanges {
 public:
  // `multi`: the file's multi handle (its connection pool). `url`: where ranges go (the URL after
  // redirects); `shown`: the URL errors name. `headers`: "Name: value" lines for every request.
  // `validator`: the If-Range value ("" for none), `etag` the first response's ETag ("" for none).
  ParallelRanges(CURLM* multi, std::string url, std::string shown, std::vector<std::string> headers,
                 std::string validator, std::string etag, uint64_t size, uint64_t from, const ParallelSettings& s);
  ~ParallelRanges();
  ParallelRanges(const ParallelRanges&) = delete;
  ParallelRanges& operator=(const ParallelRanges&) = delete;

  // The first byte not yet handed out.
  uint64_t delivered() const { return delivered_; }
  // Up to `length` bytes at `offset` (>= delivered(); bytes before it are dropped), valid until
  // the next call; false with error().
  bool read(uint64_t offset, size_t length, const uint8_t** data, size_t* n);
  const std::string& error() const { return error_; }
  // The most requests that ran at once so far.
  unsigned peak() const { return peak_; }

 private:
  struct Block;
  struct Conn;
  using Clock = std::chrono::steady_clock;

  void schedule();
  bool start(Conn& c, Block& b);
  bool pump();                   // one round of the multi handle: transfers, ends, the policy, new requests
  void finished(Conn& c, CURLcode result);
  void tick();                   // the throughput sample and the policy's decision
  void start_sample();
  bool check(Conn& c);           // a response's status and headers, at its first body byte or its end
  void hold(long ms, const char* why);
  void say(const std::string& what);
  double seconds_since(Clock::time_point t) const;
  std::string status_text(const Conn& c) const;
  static size_t on_header(char* data, size_t size, size_t count, void* conn);
  static size_t on_body(char* data, size_t size, size_t count, void* conn);

  CURLM* multi_;
  std::string url_, shown_;
  curl_slist* headers_ = nullptr;
  std::string validator_, etag_;
  uint64_t size_;
  ParallelSettings s_;
  uint64_t block_size_;
  ConnectionPolicy policy_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::deque<Block> blocks_;      // in file order; the first holds delivered_
  std::vector<std::vector<uint8_t>> spare_;  // buffers of blocks handed out, for the next ones
  uint64_t delivered_, next_start_;
  unsigned running_ = 0, peak_ = 0;
  Clock::time_point hold_until_;
  std::string error_;
  bool fatal_ = false;
  // The sample.
  uint64_t received_ = 0;         // bytes received, all connections
  double waited_ = 0;             // seconds the reader waited for bytes
  bool budget_held_ = false;      // the budget held a block back during the sample
  unsigned gen_ = 0;              // decisions so far: a block started after the last one starts a sample
  bool armed_ = true, warm_ = false, sampling_ = false;
  Clock::time_point sample_at_, decided_at_ = Clock::now();
  uint64_t sample_bytes_ = 0;
  double sample_waited_ = 0;
};

}  // namespace wscli

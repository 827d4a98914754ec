// weightstream CLI — a file of the model at an http:// or https:// URL (libcurl), answering the
// model host's reads as ByteSource does.
//
// Each read becomes an HTTP Range request for what the loader asked, fetched ahead (the next
// request's window doubling, up to 16 MiB) while reads go forward, so `inspect` (read_ahead off)
// transfers the headers' bytes and little more, and a whole-file read costs few requests. A server
// without Range support answers 200 with the whole body: it is then read forward as one stream,
// paused while the loader is busy (memory stays bounded), and the host has the loader read it
// sequentially (seekable() is false). A forward read past the first read-ahead windows of a file
// served with Range requests goes on through ParallelRanges (parallel_ranges.h: up to N parallel
// Range requests with If-Range, adaptive, within a byte budget) unless --connections 1. Redirects are followed; errors name the URL and the HTTP
// status. Built only with WS_CLI_HTTP (libcurl found).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

#include "byte_source.h"
#include "parallel_ranges.h"

namespace wscli {

// The options every request of a URL shares (redirects, protocols, timeouts, user agent) on
// `easy`, asking for `url` with `headers`.
void configure_request(CURL* easy, const std::string& url, curl_slist* headers);

class HttpFile : public ByteSource {
 public:
  HttpFile(std::string url, const HttpOptions& options);
  ~HttpFile() override;
  HttpFile(const HttpFile&) = delete;
  HttpFile& operator=(const HttpFile&) = delete;

  Opened open(uint64_t offset, size_t length) override;
  bool seekable() const override { return ranges_; }
  bool read(uint64_t offset, size_t length, const uint8_t** data, size_t* n) override;

 private:
  bool start_parallel(uint64_t offset);  // the reads from `offset` on through ParallelRanges
  bool start(uint64_t offset, size_t length);  // a transfer from `offset` (a Range request for `length`)
  void stop();
  bool pump(size_t want);       // until `want` bytes are buffered or the transfer ended
  bool check_response();        // the final response's status and range, at its first body byte or its end
  bool transfer_failed();       // after the transfer ended: its curl result as error_
  // After a transfer that ended early (a cut connection, a timeout): whether the read may ask for
  // the rest again (a Range response, fewer than kResumes new requests since bytes last came); if
  // not, error_ says why. A resumed request carries If-Range as every later range does.
  bool may_resume();
  void changed_file(const std::string& why);  // error_: the file changed between two requests
  size_t buffered() const { return pending_.size() - used_; }
  uint64_t pos() const { return next_ - buffered(); }  // file offset of pending_[used_]
  void consume(size_t n);
  std::string status_text() const;
  static size_t on_header(char* data, size_t size, size_t count, void* self);
  static size_t on_body(char* data, size_t size, size_t count, void* self);

  std::string url_;
  HttpOptions options_;
  CURLM* multi_ = nullptr;  // holds the connection between requests (keep-alive)
  CURL* easy_ = nullptr;
  std::vector<std::string> header_lines_;  // every request's headers (--header, the token)
  curl_slist* headers_ = nullptr;
  curl_slist* range_headers_ = nullptr;  // headers_ + If-Range: the requests after the first
  bool if_range_sent_ = false;           // the current request carries If-Range
  int resumes_ = 0;                      // new requests for a cut response since bytes last came
  // The first response's validators (If-Range for later ranges): its ETag, its Last-Modified.
  bool have_validator_ = false;
  std::string etag_, last_modified_;
  std::string validator_;  // If-Range's: a strong ETag, else the Last-Modified date (RFC 9110 13.1.5)
  std::string response_etag_, response_last_modified_;  // the current response's
  std::unique_ptr<ParallelRanges> parallel_;  // forward reads, when running
  // The file.
  bool ranges_ = true;  // the server answers Range requests (206)
  bool missing_ = false;
  // The transfer.
  bool active_ = false, done_ = false, checked_ = false, paused_ = false, failed_ = false;
  CURLcode result_ = CURLE_OK;   // when done_
  uint64_t request_at_ = 0;      // the offset asked for
  uint64_t request_end_ = 0;     // the end of the range asked for (ranges_)
  uint64_t next_ = 0;            // file offset of the next body byte to arrive
  uint64_t skip_ = 0;            // body bytes to drop as they arrive (a whole body for a later offset)
  uint64_t body_ = 0;            // body bytes received
  uint64_t end_ = UINT64_MAX;    // file offset where this response's body ends, when known
  // The final response's status line and the headers that matter (reset at each status line:
  // redirects come before it).
  long status_ = 0;
  std::string reason_;
  std::string content_range_;
  bool length_known_ = false;
  uint64_t content_length_ = 0;
  std::vector<uint8_t> pending_;  // received, not yet handed out
  size_t used_ = 0;
  // What read() handed out last (re-reads of it are answered from here).
  std::vector<uint8_t> block_;
  uint64_t block_at_ = 0;
  size_t block_fill_ = 0;
  uint64_t window_ = 0;           // the next forward request's size (read-ahead)
};

}  // namespace wscli

// weightstream CLI — files at URLs (see http_source.h).
#include "http_source.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "curl_runtime.h"
#include "weightstream/version.h"

namespace wscli {

namespace {

constexpr int kResumes = 3;                   // a cut response's new requests (as the parallel reader's)
constexpr size_t kMaxPiece = 1 << 20;           // the most one read hands out (as a local file's block)
constexpr size_t kMaxPending = 4 << 20;         // received ahead of the reads: past this, pause
constexpr uint64_t kMaxWindow = 16ull << 20;    // the largest read-ahead request
constexpr uint64_t kMaxGap = 256 << 10;         // a forward jump this small is read through, not requested
constexpr uint64_t kParallelAfter = 64 << 10;   // a forward read whose window reached this goes parallel

ParallelSettings parallel_settings(const HttpOptions& o) {
  ParallelSettings s;
  s.pinned = o.connections;
  s.budget = o.max_inflight;
  s.verbose = o.verbose;
  return s;
}

// scheme://host[:port] of a URL.
std::string origin(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t end = url.find_first_of("/?#", scheme + 3);
  return url.substr(0, end);
}

bool ascii_prefix(const std::string& line, const char* prefix) {
  const size_t n = strlen(prefix);
  return line.size() >= n && strncasecmp(line.c_str(), prefix, n) == 0;
}

std::string trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return s.substr(b, e - b);
}

// https://huggingface.co or a subdomain: where HF_TOKEN may go (it must not reach other hosts).
bool is_hugging_face(const std::string& url) {
  if (url.compare(0, 8, "https://") != 0) return false;
  const size_t end = url.find_first_of(":/?#", 8);
  const std::string host = url.substr(8, end == std::string::npos ? std::string::npos : end - 8);
  const std::string hf = "huggingface.co";
  return host == hf || (host.size() > hf.size() && host.compare(host.size() - hf.size() - 1, std::string::npos, "." + hf) == 0);
}

}  // namespace

void configure_request(CURL* easy, const std::string& url, curl_slist* headers) {
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  // Redirects (Hugging Face's resolve/ URLs go to a CDN); curl does not carry a custom
  // Authorization header to another host.
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "weightstream/" WEIGHTSTREAM_VERSION);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, 30L);
  // A server that stops sending (not a slow one) ends the read instead of hanging it.
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, 120L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
}

HttpFile::HttpFile(std::string url, const HttpOptions& options) : url_(std::move(url)), options_(options) {
  multi_ = curl_multi_init();
  easy_ = curl_easy_init();
  if (!multi_ || !easy_) return;
  header_lines_ = options_.headers;
  std::string token = options_.token;
  if (token.empty() && is_hugging_face(url_)) token = options_.hf_token;
  // A header given with --header wins over the token (curl sends both otherwise).
  bool has_auth = false;
  for (const std::string& h : options_.headers) has_auth = has_auth || ascii_prefix(h, "authorization:");
  if (!token.empty() && !has_auth) header_lines_.push_back("Authorization: Bearer " + token);
  for (const std::string& h : header_lines_) headers_ = curl_slist_append(headers_, h.c_str());
  configure_request(easy_, url_, headers_);
  curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &HttpFile::on_header);
  curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &HttpFile::on_body);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
}

HttpFile::~HttpFile() {
  parallel_.reset();  // its requests' handles first, while the multi handle is there
  stop();
  if (easy_) curl_easy_cleanup(easy_);
  if (multi_) curl_multi_cleanup(multi_);
  curl_slist_free_all(headers_);
  curl_slist_free_all(range_headers_);
}

ByteSource::Opened HttpFile::open(uint64_t offset, size_t length) {
  if (!multi_ || !easy_) {
    const char* why = curl_runtime_error();
    error_ = why ? std::string(why) + " (" + url_ + ")" : "cannot start libcurl for " + url_;
    return Opened::Failed;
  }
  // The first request asks for the first read's bytes: its response says whether the file is
  // there, its size (Content-Range, or Content-Length of a whole body) and whether ranges work.
  window_ = length;
  if (!start(offset, length) || !pump(1)) return missing_ ? Opened::Missing : Opened::Failed;
  // Cut before any byte came: the file cannot be opened (after some, read() says where it ended).
  if (done_ && result_ != CURLE_OK && buffered() == 0 && transfer_failed()) return Opened::Failed;
  return Opened::Ok;
}

bool HttpFile::read(uint64_t offset, size_t length, const uint8_t** data, size_t* n) {
  *data = nullptr;
  *n = 0;
  if (offset >= block_at_ && offset < block_at_ + block_fill_) {  // a re-read of the last piece
    const uint64_t avail = block_at_ + block_fill_ - offset;
    *n = size_t(std::min<uint64_t>(avail, length));
    *data = block_.data() + (offset - block_at_);
    return true;
  }
  if (size_known_ && offset >= size_) return true;  // the end
  const size_t want = std::min(length, kMaxPiece);
  if (parallel_) {
    if (offset >= parallel_->delivered()) {
      const uint8_t* p = nullptr;
      if (!parallel_->read(offset, want, &p, n)) {
        error_ = parallel_->error();
        return false;
      }
      block_.assign(p, p + *n);
      block_at_ = offset;
      block_fill_ = *n;
      *data = block_.data();
      return true;
    }
    parallel_.reset();  // a read back: one request for it, as before (every handle of the parallel one ends)
  }
  // A response that ended early (the connection cut, a timeout): once what it brought is read, the
  // rest is asked for again with If-Range (a file that changed meanwhile is an error), a few times.
  if (active_ && done_ && result_ != CURLE_OK && !(offset >= pos() && offset < next_) && !may_resume())
    return false;
  // Read on in the current transfer when it goes on to `offset` cheaply; else ask anew.
  const bool reuse = active_ && offset >= pos() && offset < end_ && !(done_ && offset >= next_) &&
                     (!ranges_ || offset - pos() <= kMaxGap);
  if (!reuse) {
    uint64_t ask = want;
    if (ranges_) {
      // Forward from where the last request ended: ask for twice as much (read-ahead).
      const bool forward = options_.read_ahead && active_ && offset == request_end_;
      // Forward past the first windows (the headers are read): the rest through parallel Range
      // requests, when the file's size is known and the rest is worth two blocks.
      if (forward && options_.connections != 1 && size_known_ && window_ >= kParallelAfter && done_ &&
          result_ == CURLE_OK && size_ - offset >= 2 * parallel_block_size(parallel_settings(options_))) {
        if (!start_parallel(offset)) return false;
        return read(offset, length, data, n);
      }
      window_ = forward ? std::min<uint64_t>(window_ * 2, kMaxWindow) : want;
      ask = std::max<uint64_t>(window_, want);
    }
    if (!start(offset, size_t(ask))) return false;
  }
  // Drop what lies before `offset`: buffered, then as it arrives.
  const uint64_t gap = offset - pos();
  const size_t drop = size_t(std::min<uint64_t>(gap, buffered()));
  consume(drop);
  skip_ = gap - drop;
  if (!pump(want)) return false;
  if (buffered() == 0) {
    // Nothing more: the file's end, or the connection ended early (then the rest is asked for
    // again: the read starts over at `offset`, a new request since nothing of it is buffered).
    if (done_ && result_ != CURLE_OK) return may_resume() && read(offset, length, data, n);
    return true;
  }
  const size_t take = std::min(buffered(), want);
  block_.assign(pending_.begin() + long(used_), pending_.begin() + long(used_ + take));
  block_at_ = offset;
  block_fill_ = take;
  consume(take);
  *data = block_.data();
  *n = take;
  return true;
}

bool HttpFile::start_parallel(uint64_t offset) {
  stop();
  // Ranges go to the URL after redirects. The headers that curl does not carry to another host
  // (Authorization, Cookie) are not sent there either.
  char* effective = nullptr;
  std::string to = url_;
  std::vector<std::string> lines = header_lines_;
  if (curl_easy_getinfo(easy_, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective && url_ != effective) {
    to = effective;
    if (origin(to) != origin(url_))
      lines.erase(std::remove_if(lines.begin(), lines.end(), [](const std::string& h) {
                    return ascii_prefix(h, "authorization:") || ascii_prefix(h, "cookie:");
                  }),
                  lines.end());
  }
  parallel_ = std::make_unique<ParallelRanges>(multi_, to, url_, lines, validator_, etag_, size_, offset,
                                               parallel_settings(options_));
  return true;
}

bool HttpFile::may_resume() {
  if (failed_) return false;
  if (!ranges_ || status_ != 206 || resumes_ >= kResumes) {
    transfer_failed();
    // "... ended after N bytes of M (curl's reason; 3 resumes)", as the parallel reader says it.
    if (status_ == 206 && resumes_ >= kResumes && !error_.empty() && error_.back() == ')')
      error_.insert(error_.size() - 1, "; " + std::to_string(kResumes) + " resumes");
    return false;
  }
  ++resumes_;
  if (options_.verbose)
    fprintf(stderr, "weightstream: %s: bytes %llu-%llu asked for again (%s)\n", url_.c_str(),
            (unsigned long long)next_, (unsigned long long)(request_end_ - 1), curl_easy_strerror(result_));
  stop();  // the next read asks anew
  return true;
}

void HttpFile::changed_file(const std::string& why) {
  failed_ = true;
  error_ = "the file at " + url_ + " changed while it was read (" + why + " for bytes " + std::to_string(request_at_) +
           "-" + std::to_string(request_end_ - 1) + "): its bytes would not continue the ones read";
}

bool HttpFile::start(uint64_t offset, size_t length) {
  stop();
  done_ = checked_ = paused_ = failed_ = false;
  result_ = CURLE_OK;
  status_ = 0;
  reason_.clear();
  content_range_.clear();
  length_known_ = false;
  pending_.clear();
  used_ = 0;
  body_ = 0;
  request_at_ = offset;
  next_ = offset;
  skip_ = 0;
  end_ = UINT64_MAX;
  if (ranges_) {
    request_end_ = offset + (length ? length : 1);
    if (size_known_ && request_end_ > size_) request_end_ = size_;
    char range[64];
    snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)offset, (unsigned long long)(request_end_ - 1));
    curl_easy_setopt(easy_, CURLOPT_RANGE, range);
    // Every range after the first is of the file the first response described (RFC 9110 13.1.5):
    // a changed file answers 200, which check_response() refuses.
    if_range_sent_ = range_headers_ != nullptr;
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, if_range_sent_ ? range_headers_ : headers_);
  } else {
    // The whole body, from the file's start: read through to `offset` (read() sets skip_).
    curl_easy_setopt(easy_, CURLOPT_RANGE, nullptr);
    if_range_sent_ = false;
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers_);
    next_ = 0;
  }
  if (curl_multi_add_handle(multi_, easy_) != CURLM_OK) {
    error_ = "cannot start a request for " + url_;
    return false;
  }
  active_ = true;
  return true;
}

void HttpFile::stop() {
  if (active_) curl_multi_remove_handle(multi_, easy_);
  active_ = false;
}

void HttpFile::consume(size_t n) {
  used_ += n;
  if (used_ == pending_.size()) {
    pending_.clear();
    used_ = 0;
  } else if (used_ > kMaxPending) {  // keep the buffer from growing with what was handed out
    pending_.erase(pending_.begin(), pending_.begin() + long(used_));
    used_ = 0;
  }
}

bool HttpFile::pump(size_t want) {
  while (!done_ && buffered() < want && !failed_) {
    if (paused_) {
      paused_ = false;
      curl_easy_pause(easy_, CURLPAUSE_CONT);  // may deliver the held piece right here
    }
    int running = 0;
    if (curl_multi_perform(multi_, &running) != CURLM_OK) {
      error_ = "libcurl failed while reading " + url_;
      return false;
    }
    int queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &queued)) {
      if (m->msg == CURLMSG_DONE && m->easy_handle == easy_) {
        done_ = true;
        result_ = m->data.result;
      }
    }
    if (!done_ && buffered() < want && !paused_ && !failed_) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
  }
  if (failed_) return false;  // check_response() said why (error_, missing_)
  // A response without a body (an error status, an empty file) is checked at its end.
  if (done_ && !checked_ && status_ != 0 && !check_response()) return false;
  return true;
}

std::string HttpFile::status_text() const {
  std::string s = "HTTP " + std::to_string(status_);
  if (!reason_.empty()) s += " " + reason_;
  return s;
}

bool HttpFile::check_response() {
  checked_ = true;
  if ((status_ == 206 || status_ == 200) && !have_validator_) {
    // The first response describes the file: later ranges must come from the same one. If-Range
    // wants a strong ETag, else a Last-Modified date (RFC 9110 section 13.1.5).
    have_validator_ = true;
    etag_ = response_etag_;
    last_modified_ = response_last_modified_;
    validator_ = !etag_.empty() && etag_.compare(0, 2, "W/") != 0 ? etag_ : last_modified_;
    if (!validator_.empty()) {
      for (const std::string& h : header_lines_) range_headers_ = curl_slist_append(range_headers_, h.c_str());
      range_headers_ = curl_slist_append(range_headers_, ("If-Range: " + validator_).c_str());
    }
  }
  const auto fail = [&](const std::string& why) {
    failed_ = true;
    error_ = why;
    return false;
  };
  if (status_ == 206) {
    // Content-Range: bytes FIRST-LAST/TOTAL (TOTAL may be '*').
    unsigned long long first = 0, last = 0, total = 0;
    const std::string cr = trimmed(content_range_);
    const auto weak = [](const std::string& e) { return e.compare(0, 2, "W/") == 0 ? e.substr(2) : e; };
    if (!etag_.empty() && !response_etag_.empty() && weak(response_etag_) != weak(etag_)) {
      changed_file("ETag " + response_etag_ + ", not " + etag_);
      return false;
    }
    if (sscanf(cr.c_str(), "bytes %llu-%llu/%llu", &first, &last, &total) == 3) {
      if (size_known_ && total != size_) {
        changed_file("a " + std::to_string(total) + "-byte file, not " + std::to_string(size_));
        return false;
      }
      size_known_ = true;
      size_ = total;
    } else if (sscanf(cr.c_str(), "bytes %llu-%llu/*", &first, &last) != 2) {
      return fail(status_text() + " without a usable Content-Range ('" + cr + "') from " + url_);
    }
    if (first != request_at_)
      return fail(status_text() + " from " + url_ + " starts at byte " + std::to_string(first) + ", not at " +
                  std::to_string(request_at_) + " as asked");
    end_ = last + 1;
    return true;
  }
  if (status_ == 200) {
    if (if_range_sent_) {
      changed_file(status_text() + " to If-Range: " + validator_);
      return false;
    }
    // The whole file (a server without Range support, or one that ignored the range): read it
    // forward from its start, dropping what comes before the offset asked for.
    if (ranges_) {
      ranges_ = false;
      skip_ += next_;  // nothing has arrived: next_ is still the offset asked for
      next_ = 0;
    }
    if (length_known_) {
      size_known_ = true;
      size_ = content_length_;
      end_ = content_length_;
    }
    return true;
  }
  if (status_ == 416) {
    // Asked at or past the end: "Content-Range: bytes */TOTAL" says where the end is.
    unsigned long long total = 0;
    if (sscanf(trimmed(content_range_).c_str(), "bytes */%llu", &total) == 1 && request_at_ >= total) {
      size_known_ = true;
      size_ = total;
      end_ = total;
      skip_ = UINT64_MAX;  // the response's body is no part of the file
      return true;
    }
  }
  missing_ = status_ == 404 || status_ == 410;
  return fail(status_text() + " from " + url_);
}

bool HttpFile::transfer_failed() {
  if (failed_) return true;
  failed_ = true;
  std::string what = curl_easy_strerror(result_);
  if (status_ != 0) {
    // The connection ended inside a response: say how far it got.
    what = status_text() + " response from " + url_ + " ended after " + std::to_string(body_) + " bytes";
    if (length_known_) what += " of " + std::to_string(content_length_);
    what += " (" + std::string(curl_easy_strerror(result_)) + ")";
  } else {
    what += ": " + url_;
  }
  error_ = what;
  return true;
}

size_t HttpFile::on_header(char* data, size_t size, size_t count, void* self) {
  HttpFile& h = *static_cast<HttpFile*>(self);
  const std::string line(data, size * count);
  if (ascii_prefix(line, "HTTP/")) {
    // A new response (the first, or the one a redirect leads to): its status, its headers.
    const size_t sp = line.find(' ');
    h.status_ = sp == std::string::npos ? 0 : strtol(line.c_str() + sp + 1, nullptr, 10);
    const size_t sp2 = sp == std::string::npos ? sp : line.find(' ', sp + 1);
    h.reason_ = sp2 == std::string::npos ? "" : trimmed(line.substr(sp2 + 1));
    h.content_range_.clear();
    h.length_known_ = false;
    h.response_etag_.clear();
    h.response_last_modified_.clear();
  } else if (ascii_prefix(line, "etag:")) {
    h.response_etag_ = trimmed(line.substr(5));
  } else if (ascii_prefix(line, "last-modified:")) {
    h.response_last_modified_ = trimmed(line.substr(14));
  } else if (ascii_prefix(line, "content-range:")) {
    h.content_range_ = trimmed(line.substr(14));
  } else if (ascii_prefix(line, "content-length:")) {
    h.length_known_ = true;
    h.content_length_ = strtoull(line.c_str() + 15, nullptr, 10);
  }
  return size * count;
}

size_t HttpFile::on_body(char* data, size_t size, size_t count, void* self) {
  HttpFile& h = *static_cast<HttpFile*>(self);
  size_t n = size * count;
  if (!h.checked_ && !h.check_response()) return 0;  // aborts the transfer (failed_ says why)
  if (h.buffered() >= kMaxPending) {
    h.paused_ = true;  // curl hands this piece over again after curl_easy_pause(CONT)
    return CURL_WRITEFUNC_PAUSE;
  }
  h.body_ += n;
  h.next_ += n;
  if (n) h.resumes_ = 0;  // bytes came: a later cut has its resumes again
  const size_t drop = size_t(std::min<uint64_t>(h.skip_, n));
  h.skip_ -= drop;
  h.pending_.insert(h.pending_.end(), data + drop, data + n);
  return size * count;
}

}  // namespace wscli

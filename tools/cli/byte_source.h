// weightstream CLI — where the model host reads a file of the model from: a local file, or an
// http:// or https:// URL (http_source.h). The loader names files and asks for byte ranges; a
// source answers them and knows nothing about formats.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

namespace wscli {

class ByteSource {
 public:
  enum class Opened { Ok, Missing, Failed };
  virtual ~ByteSource() = default;

  // Opens the file with its first read in mind (a URL's first request asks for those bytes):
  // Missing when it is not there (ENOENT, HTTP 404/410), Failed with error() for anything else.
  virtual Opened open(uint64_t offset, size_t length) = 0;
  // The file's size, once open() found it (a local file's stat, a response's Content-Range or
  // Content-Length).
  bool size_known() const { return size_known_; }
  uint64_t size() const { return size_; }
  // Random access is cheap (a local file, a server with Range requests). Otherwise reads should go
  // forward: one going back starts the transfer again.
  virtual bool seekable() const = 0;
  // Up to `length` bytes at `offset` (fewer is fine; *n == 0: the end of the file), valid until the
  // next call. False on an error: error() says why, naming the file or URL.
  virtual bool read(uint64_t offset, size_t length, const uint8_t** data, size_t* n) = 0;
  const std::string& error() const { return error_; }

 protected:
  std::string error_;
  bool size_known_ = false;
  uint64_t size_ = 0;
};

// How URLs are fetched (the CLI's --header / --token and the environment).
struct HttpOptions {
  std::vector<std::string> headers;  // "Name: value", sent with every request
  std::string token;                 // --token or WEIGHTSTREAM_TOKEN: "Authorization: Bearer ..." to any host
  std::string hf_token;              // HF_TOKEN: only to https://huggingface.co and its subdomains
  // Reads may be fetched ahead of what was asked, growing while they go forward (off: each request
  // asks for exactly what the loader asked: inspect, which reads headers only).
  bool read_ahead = true;
  // A forward read of a file served with Range requests runs up to this many requests at once
  // (--connections N; 0: auto, adaptive up to 4; 1: one request at a time, the serial reader),
  // holding at most max_inflight bytes ahead of the loader (--max-inflight-bytes).
  unsigned connections = 0;
  uint64_t max_inflight = 16 << 20;
  bool verbose = false;  // --verbose: say on stderr how many connections a read runs and why
};

// An http:// or https:// URL (not a path).
bool is_url(const std::string& path);
// The source for `path`: a URL when is_url(), else a local file. Null, with *why, for a URL when
// the CLI was built without HTTP support (WS_CLI_HTTP=OFF).
std::unique_ptr<ByteSource> open_source(const std::string& path, const HttpOptions& http, std::string* why);

}  // namespace wscli

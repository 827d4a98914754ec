// weightstream CLI — local file or URL (see byte_source.h).
#include "byte_source.h"

#include "file_source.h"
#ifdef WS_CLI_HTTP
#include "http_source.h"
#endif

namespace wscli {

bool is_url(const std::string& path) { return path.rfind("http://", 0) == 0 || path.rfind("https://", 0) == 0; }

std::unique_ptr<ByteSource> open_source(const std::string& path, const HttpOptions& http, std::string* why) {
  if (!is_url(path)) return std::unique_ptr<ByteSource>(new LocalFile(path));
#ifdef WS_CLI_HTTP
  (void)why;
  return std::unique_ptr<ByteSource>(new HttpFile(path, http));
#else
  (void)http;
  *why = "this weightstream was built without HTTP support (WS_CLI_HTTP=OFF: libcurl was not found): " + path;
  return nullptr;
#endif
}

}  // namespace wscli

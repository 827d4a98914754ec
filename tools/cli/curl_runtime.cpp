// libcurl, loaded when the CLI first opens a URL (dlopen), not at every start. Linked, it made
// every command load its ~35 shared libraries and run their constructors: ~16 ms of a 28 ms
// `weightstream --help` (a program linked with -lcurl that never calls it: 17.8 ms, without: 2.0
// ms), paid by every local command and by the test suite's thousands of CLI runs.
//
// The functions http_source.cpp calls are defined here with curl's own declarations (curl.h) and
// forwarded to the library's; a missing libcurl makes curl_easy_init() / curl_multi_init() return
// null, which http_source.cpp reports (curl_runtime_error()).
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>

#include "curl_runtime.h"

namespace {

struct CurlApi {
  bool ok = false;
  const char* why = nullptr;
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_pause)(CURL*, int);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, struct curl_waitfd*, unsigned int, int, int*);
  struct curl_slist* (*slist_append)(struct curl_slist*, const char*);
  void (*slist_free_all)(struct curl_slist*);
};

template <typename F>
bool resolve(void* lib, const char* name, F* fn) {
  void* p = dlsym(lib, name);
  memcpy(fn, &p, sizeof p);  // a data pointer to a function pointer, as POSIX defines dlsym's
  return p != nullptr;
}

const CurlApi& api() {
  static CurlApi a = [] {
    CurlApi c;
    void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      c.why = "libcurl is not installed (Debian: libcurl4): the CLI reads URLs through it";
      return c;
    }
    c.ok = resolve(lib, "curl_easy_init", &c.easy_init) && resolve(lib, "curl_easy_cleanup", &c.easy_cleanup) &&
           resolve(lib, "curl_easy_setopt", &c.easy_setopt) && resolve(lib, "curl_easy_pause", &c.easy_pause) &&
           resolve(lib, "curl_easy_getinfo", &c.easy_getinfo) &&
           resolve(lib, "curl_easy_strerror", &c.easy_strerror) && resolve(lib, "curl_multi_init", &c.multi_init) &&
           resolve(lib, "curl_multi_cleanup", &c.multi_cleanup) &&
           resolve(lib, "curl_multi_add_handle", &c.multi_add_handle) &&
           resolve(lib, "curl_multi_remove_handle", &c.multi_remove_handle) &&
           resolve(lib, "curl_multi_perform", &c.multi_perform) &&
           resolve(lib, "curl_multi_info_read", &c.multi_info_read) && resolve(lib, "curl_multi_poll", &c.multi_poll) &&
           resolve(lib, "curl_slist_append", &c.slist_append) && resolve(lib, "curl_slist_free_all", &c.slist_free_all);
    if (!c.ok) c.why = "the installed libcurl is older than 7.66 (no curl_multi_poll): update libcurl4";
    return c;
  }();
  return a;
}

}  // namespace

const char* curl_runtime_error() { return api().ok ? nullptr : api().why; }

// The names in parentheses: curl.h may define curl_easy_setopt as a type-checking macro.
extern "C" {
CURL* (curl_easy_init)(void) { return api().ok ? api().easy_init() : nullptr; }
void (curl_easy_cleanup)(CURL* h) { api().easy_cleanup(h); }
CURLcode (curl_easy_setopt)(CURL* h, CURLoption option, ...) {
  // One argument whose type the option's number range names (curl.h CURLOPTTYPE_*), as libcurl's
  // own curl_easy_setopt reads it.
  va_list ap;
  va_start(ap, option);
  CURLcode r;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    r = api().easy_setopt(h, option, va_arg(ap, long));
  } else if (option < CURLOPTTYPE_OFF_T && option >= CURLOPTTYPE_FUNCTIONPOINT) {
    r = api().easy_setopt(h, option, va_arg(ap, void (*)()));
  } else if (option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB) {
    r = api().easy_setopt(h, option, va_arg(ap, curl_off_t));
  } else {
    r = api().easy_setopt(h, option, va_arg(ap, void*));
  }
  va_end(ap);
  return r;
}
CURLcode (curl_easy_pause)(CURL* h, int bitmask) { return api().easy_pause(h, bitmask); }
CURLcode (curl_easy_getinfo)(CURL* h, CURLINFO info, ...) {
  // Every CURLINFO takes one pointer (to a long, a char*, a curl_off_t, ...).
  va_list ap;
  va_start(ap, info);
  void* out = va_arg(ap, void*);
  va_end(ap);
  return api().easy_getinfo(h, info, out);
}
const char* (curl_easy_strerror)(CURLcode c) { return api().ok ? api().easy_strerror(c) : "libcurl unavailable"; }
CURLM* (curl_multi_init)(void) { return api().ok ? api().multi_init() : nullptr; }
CURLMcode (curl_multi_cleanup)(CURLM* m) { return api().multi_cleanup(m); }
CURLMcode (curl_multi_add_handle)(CURLM* m, CURL* h) { return api().multi_add_handle(m, h); }
CURLMcode (curl_multi_remove_handle)(CURLM* m, CURL* h) { return api().multi_remove_handle(m, h); }
CURLMcode (curl_multi_perform)(CURLM* m, int* running) { return api().multi_perform(m, running); }
CURLMsg* (curl_multi_info_read)(CURLM* m, int* queued) { return api().multi_info_read(m, queued); }
CURLMcode (curl_multi_poll)(CURLM* m, struct curl_waitfd* fds, unsigned int n, int timeout_ms, int* ret) {
  return api().multi_poll(m, fds, n, timeout_ms, ret);
}
struct curl_slist* (curl_slist_append)(struct curl_slist* l, const char* s) {
  return api().ok ? api().slist_append(l, s) : l;
}
void (curl_slist_free_all)(struct curl_slist* l) {
  if (l && api().ok) api().slist_free_all(l);
}
}

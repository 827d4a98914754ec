// libcurl loaded on first use (curl_runtime.cpp): the CLI links no libcurl, so a command that
// opens no URL never loads it.
#pragma once

// Why libcurl cannot be used (not installed, too old), or nullptr when it can. Loads it.
const char* curl_runtime_error();

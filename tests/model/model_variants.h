// The malformed model directories the model-loader goldens cover (model_variants.cpp), in memory:
// variant name -> file name (relative to the variant's directory) -> bytes.
#pragma once

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

namespace modeltest {

using VariantDirs = std::map<std::string, std::map<std::string, std::vector<uint8_t>>>;

// `ok` (optional) is false when an edit did not apply (a fixture changed under it).
VariantDirs model_variants(bool* ok = nullptr);

}  // namespace modeltest

// ws-make-samples — reference-style safetensors writer (see safetensors_writer.h).
#include "safetensors_writer.h"

#include <stdio.h>

#include <algorithm>

namespace samplegen {

const char* dtype_name(SampleDtype t) {
  switch (t) {
    case SampleDtype::F16: return "F16";
    case SampleDtype::BF16: return "BF16";
    case SampleDtype::F32: return "F32";
  }
  return "?";
}

int dtype_enum_order(SampleDtype t) {
  // Indices in the reference enum: ... F16 = 13, BF16 = 14, ... F32 = 17 ...
  switch (t) {
    case SampleDtype::F16: return 13;
    case SampleDtype::BF16: return 14;
    case SampleDtype::F32: return 17;
  }
  return -1;
}

uint32_t dtype_bytes(SampleDtype t) { return t == SampleDtype::F32 ? 4 : 2; }

void append_json_string(std::string* out, const std::string& s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

std::vector<uint8_t> serialize_safetensors(std::vector<SampleTensor> tensors,
                                           const std::map<std::string, std::string>& metadata) {
  std::stable_sort(tensors.begin(), tensors.end(), [](const SampleTensor& a, const SampleTensor& b) {
    const int da = dtype_enum_order(a.dtype), db = dtype_enum_order(b.dtype);
    if (da != db) return da > db;  // descending dtype, as the reference writer sorts
    return a.name < b.name;        // then bytewise by name
  });

  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first_kv = true;
    for (const auto& kv : metadata) {
      if (!first_kv) header += ",";
      first_kv = false;
      append_json_string(&header, kv.first);
      header += ":";
      append_json_string(&header, kv.second);
    }
    header += "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const SampleTensor& t : tensors) {
    if (!first) header += ",";
    first = false;
    append_json_string(&header, t.name);
    header += ":{\"dtype\":\"";
    header += dtype_name(t.dtype);
    header += "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) header += ",";
      header += std::to_string(t.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + ",";
    offset += t.data.size();
    header += std::to_string(offset) + "]}";
  }
  header += "}";
  // Pad with spaces so the data section starts 8-byte aligned (8 + a multiple of 8).
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<uint8_t> file;
  file.reserve(8 + header.size() + offset);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<uint8_t>(n >> (8 * i)));
  file.insert(file.end(), header.begin(), header.end());
  for (const SampleTensor& t : tensors) file.insert(file.end(), t.data.begin(), t.data.end());
  return file;
}

}  // namespace samplegen

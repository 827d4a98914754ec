// Reads the CPU description from /proc/cpuinfo (Linux; other systems print "unknown").
#include "host_info.h"

#include <fstream>
#include <thread>

namespace wsbench {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 10, "model name") != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string("unknown") : line.substr(start);
  }
  return "unknown";
}

unsigned logical_cpus() { return std::thread::hardware_concurrency(); }

}  // namespace wsbench

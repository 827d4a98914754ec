// What machine the numbers were measured on.
#pragma once

#include <string>

namespace wsbench {

// "model name" from /proc/cpuinfo, or "unknown".
std::string cpu_model();
// Logical CPUs online.
unsigned logical_cpus();

}  // namespace wsbench

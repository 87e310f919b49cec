#include "util/memory_limit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace switchyard {
namespace {

bool read_u64(const std::string& path, uint64_t* out) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word == "max") return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(word.c_str(), &end, 10);
  if (end == word.c_str()) return false;
  *out = v;
  return true;
}

// The process's cgroup v2 folder ("0::/some/path" in /proc/self/cgroup).
std::string cgroup_dir() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  return "";
}

void consider(MemoryHeadroom& h, uint64_t bytes, const std::string& source) {
  if (bytes < h.bytes) h = MemoryHeadroom{bytes, source};
}

}  // namespace

std::string human_bytes(uint64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (uint64_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  else if (bytes >= (uint64_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else if (bytes >= (uint64_t{1} << 10))
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  return buf;
}

MemoryHeadroom memory_headroom() {
  MemoryHeadroom h;
  if (const char* env = std::getenv("SWITCHYARD_MEMORY_AVAILABLE"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return MemoryHeadroom{v, "SWITCHYARD_MEMORY_AVAILABLE=" + std::string(env)};
  }
  const std::string dir = cgroup_dir();
  uint64_t max = 0, current = 0;
  if (!dir.empty() && read_u64(dir + "/memory.max", &max)) {
    read_u64(dir + "/memory.current", &current);
    consider(h, max > current ? max - current : 0,
             "cgroup memory.max " + human_bytes(max) + ", " + human_bytes(current) + " in use");
  }
  struct rlimit rl {};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    uint64_t pages = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> pages;  // total program size, in pages: the address space RLIMIT_AS counts
    const uint64_t used = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t limit = static_cast<uint64_t>(rl.rlim_cur);
    consider(h, limit > used ? limit - used : 0,
             "RLIMIT_AS " + human_bytes(limit) + ", " + human_bytes(used) + " of address space in use");
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      consider(h, kib * 1024, "MemAvailable " + human_bytes(kib * 1024));
      break;
    }
  }
  return h;
}

}  // namespace switchyard

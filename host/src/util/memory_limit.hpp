// How much more memory this process may use: the tightest of the cgroup limit
// (memory.max less memory.current), RLIMIT_AS (less the address space in use) and
// MemAvailable. $SWITCHYARD_MEMORY_AVAILABLE (bytes) replaces all three, for tests and for
// users who want a budget of their own. Read fresh on each call (a few small files).
#pragma once

#include <cstdint>
#include <string>

namespace switchyard {

struct MemoryHeadroom {
  uint64_t bytes = UINT64_MAX;  // UINT64_MAX: nothing could be read, no limit known
  std::string source;           // what set it, with its numbers: "RLIMIT_AS 2.50 GiB, 0.31 GiB in use"
};

MemoryHeadroom memory_headroom();

// "1.50 GiB", "12.0 MiB", "512 bytes".
std::string human_bytes(uint64_t bytes);

}  // namespace switchyard

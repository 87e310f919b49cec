// The one door for the host's own big allocations (tensors, arenas, host storage, the
// SY_HostApi alloc plugins call), so that running out of memory is reported the same way
// everywhere and a test can make the Nth allocation fail (docs/reliability.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace switchyard {

// Aligned memory for `bytes` (0 gives a valid minimal block); NULL when it cannot be had,
// including when the test hook below says this call fails. Free with std::free. From
// 4 MiB up, the whole 2 MiB pages inside are advised as transparent huge pages.
void* host_aligned_alloc(size_t alignment, size_t bytes);

// Aligned memory or Error(ErrorKind::OutOfMemory) naming `what` and the bytes asked.
void* host_aligned_alloc_or_throw(size_t alignment, size_t bytes, const std::string& what);

// The text every out-of-memory error starts with, then `what` and the byte count.
std::string out_of_memory_message(const std::string& what, uint64_t bytes);

namespace test_hooks {
// Makes the nth host_aligned_alloc call from now fail (n >= 1), once; 0 turns the hook off.
// Process-wide and thread-safe; for tests only.
void fail_host_alloc_at(uint64_t n);
// host_aligned_alloc calls made since the last fail_host_alloc_at (counting works with n = 0).
uint64_t host_alloc_calls();
}  // namespace test_hooks

}  // namespace switchyard

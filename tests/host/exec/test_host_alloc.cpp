// The host's large buffers ask for transparent huge pages (util/host_alloc.cpp): the 2 MiB
// pages inside a buffer of 4 MiB and up are advised, so its mapping carries the `hg` flag
// in /proc/self/smaps, while memory next to it is left as it was.
#include "util/host_alloc.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("" if none).
std::string vm_flags_at(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

}  // namespace

TEST(HostAlloc, LargeBuffersAskForHugePagesSmallOnesDoNot) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages to ask for";
  const size_t bytes = size_t{16} << 20;
  void* p = switchyard::host_aligned_alloc(64, bytes);
  ASSERT_NE(p, nullptr);
  const uintptr_t first_whole_page = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  EXPECT_NE(vm_flags_at(first_whole_page).find(" hg "), std::string::npos) << vm_flags_at(first_whole_page);
  // Only whole huge pages are advised: the bytes before the first one keep their flags.
  if (first_whole_page != reinterpret_cast<uintptr_t>(p))
    EXPECT_EQ(vm_flags_at(first_whole_page - 1).find(" hg "), std::string::npos) << vm_flags_at(first_whole_page - 1);
  std::free(p);

  // Exactly one huge page, aligned to one: too little to be worth asking for.
  void* small = switchyard::host_aligned_alloc(kHugePage, kHugePage);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(vm_flags_at(reinterpret_cast<uintptr_t>(small)).find(" hg "), std::string::npos)
      << vm_flags_at(reinterpret_cast<uintptr_t>(small));
  std::free(small);
}

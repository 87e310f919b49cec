// The host's large buffers ask for transparent huge pages (util/host_alloc.cpp): the 2 MiB
// pages inside a buffer of 4 MiB and up are advised, so its mapping carries the `hg` flag
// in /proc/self/smaps, while memory next to it is left as it was. The SDK's
// sy::map_huge_pages (packed weights) maps zeroed memory of its own, advised the same way,
// and unmaps it with its owner.
#include "util/host_alloc.hpp"

#include <switchyard/huge_pages.hpp>

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

// Every case needs a kernel with transparent huge pages to ask for.
class HostAlloc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
      GTEST_SKIP()
          << "missing resource: transparent huge pages (this kernel has no /sys/kernel/mm/transparent_hugepage)";
  }
};

}  // namespace

TEST_F(HostAlloc, LargeBuffersAskForHugePagesSmallOnesDoNot) {
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

TEST_F(HostAlloc, MappedBuffersAskForHugePagesAndGoWithTheirOwner) {
  const size_t bytes = size_t{8} << 20;
  void* data = nullptr;
  std::shared_ptr<void> owner = sy::map_huge_pages(bytes, &data);
  ASSERT_TRUE(owner);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  const uintptr_t at = reinterpret_cast<uintptr_t>(data);
  EXPECT_NE(vm_flags_at(at).find(" hg "), std::string::npos) << vm_flags_at(at);
  const unsigned char* bytes_in = static_cast<const unsigned char*>(data);
  size_t nonzero = 0;
  for (size_t i = 0; i < bytes; i += 4096) nonzero += bytes_in[i] != 0;
  EXPECT_EQ(nonzero, 0u) << "fresh memory reads as zeros";
  static_cast<unsigned char*>(data)[bytes - 1] = 7;  // all of it is writable
  owner.reset();
  EXPECT_EQ(vm_flags_at(at), "") << "the owner unmaps it";
}

// conv plugin: the memo of finite values (see finite_memo.hpp).
#include "finite_memo.hpp"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace syconv {
namespace {

struct Memo {
  std::mutex mutex;
  struct Found {
    size_t bytes;       // how many bytes from the buffer's start were scanned
    uint32_t exponent;  // their largest exponent field, below kNonFinite
  };
  std::unordered_map<const void*, Found> finite;  // buffer start -> what a scan found
};

Memo& memo() {
  static Memo m;
  return m;
}

// Entries outlive the buffers they describe (a session's arena goes away); past this many
// the memo starts again, which only costs scans.
constexpr size_t kMaxEntries = 4096;

}  // namespace

uint32_t known_exponent(const void* data, size_t bytes, SY_StorageIndex storage) {
  if (storage == SY_STORAGE_HOST || data == nullptr) return kNonFinite;
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.finite.find(data);
  return it != m.finite.end() && it->second.bytes == bytes ? it->second.exponent : kNonFinite;
}

void remember_exponent(const void* data, size_t bytes, SY_StorageIndex storage, uint32_t exponent) {
  if (storage == SY_STORAGE_HOST || data == nullptr || exponent >= kNonFinite) return;
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (m.finite.size() >= kMaxEntries) m.finite.clear();
  m.finite[data] = {bytes, exponent};
}

bool values_below(const DLTensor& t, const dnnl::memory::desc& user_md, SY_StorageIndex storage,
                  const dnnl::memory& scanned, uint32_t bound) {
  uint32_t exponent = known_exponent(handle(t), user_md.get_size(), storage);
  // Nothing known, or only that they are finite where the bound asks how large: scan.
  if (exponent >= kNonFinite || (exponent == kLargestFinite && bound <= kLargestFinite)) {
    exponent = max_exponent(scanned);
    remember_exponent(handle(t), user_md.get_size(), storage, exponent);
  }
  return exponent < bound;
}

void forget_finite(const void* data) {
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.finite.erase(data);
}

namespace {
struct Vouched {
  const void* data;
  size_t bytes;
  SY_StorageIndex storage;
  uint32_t exponent;
};
std::vector<Vouched>& vouched() {
  thread_local std::vector<Vouched> pending;
  return pending;
}
}  // namespace

void remember_written(const void* data, size_t bytes, SY_StorageIndex storage, uint32_t exponent) {
  vouched().push_back({data, bytes, storage, exponent});
}

void apply_written(bool keep) {
  std::vector<Vouched>& pending = vouched();
  if (keep)
    for (const Vouched& v : pending) remember_exponent(v.data, v.bytes, v.storage, v.exponent);
  pending.clear();
}

}  // namespace syconv

// conv plugin: the memo of finite values (see finite_memo.hpp).
#include "finite_memo.hpp"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace syconv {
namespace {

struct Memo {
  std::mutex mutex;
  std::unordered_map<const void*, size_t> finite;  // buffer start -> bytes found finite
};

Memo& memo() {
  static Memo m;
  return m;
}

// Entries outlive the buffers they describe (a session's arena goes away); past this many
// the memo starts again, which only costs scans.
constexpr size_t kMaxEntries = 4096;

}  // namespace

bool known_finite(const void* data, size_t bytes, SY_StorageIndex storage) {
  if (storage == SY_STORAGE_HOST || data == nullptr) return false;
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.finite.find(data);
  return it != m.finite.end() && it->second == bytes;
}

void remember_finite(const void* data, size_t bytes, SY_StorageIndex storage) {
  if (storage == SY_STORAGE_HOST || data == nullptr) return;
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (m.finite.size() >= kMaxEntries) m.finite.clear();
  m.finite[data] = bytes;
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
};
std::vector<Vouched>& vouched() {
  thread_local std::vector<Vouched> pending;
  return pending;
}
}  // namespace

void remember_written(const void* data, size_t bytes, SY_StorageIndex storage) {
  vouched().push_back({data, bytes, storage});
}

void apply_written(bool keep) {
  std::vector<Vouched>& pending = vouched();
  if (keep)
    for (const Vouched& v : pending) remember_finite(v.data, v.bytes, v.storage);
  pending.clear();
}

}  // namespace syconv

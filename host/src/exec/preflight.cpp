// The memory pre-flight (docs/reliability.md). A plan is made by running once, so a new
// signature's need is not known before it runs; what is known is the measured peak of the
// signatures already planned. The pre-flight scales the nearest one's peak (arena plus
// kernel-produced memory) by the ratio of the inputs' sizes, which is exact for memory
// linear in batch size and an under-estimate where it grows faster (attention's
// sequence-squared scores), and refuses the run when that exceeds the headroom.
#include "exec/executor.hpp"
#include "exec/plan.hpp"
#include "util/memory_limit.hpp"

#include <switchyard/error.hpp>

#include <cmath>

namespace switchyard::exec {
namespace {

uint64_t input_bytes(const std::vector<DLDataType>& dtypes, const std::vector<std::vector<int64_t>>& shapes) {
  uint64_t total = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    uint64_t n = dtype_size(dtypes[i]);
    for (int64_t d : shapes[i]) n *= static_cast<uint64_t>(d < 0 ? 0 : d);
    total += n;
  }
  return total;
}

bool comparable(const PlanCache::Cached& c, const std::vector<Tensor>& inputs) {
  if (c.shapes.size() != inputs.size() || !c.plan || !c.plan->complete) return false;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!same_dtype(c.dtypes[i], inputs[i].dtype()) || c.shapes[i].size() != inputs[i].shape().size()) return false;
  return true;
}

}  // namespace

void Executor::preflight(const std::vector<Tensor>& inputs) const {
  std::vector<DLDataType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor& t : inputs) {
    dtypes.push_back(t.dtype());
    shapes.push_back(t.shape());
  }
  const uint64_t new_bytes = input_bytes(dtypes, shapes);
  const PlanCache::Cached* nearest = nullptr;
  double nearest_distance = 0;
  const std::vector<PlanCache::Cached> cached = cache_.snapshot();
  for (const PlanCache::Cached& c : cached) {
    if (!comparable(c, inputs) || c.plan->memory.estimated_peak_bytes() == 0) continue;
    const uint64_t b = input_bytes(c.dtypes, c.shapes);
    if (b == 0) continue;
    const double distance = std::fabs(std::log(static_cast<double>(new_bytes) / static_cast<double>(b)));
    if (nearest == nullptr || distance < nearest_distance) nearest = &c, nearest_distance = distance;
  }
  if (nearest == nullptr) return;  // the first signature: nothing measured to scale from
  const double ratio = static_cast<double>(new_bytes) / static_cast<double>(input_bytes(nearest->dtypes, nearest->shapes));
  if (ratio <= 1.0) return;  // no bigger than a signature that already ran here
  const uint64_t peak = nearest->plan->memory.estimated_peak_bytes();
  const double need_d = static_cast<double>(peak) * ratio;
  const uint64_t need = need_d >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(need_d);
  const MemoryHeadroom room = memory_headroom();
  if (room.bytes == UINT64_MAX || need <= room.bytes) return;

  std::string which;
  for (size_t i = 0; i < inputs.size(); ++i)
    which += (i ? ", " : "") + graph_.values[static_cast<size_t>(graph_.inputs[i])].name + " " +
             dtype_name(dtypes[i]) + " " + shape_string(shapes[i]);
  std::string near;
  for (size_t i = 0; i < nearest->shapes.size(); ++i) near += (i ? ", " : "") + shape_string(nearest->shapes[i]);
  std::string msg = "memory pre-flight: inputs " + which + " need about " + human_bytes(need) + " (" +
                    std::to_string(need) + " bytes: the plan for " + near + " peaked at " + human_bytes(peak) +
                    ", scaled by the inputs' size), but this process may use only " + human_bytes(room.bytes) + " (" +
                    std::to_string(room.bytes) + " bytes) more (" + room.source + ")";
  // The largest batch: when every input's first dimension is the same batch size.
  int64_t batch = -1;
  for (const auto& s : shapes) {
    const int64_t b = s.empty() ? -1 : s[0];
    batch = batch == -1 || batch == b ? b : -2;
  }
  if (batch > 0) {
    const double per_item = need_d / static_cast<double>(batch);
    const auto fits = static_cast<int64_t>(std::floor(static_cast<double>(room.bytes) / per_item));
    msg += fits >= 1 ? "; the largest batch that fits is about " + std::to_string(fits)
                     : "; not even a batch of 1 fits";
  }
  msg += ". Nothing ran; --no-preflight (or [runtime] preflight = false) skips this check";
  throw Error(ErrorKind::OutOfMemory, msg);
}

}  // namespace switchyard::exec

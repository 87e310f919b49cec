// The memory pre-flight (docs/reliability.md). A plan is made by running once, so a new
// signature's need is not known before it runs. Once signatures are planned, the pre-flight
// scales the nearest one's need (arena, kernel-produced memory, and the largest scratch a
// kernel declares through SDK 1.1 cost) by the ratio of the inputs' sizes. A model's
// first signature, when it has a batch of at least kProbeMinBatch, is measured by planning
// runs at batch 1 (and 8) on the inputs' first rows (plans then dropped) and extrapolated
// as a line in the batch. Both are exact for memory linear in the batch and under-estimate
// memory that grows faster (attention's sequence-squared scores). Where no estimate can be
// made, the check is skipped, never failed.
#include "exec/executor.hpp"
#include "exec/plan.hpp"
#include "ir/input_spec.hpp"
#include "util/log.hpp"
#include "util/memory_limit.hpp"

#include <switchyard/error.hpp>

#include <algorithm>
#include <cmath>

namespace switchyard::exec {
namespace {

// Below this first batch the planning runs cost a large share of the run itself, and so
// small a batch rarely exhausts memory on its own.
constexpr int64_t kProbeMinBatch = 16;
constexpr int64_t kProbeSlopeBatch = 8;

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

// The batch size when every input's first dimension is the same one; else -1.
int64_t common_batch(const std::vector<Tensor>& inputs) {
  int64_t batch = -1;
  for (const Tensor& t : inputs) {
    if (t.shape().empty()) return -1;
    if (batch != -1 && t.shape()[0] != batch) return -1;
    batch = t.shape()[0];
  }
  return batch;
}

std::string describe_inputs(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  std::string which;
  for (size_t i = 0; i < inputs.size(); ++i)
    which += (i ? ", " : "") + graph.values[static_cast<size_t>(graph.inputs[i])].name + " " +
             dtype_name(inputs[i].dtype()) + " " + shape_string(inputs[i].shape());
  return which;
}

// A plan's need: its activations (arena and kernel-made memory) plus the most scratch one
// kernel declares (SDK 1.1 cost.scratch_bytes), held only while that kernel runs.
uint64_t plan_need(const Plan& plan) {
  uint64_t scratch = 0;
  for (const NodeDecision& np : plan.record.nodes)
    if (np.bound && np.bound->has_cost) scratch = std::max<uint64_t>(scratch, np.bound->scratch_bytes);
  return plan.memory.estimated_peak_bytes() + scratch;
}

}  // namespace

// The measured peak of a planning run at `batch` on the first rows of `inputs` (views, no
// copies), or 0 where it cannot be measured. The plan is dropped; nothing is cached.
uint64_t Executor::probe_peak(const std::vector<Tensor>& inputs, int64_t batch) {
  std::vector<Tensor> rows;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> shape = inputs[i].shape();
    shape[0] = batch;
    Tensor view = Tensor::from_blob(inputs[i].raw_data(), inputs[i].dtype(), shape, inputs[i].strides());
    view.keep_alive(inputs[i].owner());
    if (std::string why = ir::check_input_shape(graph_, i, shape); !why.empty()) {
      log::get().debug("memory pre-flight: no planning run at batch {}: {}", batch, why);
      return 0;
    }
    rows.push_back(std::move(view));
  }
  try {
    Plan plan;
    plan_and_run(plan, rows, RunOptions{});
    finalize(plan);
    return plan_need(plan);
  } catch (const Error& e) {  // the real run will meet and report whatever this was
    log::get().info("memory pre-flight skipped: the planning run at batch {} failed: {}", batch, e.what());
    return 0;
  }
}

void Executor::preflight_first(const std::vector<Tensor>& inputs) {
  const int64_t batch = common_batch(inputs);
  if (batch < kProbeMinBatch) {
    log::get().debug(
        "memory pre-flight: first signature not checked ({})",
        batch < 0 ? "the inputs share no first dimension" : "a batch under " + std::to_string(kProbeMinBatch));
    return;
  }
  if (memory_headroom().bytes == UINT64_MAX) return;  // no limit known
  const uint64_t peak1 = probe_peak(inputs, 1);
  if (peak1 == 0) return;
  MemoryHeadroom room = memory_headroom();
  // Memory affine in the batch with a fixed part >= 0 needs at most batch x peak1: fits.
  if (static_cast<double>(peak1) * static_cast<double>(batch) <= static_cast<double>(room.bytes)) return;
  // The slope from batch 1 to kProbeSlopeBatch: far enough apart that the arena's
  // per-tensor alignment (up to 63 bytes each) does not hide the growth of small tensors.
  const uint64_t peak2 = probe_peak(inputs, kProbeSlopeBatch);
  if (peak2 == 0) return;
  room = memory_headroom();
  const double per_item = peak2 > peak1 ? static_cast<double>(peak2 - peak1) / (kProbeSlopeBatch - 1) : 0.0;
  const double need_d = static_cast<double>(peak1) + per_item * static_cast<double>(batch - 1);
  const uint64_t need = need_d >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(need_d);
  if (need <= room.bytes) return;
  const int64_t fits = room.bytes < peak1 ? 0
                       : per_item == 0.0
                           ? batch
                           : static_cast<int64_t>(std::floor(static_cast<double>(room.bytes - peak1) / per_item)) + 1;
  std::string msg =
      "memory pre-flight: inputs " + describe_inputs(graph_, inputs) + " need about " + human_bytes(need) + " (" +
      std::to_string(need) + " bytes, extrapolated from planning runs on the inputs' first rows: batch 1 peaked at " +
      std::to_string(peak1) + " bytes, batch " + std::to_string(kProbeSlopeBatch) + " at " + std::to_string(peak2) +
      " bytes; memory taken as linear in the batch), but this process may use only " + human_bytes(room.bytes) + " (" +
      std::to_string(room.bytes) + " bytes) more (" + room.source + ")";
  msg += fits >= 1 ? "; the largest batch that fits is about " + std::to_string(fits) : "; not even a batch of 1 fits";
  msg += ". Nothing ran at batch " + std::to_string(batch) +
         "; --no-preflight (or [runtime] preflight = false) skips this check";
  throw Error(ErrorKind::OutOfMemory, msg);
}

void Executor::preflight(const std::vector<Tensor>& inputs) {
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
    if (!comparable(c, inputs) || plan_need(*c.plan) == 0) continue;
    const uint64_t b = input_bytes(c.dtypes, c.shapes);
    if (b == 0) continue;
    const double distance = std::fabs(std::log(static_cast<double>(new_bytes) / static_cast<double>(b)));
    if (nearest == nullptr || distance < nearest_distance) nearest = &c, nearest_distance = distance;
  }
  if (nearest == nullptr) return preflight_first(inputs);  // nothing measured to scale from
  const double ratio =
      static_cast<double>(new_bytes) / static_cast<double>(input_bytes(nearest->dtypes, nearest->shapes));
  if (ratio <= 1.0) return;  // no bigger than a signature that already ran here
  const uint64_t peak = plan_need(*nearest->plan);
  const double need_d = static_cast<double>(peak) * ratio;
  const uint64_t need = need_d >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(need_d);
  const MemoryHeadroom room = memory_headroom();
  if (room.bytes == UINT64_MAX || need <= room.bytes) return;

  const std::string which = describe_inputs(graph_, inputs);
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
    msg +=
        fits >= 1 ? "; the largest batch that fits is about " + std::to_string(fits) : "; not even a batch of 1 fits";
  }
  msg += ". Nothing ran; --no-preflight (or [runtime] preflight = false) skips this check";
  throw Error(ErrorKind::OutOfMemory, msg);
}

}  // namespace switchyard::exec

// conv plugin: which values in the plugin's own storages are known to hold no NaN or
// infinity, and how large they may be, so that a value's second guarded reader skips the
// scan its first reader did (a ResNet block's input is read by conv1 and, as the
// residual, by conv3).
//
// Why this is sound: only this plugin writes a value in its own storages (its kernels and
// its from_host conversion), each such write forgets the buffer once it has finished
// (Tracked<K> below, format_convert), and the host never writes a live value's buffer.
// So an entry is only ever found for the bytes a scan saw, or a loop of this plugin checked
// as it read them (remember_written). Host-memory values are never remembered: any plugin
// may write them.
#pragma once

#include <switchyard/plugin.hpp>

#include "conv_common.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>

namespace syconv {

// What a scan found of `bytes` bytes at `data`, in own storage `storage`, if nothing has
// written them since: their largest exponent field (conv_common.hpp's max_exponent). Else
// kNonFinite: nothing known.
uint32_t known_exponent(const void* data, size_t bytes, SY_StorageIndex storage);
// Records a finished scan's max_exponent (host memory, or kNonFinite: ignored).
void remember_exponent(const void* data, size_t bytes, SY_StorageIndex storage, uint32_t exponent);
// Drops whatever is known about the buffer starting at `data` (a write into it).
void forget_finite(const void* data);
// Whether every float of tensor `t` (laid out as `user_md`, in storage `storage`) has an
// exponent field below `bound`: what the memo knows, else a scan of `scanned` (the same
// values, perhaps a reordered copy), whose result the memo keeps. A value vouched for as
// finite alone (kLargestFinite) is scanned again where `bound` asks for less.
bool values_below(const DLTensor& t, const dnnl::memory::desc& user_md, SY_StorageIndex storage,
                  const dnnl::memory& scanned, uint32_t bound);
// A kernel's own loop found these bytes finite during this run (its output, or an input
// it can vouch for), with no exponent field above `exponent` (kLargestFinite: finite is
// all it knows): Tracked<K> remembers them once it has forgotten the run's outputs.
// Per calling thread.
void remember_written(const void* data, size_t bytes, SY_StorageIndex storage, uint32_t exponent = kLargestFinite);
// Remembers what this thread's kernel noted, and clears it; `keep` false: only clears.
void apply_written(bool keep);

// A conv-plugin kernel whose run forgets its outputs' buffers after writing them, so no
// later reader trusts a scan of what they held before. Every kernel is registered as one.
template <typename K>
struct Tracked : K {
  using K::K;
  void run(sy::Run& r) {
    struct Forget {
      sy::Run& r;
      const int unwinding = std::uncaught_exceptions();
      ~Forget() {
        for (size_t o = 0; o < r.num_outputs(); ++o)
          if (r.args->outputs != nullptr && r.args->outputs[o] != nullptr)
            forget_finite(static_cast<const char*>(r.args->outputs[o]->data) + r.args->outputs[o]->byte_offset);
        apply_written(std::uncaught_exceptions() == unwinding);  // a run that threw vouches for nothing
      }
    } forget{r};
    K::run(r);
  }
};

}  // namespace syconv

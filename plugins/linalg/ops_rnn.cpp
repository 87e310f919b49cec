// linalg plugin: recurrent layers as one kernel each, the time loop inside it.
//
//   lstm(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers,
//        float dropout, bool train, bool bidirectional, bool batch_first)   -> (output, h_n, c_n)
//   gru / rnn_tanh / rnn_relu(Tensor input, Tensor hx, Tensor[] params, ...) -> (output, h_n)
//
// (aten_ops.hpp's convention: inputs are [input, h0(, c0), params...], hx's length the
// attribute `hx.len`; params per layer and direction are w_ih, w_hh(, b_ih, b_hh), in
// PyTorch's order; a node may leave off the final states.) Each layer and direction is
// one oneDNN RNN primitive that runs the whole sequence: lstm_forward, lbr_gru_forward
// (PyTorch's GRU applies the reset gate to the hidden GEMM's result, oneDNN's "linear
// before reset") and vanilla_rnn_forward (tanh or relu). Inside it the input GEMM covers
// every time step at once, then each step is one GEMM against the recurrent weights for
// all gates and the gates' element-wise math, JIT-compiled for the CPU at hand. Measured
// against a loop of our own (one sgemm for the whole sequence's inputs, then per step one
// sgemm for all gates and the gates by Eigen), oneDNN's LSTM layer was as fast at batch 1
// and 1.5x faster at batch 8 (docs/benchmarks.md).
//
// The weights are constants: reordered once at create into the layout the primitives ask
// for (the GRU's gates r, z, n become oneDNN's u, r, o; b_ih + b_hh is summed, except the
// GRU's b_hn, which oneDNN keeps apart as PyTorch does). Primitives are cached per input
// shape signature (sequence length, batch, the input's strides). The last layer writes
// the output in place, batch-first or not, each direction its own columns; earlier layers
// write a per-thread scratch that the next one reads.
//
// Threads: rnn_support.hpp.
//
// Declined (left to aten): float64, train=True with dropout between layers, LSTM
// projections (proj_size), weights fed at run time, inputs that are not 3-D, the packed
// sequence overloads (`lstm.data`: a batch_sizes input and no batch_first).
#include "rnn_support.hpp"

#include "common/gather.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

namespace sy_linalg {
namespace {

using namespace rnn;

// What a primitive descriptor gives us, whatever the cell.
struct Made {
  dnnl::primitive prim;
  memory::desc layer_md, iter_md, scratch;
};

class RnnKernel {
 public:
  static void supports(const sy::Node& node) { RnnKernel k(node, false); }
  explicit RnnKernel(const sy::Node& node) : RnnKernel(node, true) {}

  void infer(sy::Infer& in) {
    const Geometry g = geometry(in.args->inputs, in.args->num_inputs);
    for (size_t o = 0; o < in.args->num_outputs; ++o) in.set_output(o, sy::kFloat32, output_shape(o, g));
  }

  void cost(sy::Cost& c) {
    const Geometry g = geometry(c.args->inputs, c.args->num_inputs);
    double macs = 0, weights = 0;
    for (int64_t l = 0; l < layers_; ++l) {
      const double in = static_cast<double>(layer_input(l)), gh = static_cast<double>(cell_.gates * hidden_);
      macs += static_cast<double>(dirs_) * gh * (in + static_cast<double>(hidden_));
      weights += static_cast<double>(dirs_) * gh * (in + static_cast<double>(hidden_) + 2);
    }
    const double tb = static_cast<double>(g.t * g.b);
    c.flops(2.0 * tb * macs);
    c.bytes(sizeof(float) * (tb * static_cast<double>(features_ + dirs_ * hidden_) + weights +
                             2.0 * static_cast<double>(cell_.states * layers_ * dirs_ * g.b * hidden_)));
    c.scratch(sizeof(float) * static_cast<uint64_t>(scratch_floats(g)));
  }

  void run(sy::Run& r) {
    const Geometry g = geometry(r.args->inputs, r.args->num_inputs);
    for (size_t o = 0; o < r.num_outputs(); ++o) {
      const DLTensor& out = r.output(o);
      if (sy::shape_of(out) != output_shape(o, g) || !sy::is_contiguous(out) || !is_f32(out))
        throw sy::Error("output " + std::to_string(o) + " is " + str(sy::shape_of(out)) +
                            ", expected contiguous float32 " + str(output_shape(o, g)),
                        SY_ERROR_INTERNAL);
    }
    const int64_t state = layers_ * dirs_ * g.b * hidden_;  // elements of one hx tensor
    if (g.b == 0) return;                                   // every output is empty
    std::shared_ptr<const Plan> plan;
    try {
      plan = plans_.get({g.t, g.b, g.st, g.sb, g.sf}, [&] { return build(g); });
    } catch (const dnnl::error& e) {
      throw sy::Error("oneDNN RNN primitive for input " + str(g.shape) + ": " + sy_onednn::error_message(e),
                      sy_onednn::error_status(e));
    }

    // Scratch: the input made dense where oneDNN could not take its strides, hx made
    // contiguous where it is not, and the layers' outputs before the last.
    const int64_t seq = g.t * g.b * features_, between = g.t * g.b * dirs_ * hidden_;
    const int64_t buffers = layers_ > 2 ? 2 : layers_ - 1;
    Scratch scratch(static_cast<size_t>(scratch_floats(g)));
    float* next = scratch.data();
    auto take = [&](int64_t n) {
      float* p = next;
      next += n;
      return p;
    };
    const float* x = sy::data<const float>(r.input(0));
    if (plan->compact_input) {  // dense [T, B, I], whatever the input's layout
      float* dense = take(seq);
      const DLTensor& in = r.input(0);
      const Shape strides = sy::strides_of(in);
      const Shape tbi_strides = batch_first_ ? Shape{strides[1], strides[0], strides[2]} : strides;
      sy_common::gather_compact(x, {g.t, g.b, features_}, tbi_strides, dense);
      x = dense;
    }
    const float* hx[2] = {nullptr, nullptr};
    for (int64_t k = 0; k < cell_.states; ++k) {
      const DLTensor& h = r.input(static_cast<size_t>(1 + k));
      hx[k] = sy::data<const float>(h);
      if (!sy::is_contiguous(h)) {
        float* dense = take(state);
        sy_common::gather_compact(h, dense);
        hx[k] = dense;
      }
    }
    float* inter[2] = {buffers > 0 ? take(between) : nullptr, buffers > 1 ? take(between) : nullptr};
    float* out = sy::data<float>(r.output(0));
    float* hn[2] = {r.num_outputs() > 1 ? sy::data<float>(r.output(1)) : nullptr,
                    r.num_outputs() > 2 ? sy::data<float>(r.output(2)) : nullptr};

    // A wavefront's chunks hand their final states on here, per layer and state two [B, H]
    // in turn; the whole-sequence steps put an LSTM's c_n here when it is no output.
    float* carry = take(2 * cell_.states * layers_ * g.b * hidden_);
    float* c_sink = cell_.cell == Cell::Lstm && hn[0] != nullptr && hn[1] == nullptr ? carry : hn[1];

    // Layer l: whole-sequence steps, each direction at once or one after the other.
    if (plan->chunks == 1) {
      for (int64_t l = 0; l < layers_; ++l) {
        const float* src = l == 0 ? x : inter[(l - 1) % 2];
        float* dst = l + 1 == layers_ ? out : inter[l % 2];
        auto direction = [&](int64_t d) {
          const Step& s = plan->steps[static_cast<size_t>(l * dirs_ + d)];
          const int64_t at = (l * dirs_ + d) * g.b * hidden_;  // this layer and direction's [B, H] in hx
          launch(s, src, dst + s.dst_offset, hx[0] + at, cell_.states > 1 ? hx[1] + at : nullptr,
                 hn[0] ? hn[0] + at : nullptr, c_sink ? c_sink + at : nullptr);
        };
        if (plan->parallel_dirs && gate_.pooled()) {
          // The two directions at once on the OpenMP team, each claimed by whichever
          // thread comes first: where no second thread comes, the caller runs both.
          std::atomic<int64_t> next_dir{0}, finished{0}, alone{0};
          std::atomic<bool> failed{false};
          const int64_t start = wall_ns();
          on_team(2, [&](int) {
            try {
              for (int64_t d; (d = next_dir.fetch_add(1)) < 2;) {
                const int64_t t0 = wall_ns();
                direction(d);
                alone.fetch_add(wall_ns() - t0, std::memory_order_relaxed);
                finished.fetch_add(1, std::memory_order_release);
              }
            } catch (...) {
              failed.store(true);  // the other stops waiting; on_team rethrows this one
              throw;
            }
            wait_for(finished, 2, failed);  // spinning, not asleep at the team's end
          });
          gate_.report(wall_ns() - start, alone.load());
        } else {
          Team team(plan->threads);
          for (int64_t d = 0; d < dirs_; ++d) direction(d);
        }
      }
      return;
    }

    // A unidirectional stack as a wavefront: the sequence in chunks, layer l's chunk k
    // once layer l - 1's chunk k is done, so the layers run at once, each chunk handing
    // its final states to the next.
    const int64_t chunk = plan->chunk, chunks = plan->chunks, bh = g.b * hidden_;
    const int64_t x_st = plan->compact_input ? g.b * features_ : g.st, out_st = batch_first_ ? hidden_ : bh;
    std::array<std::atomic<int64_t>, kMaxWaveLayers> done{};  // chunks each layer has finished
    std::atomic<bool> failed{false};
    auto task = [&](int64_t l, int64_t k) {
      const Step& s = plan->steps[static_cast<size_t>(2 * l + (k + 1 == chunks ? 1 : 0))];
      const float* src = l == 0 ? x + k * chunk * x_st : inter[(l - 1) % 2] + k * chunk * bh;
      float* dst = l + 1 == layers_ ? out + k * chunk * out_st : inter[l % 2] + k * chunk * bh;
      const float* in[2] = {nullptr, nullptr};
      float* fin[2] = {nullptr, nullptr};
      for (int64_t c = 0; c < cell_.states; ++c) {
        float* pair = carry + (c * layers_ + l) * 2 * bh;
        in[c] = k == 0 ? hx[c] + l * bh : pair + ((k - 1) % 2) * bh;
        fin[c] = k + 1 == chunks && hn[c] ? hn[c] + l * bh : pair + (k % 2) * bh;
      }
      launch(s, src, dst, in[0], in[1], fin[0], fin[1]);
    };
    // Each thread claims the next layer and runs its chunks in order, each once the layer
    // before has finished that chunk; layers are claimed in order, so the one waited for
    // is always running. A thread alone runs the layers one after the other.
    std::atomic<int64_t> next_layer{0}, alone{0};
    auto lane = [&] {
      try {
        for (int64_t l; !failed.load(std::memory_order_relaxed) && (l = next_layer.fetch_add(1)) < layers_;)
          for (int64_t k = 0; k < chunks; ++k) {
            if (l > 0 && !wait_for(done[static_cast<size_t>(l - 1)], k + 1, failed)) return;
            const int64_t t0 = wall_ns();
            task(l, k);
            alone.fetch_add(wall_ns() - t0, std::memory_order_relaxed);
            done[static_cast<size_t>(l)].store(k + 1, std::memory_order_release);
          }
      } catch (...) {
        failed.store(true);  // the others stop waiting; on_team rethrows this one
        throw;
      }
      wait_for(done[static_cast<size_t>(layers_ - 1)], chunks, failed);  // spinning, not asleep at the team's end
    };
    Team team(1);
    if (!gate_.pooled()) return lane();
    const int64_t start = wall_ns();
    on_team(plan->wave_threads, [&](int) { lane(); });
    gate_.report(wall_ns() - start, alone.load());
  }

 private:
  // Runs one step's primitive over the given pointers (h0/c0 in, final h/c out; c only for
  // the LSTM, and final states only where the step writes them).
  void launch(const Step& s, const float* src, float* dst, const float* h0, const float* c0, float* hn,
              float* cn) const {
    const bool lstm = cell_.cell == Cell::Lstm;
    Handles& h = thread_handles(s, lstm);
    h.src_layer.set_data_handle(const_cast<float*>(src));
    h.dst_layer.set_data_handle(dst);
    h.src_iter.set_data_handle(const_cast<float*>(h0));
    if (h.dst_iter) h.dst_iter.set_data_handle(hn);
    if (lstm) {
      h.src_iter_c.set_data_handle(const_cast<float*>(c0));
      if (h.dst_iter_c) h.dst_iter_c.set_data_handle(cn);
    }
    const memory scratchpad = sy_onednn::thread_scratch(s.scratch);
    try {
      execute(s.prim, {{DNNL_ARG_SRC_LAYER, &h.src_layer},
                       {DNNL_ARG_SRC_ITER, &h.src_iter},
                       {DNNL_ARG_SRC_ITER_C, lstm ? &h.src_iter_c : nullptr},
                       {DNNL_ARG_WEIGHTS_LAYER, &s.layer},
                       {DNNL_ARG_WEIGHTS_ITER, &s.iter},
                       {DNNL_ARG_BIAS, &s.bias},
                       {DNNL_ARG_DST_LAYER, &h.dst_layer},
                       {DNNL_ARG_DST_ITER, &h.dst_iter},
                       {DNNL_ARG_DST_ITER_C, lstm ? &h.dst_iter_c : nullptr},
                       {DNNL_ARG_SCRATCHPAD, &scratchpad}});
    } catch (const dnnl::error& e) {
      throw sy::Error("oneDNN RNN primitive: " + sy_onednn::error_message(e), sy_onednn::error_status(e));
    }
  }

  // The input's sizes and element strides, as (T, B, I) whatever batch_first says.
  struct Geometry {
    Shape shape;
    int64_t t = 0, b = 0, st = 0, sb = 0, sf = 0;
  };

  RnnKernel(const sy::Node& node, bool create) : cell_(*static_cast<const CellType*>(node.user_data)) {
    sy::declining([&] { parse(node); });
    if (!create) return;
    try {
      for (int64_t l = 0; l < layers_; ++l)
        for (int64_t d = 0; d < dirs_; ++d) packed_.push_back(pack(l, d));
    } catch (const dnnl::error& e) {
      throw sy::Unsupported("oneDNN has no RNN primitive for these weights: " + sy_onednn::error_message(e));
    }
  }

  void parse(const sy::Node& node) {
    const std::string op = node.op;
    const sy::Attrs& a = node.attrs;
    if (!a.has("batch_first") ||
        (node.num_inputs > 1 && node.inputs[1] != nullptr && node.inputs[1]->dtype.code == kDLInt))
      throw sy::Unsupported("a packed sequence (" + op + ".data, a batch_sizes input) is left to aten");
    std::vector<std::string> known{"has_biases",    "num_layers",  "dropout",   "train",
                                   "bidirectional", "batch_first", "params.len"};
    if (cell_.cell == Cell::Lstm) known.push_back("hx.len");
    check_attributes(node, known);
    const int64_t states = cell_.cell == Cell::Lstm ? a.i("hx.len", 2) : 1;
    if (states != cell_.states)
      throw sy::Unsupported("hx has " + std::to_string(states) + " tensors; expected " + std::to_string(cell_.states));
    has_biases_ = a.i("has_biases") != 0;
    layers_ = a.i("num_layers");
    dirs_ = a.i("bidirectional") != 0 ? 2 : 1;
    batch_first_ = a.i("batch_first") != 0;
    const double dropout = scalar_attr(a, "dropout", 0.0);
    const bool train = a.i("train", 0) != 0;
    if (layers_ < 1) throw sy::Unsupported("num_layers is " + std::to_string(layers_));
    if (train && dropout > 0 && layers_ > 1)
      throw sy::Unsupported("train=True with dropout " + number(dropout) + " between layers is left to aten");

    const int64_t params = static_cast<int64_t>(node.num_inputs) - 1 - states;
    if (a.has("params.len") && a.i("params.len") != params)
      throw sy::Unsupported("params.len is " + std::to_string(a.i("params.len")) + " but " + std::to_string(params) +
                            " inputs follow hx");
    const int64_t groups = layers_ * dirs_, want = has_biases_ ? 4 : 2;
    if (params < 0 || params != groups * want) {
      if (cell_.cell == Cell::Lstm && params == groups * (want + 1))
        throw sy::Unsupported("LSTM projections (proj_size) are left to aten");
      throw sy::Unsupported("'params' has " + std::to_string(params) + " tensors; expected " + std::to_string(want) +
                            " per layer and direction for num_layers=" + std::to_string(layers_));
    }
    const size_t needed = static_cast<size_t>(1 + states);
    for (size_t i = 0; i < node.num_inputs; ++i) {
      const DLTensor* t = node.inputs[i];
      if (t == nullptr) throw sy::Unsupported("input " + std::to_string(i) + " is absent");
      if (!is_f32(*t))
        throw sy::Unsupported("input " + std::to_string(i) + " is " + dtype_name(t->dtype) +
                              (t->device.device_type == kDLCPU ? "" : " off the CPU") +
                              "; the recurrent kernels take float32 (float64 is left to aten)");
      if (i >= needed && t->data == nullptr)
        throw sy::Unsupported("weights fed at run time (the kernel packs constants)");
    }
    const DLTensor& x = *node.inputs[0];
    if (x.ndim != 3) throw sy::Unsupported("input is " + std::to_string(x.ndim) + "-D; expected 3-D");
    features_ = x.shape[2];
    const DLTensor& w_hh0 = *node.inputs[needed + 1];
    if (w_hh0.ndim != 2) throw sy::Unsupported("w_hh is not 2-D");
    hidden_ = w_hh0.shape[1];
    if (hidden_ < 1) throw sy::Unsupported("hidden size " + std::to_string(hidden_));
    const int64_t gh = cell_.gates * hidden_;
    for (int64_t l = 0; l < layers_; ++l)
      for (int64_t d = 0; d < dirs_; ++d) {
        const size_t at = needed + static_cast<size_t>((l * dirs_ + d) * want);
        const std::string where = " of layer " + std::to_string(l) + (d ? " (reverse)" : "");
        auto expect = [&](size_t i, Shape shape, const char* name) {
          const DLTensor& t = *node.inputs[at + i];
          if (sy::shape_of(t) != shape)
            throw sy::Unsupported(std::string(name) + where + " is " + str(sy::shape_of(t)) + ", expected " +
                                  str(shape));
        };
        expect(0, {gh, layer_input(l)}, "w_ih");
        expect(1, {gh, hidden_}, "w_hh");
        if (has_biases_) {
          expect(2, {gh}, "b_ih");
          expect(3, {gh}, "b_hh");
        }
        std::array<Weight, 4> w{};
        for (size_t i = 0; i < static_cast<size_t>(want); ++i) w[i] = weight_of(*node.inputs[at + i]);
        weights_.push_back(w);
      }
    if (node.num_outputs < 1 || node.num_outputs > static_cast<size_t>(1 + cell_.states))
      throw sy::Unsupported(std::to_string(node.num_outputs) + " outputs; expected 1 to " +
                            std::to_string(1 + cell_.states));
    outputs_ = static_cast<int64_t>(node.num_outputs);
    geometry(node.inputs, node.num_inputs);  // shapes known at supports must fit
  }

  int64_t layer_input(int64_t l) const { return l == 0 ? features_ : dirs_ * hidden_; }

  Geometry geometry(const DLTensor* const* inputs, size_t n) const {
    const DLTensor* x = input_at(inputs, n, 0);
    if (x == nullptr || x->ndim != 3 || x->shape[2] != features_)
      throw sy::Error("input is " + (x ? str(sy::shape_of(*x)) : std::string("missing")) + "; expected 3-D with " +
                      std::to_string(features_) + " features");
    Geometry g;
    g.shape = sy::shape_of(*x);
    const Shape s = sy::strides_of(*x);
    const int bt = batch_first_ ? 0 : 1;
    g.t = x->shape[1 - bt];
    g.b = x->shape[bt];
    g.st = s[static_cast<size_t>(1 - bt)];
    g.sb = s[static_cast<size_t>(bt)];
    g.sf = s[2];
    if (g.t == 0) throw sy::Error("Expected sequence length to be larger than 0 in RNN (input " + str(g.shape) + ")");
    const Shape want{layers_ * dirs_, g.b, hidden_};
    for (int64_t k = 0; k < cell_.states; ++k) {
      const DLTensor* h = input_at(inputs, n, static_cast<size_t>(1 + k));
      if (h == nullptr || sy::shape_of(*h) != want)
        throw sy::Error(std::string(k ? "c0" : "h0") + " is " + (h ? str(sy::shape_of(*h)) : std::string("missing")) +
                        ", expected " + str(want));
    }
    return g;
  }

  Shape output_shape(size_t o, const Geometry& g) const {
    if (o == 0) return batch_first_ ? Shape{g.b, g.t, dirs_ * hidden_} : Shape{g.t, g.b, dirs_ * hidden_};
    return {layers_ * dirs_, g.b, hidden_};
  }

  // Floats of per-run scratch, at most: a dense input, dense hx, two layers' outputs, and
  // the states a wavefront's chunks hand on.
  int64_t scratch_floats(const Geometry& g) const {
    const int64_t buffers = layers_ > 2 ? 2 : layers_ - 1;
    return g.t * g.b * features_ + cell_.states * layers_ * dirs_ * g.b * hidden_ +
           buffers * g.t * g.b * dirs_ * hidden_ + 2 * cell_.states * layers_ * g.b * hidden_;
  }

  // The primitive for layer l, direction d over these layouts (weights in whatever
  // layout oneDNN likes best).
  Made make(int64_t l, int64_t d, const memory::desc& src, const memory::desc& iter, const memory::desc& dst,
            const memory::desc& dst_iter, const memory::desc& dst_iter_c) const {
    dnnl::engine& eng = sy_onednn::cpu_engine();
    const int64_t g = cell_.gates, h = hidden_;
    const memory::desc layer_any({1, 1, layer_input(l), g, h}, kF32, memory::format_tag::any);
    const memory::desc iter_any({1, 1, h, g, h}, kF32, memory::format_tag::any);
    const memory::desc bias({1, 1, cell_.bias_gates, h}, kF32, memory::format_tag::ldgo);
    const auto dir =
        d == 0 ? dnnl::rnn_direction::unidirectional_left2right : dnnl::rnn_direction::unidirectional_right2left;
    const auto inference = dnnl::prop_kind::forward_inference;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-run scratch: runs may overlap
    auto finish = [](const auto& pd, dnnl::primitive prim) {
      return Made{std::move(prim), pd.weights_layer_desc(), pd.weights_iter_desc(), pd.scratchpad_desc()};
    };
    switch (cell_.cell) {
      case Cell::Lstm: {
        const dnnl::lstm_forward::primitive_desc pd(dnnl::lstm_forward::desc(inference, dir, src, iter, iter, layer_any,
                                                                             iter_any, bias, dst, dst_iter, dst_iter_c),
                                                    attr, eng);
        return finish(pd, dnnl::lstm_forward(pd));
      }
      case Cell::Gru: {
        const dnnl::lbr_gru_forward::primitive_desc pd(
            dnnl::lbr_gru_forward::desc(inference, dir, src, iter, layer_any, iter_any, bias, dst, dst_iter), attr,
            eng);
        return finish(pd, dnnl::lbr_gru_forward(pd));
      }
      case Cell::RnnTanh:
      case Cell::RnnRelu: {
        const auto act = cell_.cell == Cell::RnnTanh ? dnnl::algorithm::eltwise_tanh : dnnl::algorithm::eltwise_relu;
        const dnnl::vanilla_rnn_forward::primitive_desc pd(
            dnnl::vanilla_rnn_forward::desc(inference, act, dir, src, iter, layer_any, iter_any, bias, dst, dst_iter),
            attr, eng);
        return finish(pd, dnnl::vanilla_rnn_forward(pd));
      }
    }
    throw sy::Error("unknown cell", SY_ERROR_INTERNAL);
  }

  // Layer l, direction d's weight (0: w_ih, 1: w_hh) as oneDNN's ldigo [K, G, H] in its
  // gate order, reordered into `md`.
  sy_onednn::ConstantMemory reorder_weight(int64_t l, int64_t d, int which, const memory::desc& md) const {
    const Weight& w = weights_[static_cast<size_t>(l * dirs_ + d)][static_cast<size_t>(which)];
    const int64_t k = which == 0 ? layer_input(l) : hidden_, g = cell_.gates, h = hidden_;
    std::vector<float> user(static_cast<size_t>(k * g * h));
    for (int64_t gate = 0; gate < g; ++gate)
      for (int64_t o = 0; o < h; ++o) {
        const float* row = w.data + (cell_.perm[gate] * h + o) * w.rs;
        for (int64_t i = 0; i < k; ++i) user[static_cast<size_t>((i * g + gate) * h + o)] = row[i * w.cs];
      }
    dnnl::engine& eng = sy_onednn::cpu_engine();
    memory from({{1, 1, k, g, h}, kF32, memory::format_tag::ldigo}, eng, user.data());
    sy_onednn::ConstantMemory to = sy_onednn::constant_memory(md);
    dnnl::stream s(eng);
    dnnl::reorder(from, to.mem).execute(s, from, to.mem);
    s.wait();
    return to;
  }

  // At create: every layer and direction's weights in the layout its primitive asks for
  // (a one-step, one-row shape: the layout does not depend on it), and its bias.
  Packed pack(int64_t l, int64_t d) const {
    const int64_t h = hidden_;
    const memory::desc src({1, 1, layer_input(l)}, kF32, memory::format_tag::tnc);
    const memory::desc iter({1, 1, 1, h}, kF32, memory::format_tag::ldnc);
    const memory::desc dst({1, 1, h}, kF32, memory::format_tag::tnc);
    const bool states = outputs_ > 1;  // oneDNN's LSTM writes both final states or neither
    const Made m = make(l, d, src, iter, dst, states ? iter : memory::desc(),
                        states && cell_.cell == Cell::Lstm ? iter : memory::desc());
    Packed p;
    p.layer_md = m.layer_md;
    p.iter_md = m.iter_md;
    sy_onednn::ConstantMemory layer = reorder_weight(l, d, 0, m.layer_md), iter_w = reorder_weight(l, d, 1, m.iter_md);
    p.layer = layer.mem;
    p.iter = iter_w.mem;
    p.owners = {layer.owner, iter_w.owner};
    // oneDNN's bias rows: b_ih + b_hh per gate; the GRU keeps b_hn (PyTorch's gate 2 of
    // b_hh) apart as its fourth row, adding only b_in to the third.
    const int64_t gb = cell_.bias_gates;
    auto bias = std::make_shared<std::vector<float>>(static_cast<size_t>(gb * h), 0.0f);
    if (has_biases_) {
      const std::array<Weight, 4>& w = weights_[static_cast<size_t>(l * dirs_ + d)];
      auto at = [&](const Weight& b, int64_t gate, int64_t o) { return b.data[(gate * h + o) * b.rs]; };
      for (int64_t gate = 0; gate < cell_.gates; ++gate)
        for (int64_t o = 0; o < h; ++o) {
          const int64_t pg = cell_.perm[gate];
          const bool gru_n = cell_.cell == Cell::Gru && gate == 2;
          (*bias)[static_cast<size_t>(gate * h + o)] = at(w[2], pg, o) + (gru_n ? 0.0f : at(w[3], pg, o));
          if (gru_n) (*bias)[static_cast<size_t>(3 * h + o)] = at(w[3], pg, o);
        }
    }
    p.bias = memory({{1, 1, gb, h}, kF32, memory::format_tag::ldgo}, sy_onednn::cpu_engine(), bias->data());
    p.owners.push_back(bias);
    return p;
  }

  // The primitives for one input shape signature.
  std::shared_ptr<const Plan> build(const Geometry& g) const {
    auto plan = std::make_shared<Plan>();
    const int64_t h = hidden_, dh = dirs_ * h;
    plan->compact_input = g.sf != 1 || g.st < 0 || g.sb < 0;
    // One step's multiply-adds decide the threads (kTeamStepWork).
    const double step = static_cast<double>(g.b * cell_.gates * hidden_) *
                        static_cast<double>(std::max(features_, dirs_ * hidden_) + hidden_);
    const int threads = sy::intra_op_threads();
    const bool wide = step >= kTeamStepWork;
    plan->threads = wide ? threads : 1;
    plan->parallel_dirs = dirs_ == 2 && threads >= 2 && !wide;
    if (dirs_ == 1 && layers_ >= 2 && layers_ <= static_cast<int64_t>(kMaxWaveLayers) && threads >= 2 && !wide) {
      // Chunks: (chunks + layers - 1) waves of one chunk's steps plus a call's overhead
      // each, least at about sqrt(T * step / overhead) chunks.
      const double best = std::sqrt(static_cast<double>(g.t) * step / kChunkOverheadWork);
      const int64_t chunks = std::min<int64_t>({static_cast<int64_t>(best + 0.5), kMaxChunks, g.t});
      if (chunks >= 2) {
        plan->chunk = (g.t + chunks - 1) / chunks;
        plan->chunks = (g.t + plan->chunk - 1) / plan->chunk;
        plan->wave_threads = static_cast<int>(std::min<int64_t>(threads, layers_));
      }
    }
    // oneDNN's RNN primitives fix their thread count when made (the OpenMP team size of
    // the thread that makes them), so each is made with the team it will run with: one
    // made under a team of 2 and run on one thread of a team of 1 still starts a team of
    // 2, and two directions at once then ran 15x slower each.
    Team team(plan->threads);
    const memory::desc iter({1, 1, g.b, h}, kF32, memory::format_tag::ldnc);
    // Sequence views of `t` steps: the input as given (or dense), the output ([T, B, D * H]
    // or [B, T, D * H], each direction its own H columns), and between layers [T, B, D * H].
    auto input = [&](int64_t t) {
      return plan->compact_input ? memory::desc({t, g.b, features_}, kF32, memory::format_tag::tnc)
                                 : memory::desc({t, g.b, features_}, kF32, {g.st, g.sb, g.sf});
    };
    auto out = [&](int64_t t) {
      return batch_first_ ? memory::desc({t, g.b, h}, kF32, {dh, g.t * dh, 1})
                          : memory::desc({t, g.b, h}, kF32, {g.b * dh, dh, 1});
    };
    auto between = [&](int64_t t, int64_t width) { return memory::desc({t, g.b, width}, kF32, {g.b * dh, dh, 1}); };
    // Layer l, direction d over t steps; `states` also writes the final states where the
    // node has no output for them (a chunk hands them to the next).
    auto add = [&](int64_t l, int64_t d, int64_t t, bool states) {
      const memory::desc dst = l + 1 == layers_ ? out(t) : between(t, h);
      // (oneDNN's LSTM writes both final states or neither: c_n without an output goes to scratch)
      const memory::desc dst_iter = states || outputs_ > 1 ? iter : memory::desc();
      const memory::desc dst_iter_c = cell_.cell == Cell::Lstm && (states || outputs_ > 1) ? iter : memory::desc();
      Made m;
      if (l == 0 && !plan->compact_input) {
        try {
          m = make(l, d, input(t), iter, dst, dst_iter, dst_iter_c);
        } catch (const dnnl::error&) {
          plan->compact_input = true;  // strides oneDNN does not take: a dense copy first
        }
      }
      const memory::desc src = l == 0 ? input(t) : between(t, dh);
      if (!m.prim) m = make(l, d, src, iter, dst, dst_iter, dst_iter_c);
      Step s;
      s.prim = m.prim;
      s.src_layer = src;
      s.dst_layer = dst;
      s.src_iter = iter;
      s.dst_iter = dst_iter;
      s.dst_iter_c = dst_iter_c;
      s.scratch = m.scratch;
      s.dst_offset = d * h;
      s.id = next_step_id++;
      const Packed& p = packed_[static_cast<size_t>(l * dirs_ + d)];
      s.bias = p.bias;
      s.owners = p.owners;
      if (m.layer_md == p.layer_md) {
        s.layer = p.layer;
      } else {  // a layout of its own at this shape
        sy_onednn::ConstantMemory w = reorder_weight(l, d, 0, m.layer_md);
        s.layer = w.mem;
        s.owners.push_back(w.owner);
      }
      if (m.iter_md == p.iter_md) {
        s.iter = p.iter;
      } else {
        sy_onednn::ConstantMemory w = reorder_weight(l, d, 1, m.iter_md);
        s.iter = w.mem;
        s.owners.push_back(w.owner);
      }
      plan->steps.push_back(std::move(s));
    };
    for (int64_t l = 0; l < layers_; ++l)
      if (plan->chunks > 1) {  // per layer: a chunk, and the last chunk (maybe shorter)
        add(l, 0, plan->chunk, true);
        add(l, 0, g.t - (plan->chunks - 1) * plan->chunk, true);
      } else {
        for (int64_t d = 0; d < dirs_; ++d) add(l, d, g.t, false);
      }
    return plan;
  }

  CellType cell_;
  bool has_biases_ = true, batch_first_ = false;
  int64_t layers_ = 1, dirs_ = 1, features_ = 0, hidden_ = 0, outputs_ = 1;
  std::vector<std::array<Weight, 4>> weights_;  // per layer and direction: the host's constants
  std::vector<Packed> packed_;                  // per layer and direction, read-only after create
  mutable sy_onednn::ShapeCache<Plan> plans_;   // thread-safe
  PoolGate gate_;                               // thread-safe
};

}  // namespace

void add_rnn_kernels(KernelList& list) {
  list.push_back(sy::kernel<RnnKernel>("aten::lstm", "linalg", {sy::kFloat32}, &kLstm));
  list.push_back(sy::kernel<RnnKernel>("aten::gru", "linalg", {sy::kFloat32}, &kGru));
  list.push_back(sy::kernel<RnnKernel>("aten::rnn_tanh", "linalg", {sy::kFloat32}, &kRnnTanh));
  list.push_back(sy::kernel<RnnKernel>("aten::rnn_relu", "linalg", {sy::kFloat32}, &kRnnRelu));
}

}  // namespace sy_linalg

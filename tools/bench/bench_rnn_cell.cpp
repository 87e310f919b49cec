// oneDNN alone, on one recurrent layer: what the linalg plugin's recurrent kernels rest on
// (plugins/linalg/ops_rnn.cpp). Two ways to run an LSTM or GRU layer over a sequence:
//   oneDNN    its RNN primitive (lstm_forward, lbr_gru_forward), weights reordered once
//   own loop  one sgemm for the whole sequence's input projection (x @ W_ih^T + b), then
//             per step one sgemm h @ W_hh^T for all gates and the gates in a loop the
//             compiler vectorises (target_clones avx512f / avx2, a Cephes-style exp)
// One thread (what the plugin gives each primitive at these sizes); sequence [T, B, F],
// hidden H, zero initial state. The 10th percentile of --runs runs each, ways one after
// the other. A benchmark, not a test.
//
//   bench_rnn_cell --steps 64 --features 24 --runs 300
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

std::vector<float> random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-0.2f, 0.2f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

template <typename F>
double p10_us(F&& f, int runs) {
  for (int i = 0; i < 10; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 10];
}

#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

inline float exp_approx(float x) {  // Cephes expf, branch-free for the vectoriser
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = __builtin_floorf(x * 1.44269504088896341f + 0.5f);
  x = x - n * 0.693359375f + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * x + 1.3981999507e-3f;
  y = y * x + 8.3334519073e-3f;
  y = y * x + 4.1665795894e-2f;
  y = y * x + 1.6666665459e-1f;
  y = y * x + 5.0000001201e-1f;
  y = y * x * x + x + 1.0f;
  const int e = (static_cast<int>(n) + 127) << 23;
  float p;
  std::memcpy(&p, &e, sizeof p);
  return y * p;
}

VECTOR_CLONES void sigmoid(float* v, int n) {
  for (int j = 0; j < n; ++j) v[j] = 1.0f / (1.0f + exp_approx(-v[j]));
}
VECTOR_CLONES void tanh_(float* v, int n) {
  for (int j = 0; j < n; ++j) v[j] = 2.0f / (1.0f + exp_approx(-2.0f * v[j])) - 1.0f;
}

// PyTorch's LSTM gates i, f, g, o over one row of [4H] pre-activations.
VECTOR_CLONES void lstm_gates(float* g, float* c, float* h, float* tmp, int batch, int hidden) {
  for (int b = 0; b < batch; ++b) {
    float* gb = g + b * 4 * hidden;
    float* cb = c + b * hidden;
    float* hb = h + b * hidden;
    sigmoid(gb, 2 * hidden);
    tanh_(gb + 2 * hidden, hidden);
    sigmoid(gb + 3 * hidden, hidden);
    for (int j = 0; j < hidden; ++j) tmp[j] = cb[j] = gb[hidden + j] * cb[j] + gb[j] * gb[2 * hidden + j];
    tanh_(tmp, hidden);
    for (int j = 0; j < hidden; ++j) hb[j] = gb[3 * hidden + j] * tmp[j];
  }
}

// PyTorch's GRU gates r, z, n: x-side pre-activations (with b_ih, and b_hr, b_hz folded
// in) and h-side ones (without bias; b_hn apart, inside the reset product).
VECTOR_CLONES void gru_gates(float* gx, const float* gh, const float* b_hn, float* h, int batch, int hidden) {
  for (int b = 0; b < batch; ++b) {
    float* x = gx + b * 3 * hidden;
    const float* y = gh + b * 3 * hidden;
    float* hb = h + b * hidden;
    for (int j = 0; j < 2 * hidden; ++j) x[j] += y[j];
    sigmoid(x, 2 * hidden);
    for (int j = 0; j < hidden; ++j) x[2 * hidden + j] += x[j] * (y[2 * hidden + j] + b_hn[j]);
    tanh_(x + 2 * hidden, hidden);
    for (int j = 0; j < hidden; ++j) hb[j] = (1.0f - x[hidden + j]) * x[2 * hidden + j] + x[hidden + j] * hb[j];
  }
}

double own_loop(bool lstm, int steps, int batch, int features, int hidden, int runs, std::mt19937& rng) {
  const int g = (lstm ? 4 : 3) * hidden;
  const std::vector<float> w_ih = random(static_cast<size_t>(g * features), rng),
                           w_hh = random(static_cast<size_t>(g * hidden), rng),
                           bias = random(static_cast<size_t>(g), rng), b_hn = random(static_cast<size_t>(hidden), rng),
                           x = random(static_cast<size_t>(steps * batch * features), rng);
  std::vector<float> pre(static_cast<size_t>(steps * batch * g)), h(static_cast<size_t>(batch * hidden)), c(h.size()),
      gh(static_cast<size_t>(batch * g)), y(static_cast<size_t>(steps * batch * hidden)),
      tmp(static_cast<size_t>(hidden));
  return p10_us(
      [&] {
        for (int r = 0; r < steps * batch; ++r) std::copy(bias.begin(), bias.end(), pre.begin() + r * g);
        dnnl_sgemm('N', 'T', steps * batch, g, features, 1.f, x.data(), features, w_ih.data(), features, 1.f,
                   pre.data(), g);
        std::fill(h.begin(), h.end(), 0.f);
        std::fill(c.begin(), c.end(), 0.f);
        for (int t = 0; t < steps; ++t) {
          float* p = pre.data() + t * batch * g;
          if (lstm) {
            dnnl_sgemm('N', 'T', batch, g, hidden, 1.f, h.data(), hidden, w_hh.data(), hidden, 1.f, p, g);
            lstm_gates(p, c.data(), h.data(), tmp.data(), batch, hidden);
          } else {
            dnnl_sgemm('N', 'T', batch, g, hidden, 1.f, h.data(), hidden, w_hh.data(), hidden, 0.f, gh.data(), g);
            gru_gates(p, gh.data(), b_hn.data(), h.data(), batch, hidden);
          }
          std::copy(h.begin(), h.end(), y.begin() + t * batch * hidden);
        }
      },
      runs);
}

double onednn(bool lstm, int steps, int batch, int features, int hidden, int runs, std::mt19937& rng) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const int gates = lstm ? 4 : 3;
  const memory::desc src({steps, batch, features}, kF32, tag::tnc), dst({steps, batch, hidden}, kF32, tag::tnc),
      iter({1, 1, batch, hidden}, kF32, tag::ldnc), bias({1, 1, 4, hidden}, kF32, tag::ldgo),
      layer_any({1, 1, features, gates, hidden}, kF32, tag::any),
      iter_any({1, 1, hidden, gates, hidden}, kF32, tag::any);
  const auto dir = dnnl::rnn_direction::unidirectional_left2right;
  const auto inference = dnnl::prop_kind::forward_inference;
  dnnl::primitive prim;
  memory::desc layer_md, iter_md;
  if (lstm) {
    dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(inference, dir, src, iter, iter, layer_any, iter_any, bias, dst, iter, iter), eng);
    prim = dnnl::lstm_forward(pd), layer_md = pd.weights_layer_desc(), iter_md = pd.weights_iter_desc();
  } else {
    dnnl::lbr_gru_forward::primitive_desc pd(
        dnnl::lbr_gru_forward::desc(inference, dir, src, iter, layer_any, iter_any, bias, dst, iter), eng);
    prim = dnnl::lbr_gru_forward(pd), layer_md = pd.weights_layer_desc(), iter_md = pd.weights_iter_desc();
  }
  std::vector<float> w_l = random(static_cast<size_t>(features * gates * hidden), rng),
                     w_i = random(static_cast<size_t>(hidden * gates * hidden), rng),
                     b = random(static_cast<size_t>(4 * hidden), rng),
                     x = random(static_cast<size_t>(steps * batch * features), rng),
                     y(static_cast<size_t>(steps * batch * hidden)), h0(static_cast<size_t>(batch * hidden)),
                     hn(h0.size()), cn(h0.size());
  memory user_l({{1, 1, features, gates, hidden}, kF32, tag::ldigo}, eng, w_l.data()),
      user_i({{1, 1, hidden, gates, hidden}, kF32, tag::ldigo}, eng, w_i.data()), packed_l(layer_md, eng),
      packed_i(iter_md, eng);
  dnnl::reorder(user_l, packed_l).execute(s, user_l, packed_l);
  dnnl::reorder(user_i, packed_i).execute(s, user_i, packed_i);
  s.wait();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC_LAYER, memory(src, eng, x.data())},
                                       {DNNL_ARG_SRC_ITER, memory(iter, eng, h0.data())},
                                       {DNNL_ARG_WEIGHTS_LAYER, packed_l},
                                       {DNNL_ARG_WEIGHTS_ITER, packed_i},
                                       {DNNL_ARG_BIAS, memory(bias, eng, b.data())},
                                       {DNNL_ARG_DST_LAYER, memory(dst, eng, y.data())},
                                       {DNNL_ARG_DST_ITER, memory(iter, eng, hn.data())}};
  if (lstm) {
    args[DNNL_ARG_SRC_ITER_C] = memory(iter, eng, h0.data());
    args[DNNL_ARG_DST_ITER_C] = memory(iter, eng, cn.data());
  }
  return p10_us(
      [&] {
        prim.execute(s, args);
        s.wait();
      },
      runs);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oneDNN's RNN primitive against a loop of our own, one LSTM / GRU layer, one thread"};
  int steps = 64, features = 24, runs = 300;
  std::vector<int> batches{1, 8};
  app.add_option("--steps", steps, "sequence length (default 64)");
  app.add_option("--features", features, "input features (default 24)");
  app.add_option("--batches", batches, "batch sizes (default 1 8)");
  app.add_option("--runs", runs, "timed runs per way (default 300)");
  CLI11_PARSE(app, argc, argv);
  omp_set_num_threads(1);
  std::mt19937 rng(1);
  std::printf("| cell | hidden | batch | oneDNN us | own loop us |\n|---|---|---|---|---|\n");
  for (bool lstm : {true, false})
    for (int batch : batches) {
      const int hidden = lstm ? 48 : 40;  // the plain zoo's LstmTagger and GruSeq
      std::printf("| %s | %d | %d | %.0f | %.0f |\n", lstm ? "LSTM" : "GRU", hidden, batch,
                  onednn(lstm, steps, batch, features, hidden, runs, rng),
                  own_loop(lstm, steps, batch, features, hidden, runs, rng));
    }
  return 0;
}

// Conformance cases: recurrent layers and cells, against LibTorch's nn.LSTM / nn.GRU /
// nn.RNN modules (the C++ frontend's, which hold their weights in PyTorch's order), and
// one hand-written LSTM recurrence that pins down the parameter layout independently.
//
// Node layout (aten_ops.hpp): lstm.input = [input, h0, c0, params...] with the attribute
// `hx.len` = 2 (optional: the table assumes 2); gru / rnn_* = [input, h0, params...].
#include "aten_harness.hpp"

#include <torch/nn/modules/rnn.h>
#include <torch/nn/utils/rnn.h>

using namespace sy_test;

namespace {

struct Config {
  int64_t layers;
  bool bidirectional, batch_first, biases, initial_state;
};
const Config kConfigs[] = {
    {1, false, false, true, false}, {1, false, true, true, true},  {2, true, false, true, true},
    {2, true, true, false, false},  {3, false, false, true, true}, {1, true, true, true, false},
};
std::string describe(const Config& c) {
  return "layers=" + std::to_string(c.layers) + " bidirectional=" + std::to_string(c.bidirectional) +
         " batch_first=" + std::to_string(c.batch_first) + " biases=" + std::to_string(c.biases) +
         " initial_state=" + std::to_string(c.initial_state);
}
Attrs rnn_attrs(const Config& c) {
  return Attrs()
      .b("has_biases", c.biases)
      .i("num_layers", c.layers)
      .f("dropout", 0.0)
      .b("train", false)
      .b("bidirectional", c.bidirectional)
      .b("batch_first", c.batch_first);
}
template <typename Options>
Options options(const Config& c, int64_t in, int64_t hidden) {
  return Options(in, hidden)
      .num_layers(c.layers)
      .bidirectional(c.bidirectional)
      .batch_first(c.batch_first)
      .bias(c.biases);
}
// Without an initial state PyTorch passes zeros it creates, so the node always has hx.
at::Tensor initial(const Config& c, at::ScalarType dt, int64_t batch, int64_t hidden) {
  int64_t rows = c.layers * (c.bidirectional ? 2 : 1);
  return c.initial_state ? rnd(dt, {rows, batch, hidden}) : at::zeros({rows, batch, hidden}, dt);
}
std::vector<at::Tensor> concat(std::vector<at::Tensor> a, const std::vector<at::Tensor>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

constexpr int64_t kIn = 5, kHidden = 4, kBatch = 3, kSteps = 6;

}  // namespace

OP_CASE("aten::lstm", "module_configs", at::kFloat, at::kDouble) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(describe(c));
    torch::nn::LSTM m(options<torch::nn::LSTMOptions>(c, kIn, kHidden));
    m->to(dt);
    at::Tensor x = c.batch_first ? rnd(dt, {kBatch, kSteps, kIn}) : rnd(dt, {kSteps, kBatch, kIn});
    at::Tensor h0 = initial(c, dt, kBatch, kHidden), c0 = initial(c, dt, kBatch, kHidden);
    auto [y, state] = m->forward(x, std::make_tuple(h0, c0));
    std::vector<at::Tensor> want = {y, std::get<0>(state), std::get<1>(state)};
    std::vector<at::Tensor> in = concat({x, h0, c0}, m->all_weights());
    check("aten::lstm", in, Attrs(rnn_attrs(c)).i("hx.len", 2), want);
    check("aten::lstm", in, rnn_attrs(c), want);  // hand-written graph: hx.len derived
  }
}
OP_CASE("aten::lstm", "proj_size_strided_input", at::kFloat, at::kDouble) {
  Config c{2, true, false, true, true};
  torch::nn::LSTM m(options<torch::nn::LSTMOptions>(c, kIn, kHidden).proj_size(2));
  m->to(dt);
  at::Tensor x = rnd(dt, {kBatch, kSteps, kIn}).transpose(0, 1);  // [T, B, F], not contiguous
  at::Tensor h0 = rnd(dt, {4, kBatch, 2}), c0 = rnd(dt, {4, kBatch, kHidden});
  auto [y, state] = m->forward(x, std::make_tuple(h0, c0));
  check("aten::lstm", concat({x, h0, c0}, m->all_weights()), Attrs(rnn_attrs(c)).i("hx.len", 2),
        std::vector<at::Tensor>{y, std::get<0>(state), std::get<1>(state)});
}
// The parameter layout, checked against a recurrence written out here.
OP_CASE("aten::lstm", "hand_written_recurrence", at::kDouble) {
  at::Tensor x = rnd(dt, {kSteps, kBatch, kIn}), h = rnd(dt, {1, kBatch, kHidden}),
             cell = rnd(dt, {1, kBatch, kHidden});
  at::Tensor w_ih = rnd(dt, {4 * kHidden, kIn}), w_hh = rnd(dt, {4 * kHidden, kHidden});
  at::Tensor b_ih = rnd(dt, {4 * kHidden}), b_hh = rnd(dt, {4 * kHidden});
  Result r = run("aten::lstm", {x, h, cell, w_ih, w_hh, b_ih, b_hh}, rnn_attrs({1, false, false, true, true}), 3);
  ASSERT_TRUE(r.ok()) << r.message;
  at::Tensor ht = h[0], ct = cell[0];
  std::vector<at::Tensor> ys;
  for (int64_t t = 0; t < kSteps; ++t) {
    auto g = (x[t].matmul(w_ih.t()) + b_ih + ht.matmul(w_hh.t()) + b_hh).chunk(4, 1);
    ct = g[1].sigmoid() * ct + g[0].sigmoid() * g[2].tanh();  // gates i, f, g, o
    ht = g[3].sigmoid() * ct.tanh();
    ys.push_back(ht);
  }
  EXPECT_TRUE(same(r.outputs[0], at::stack(ys)));
  EXPECT_TRUE(same(r.outputs[1], ht.unsqueeze(0)));
  EXPECT_TRUE(same(r.outputs[2], ct.unsqueeze(0)));
}

// gru / rnn_tanh / rnn_relu share the node layout [input, h0, params...].
template <typename Module, typename Options>
void check_single_state(const std::string& op, at::ScalarType dt, bool relu) {
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(describe(c));
    Options o = options<Options>(c, kIn, kHidden);
    if constexpr (std::is_same_v<Options, torch::nn::RNNOptions>)
      if (relu) o.nonlinearity(torch::kReLU);
    Module m(o);
    m->to(dt);
    at::Tensor x = c.batch_first ? rnd(dt, {kBatch, kSteps, kIn}) : rnd(dt, {kSteps, kBatch, kIn});
    at::Tensor h0 = initial(c, dt, kBatch, kHidden);
    auto [y, hn] = m->forward(x, h0);
    check(op, concat({x, h0}, m->all_weights()), rnn_attrs(c), std::vector<at::Tensor>{y, hn});
  }
}
OP_CASE("aten::gru", "module_configs", at::kFloat, at::kDouble) {
  check_single_state<torch::nn::GRU, torch::nn::GRUOptions>("aten::gru", dt, false);
}
OP_CASE("aten::rnn_tanh", "module_configs", at::kFloat, at::kDouble) {
  check_single_state<torch::nn::RNN, torch::nn::RNNOptions>("aten::rnn_tanh", dt, false);
}
OP_CASE("aten::rnn_relu", "module_configs", at::kFloat, at::kDouble) {
  check_single_state<torch::nn::RNN, torch::nn::RNNOptions>("aten::rnn_relu", dt, true);
}

// ---- packed sequences (the .data overloads): [input data, batch_sizes (int64), hx, params]
namespace {
torch::nn::utils::rnn::PackedSequence packed(at::ScalarType dt) {
  at::Tensor padded = rnd(dt, {kSteps, kBatch, kIn}), lengths = at::tensor({6, 4, 2}, at::kLong);
  return torch::nn::utils::rnn::pack_padded_sequence(padded, lengths);
}
Attrs packed_attrs(bool bidirectional) {
  return Attrs()
      .b("has_biases", true)
      .i("num_layers", 2)
      .f("dropout", 0.0)
      .b("train", false)
      .b("bidirectional", bidirectional);
}
}  // namespace
OP_CASE("aten::lstm", "packed_sequence", at::kFloat, at::kDouble) {
  torch::nn::LSTM m(torch::nn::LSTMOptions(kIn, kHidden).num_layers(2).bidirectional(true));
  m->to(dt);
  auto p = packed(dt);
  at::Tensor h0 = rnd(dt, {4, kBatch, kHidden}), c0 = rnd(dt, {4, kBatch, kHidden});
  auto [y, state] = m->forward_with_packed_input(p, std::make_tuple(h0, c0));
  check("aten::lstm", concat({p.data(), p.batch_sizes(), h0, c0}, m->all_weights()),
        Attrs(packed_attrs(true)).i("hx.len", 2),
        std::vector<at::Tensor>{y.data(), std::get<0>(state), std::get<1>(state)});
}
OP_CASE("aten::gru", "packed_sequence", at::kFloat, at::kDouble) {
  torch::nn::GRU m(torch::nn::GRUOptions(kIn, kHidden).num_layers(2));
  m->to(dt);
  auto p = packed(dt);
  at::Tensor h0 = rnd(dt, {2, kBatch, kHidden});
  auto [y, hn] = m->forward_with_packed_input(p, h0);
  check("aten::gru", concat({p.data(), p.batch_sizes(), h0}, m->all_weights()), packed_attrs(false),
        std::vector<at::Tensor>{y.data(), hn});
}
OP_CASE("aten::rnn_tanh", "packed_sequence", at::kFloat, at::kDouble) {
  auto p = packed(dt);
  at::Tensor h0 = rnd(dt, {2, kBatch, kHidden});
  std::vector<at::Tensor> w = {rnd(dt, {kHidden, kIn}), rnd(dt, {kHidden, kHidden}), rnd(dt, {kHidden}),
                               rnd(dt, {kHidden}),      rnd(dt, {kHidden, kHidden}), rnd(dt, {kHidden, kHidden}),
                               rnd(dt, {kHidden}),      rnd(dt, {kHidden})};
  auto r = at::rnn_tanh(p.data(), p.batch_sizes(), h0, w, true, 2, 0.0, false, false);
  check("aten::rnn_tanh", concat({p.data(), p.batch_sizes(), h0}, w), packed_attrs(false),
        std::vector<at::Tensor>{std::get<0>(r), std::get<1>(r)});
  auto rr = at::rnn_relu(p.data(), p.batch_sizes(), h0, w, true, 2, 0.0, false, false);
  check("aten::rnn_relu", concat({p.data(), p.batch_sizes(), h0}, w), packed_attrs(false),
        std::vector<at::Tensor>{std::get<0>(rr), std::get<1>(rr)});
}

// ---- cells
OP_CASE("aten::lstm_cell", "module", at::kFloat, at::kDouble) {
  torch::nn::LSTMCell m(kIn, kHidden);
  m->to(dt);
  at::Tensor x = rnd(dt, {kBatch, kIn}), h = rnd(dt, {kBatch, kHidden}), c = rnd(dt, {kBatch, kHidden});
  auto [h1, c1] = m->forward(x, std::make_tuple(h, c));
  std::vector<at::Tensor> in = {x, h, c, m->weight_ih, m->weight_hh, m->bias_ih, m->bias_hh};
  check("aten::lstm_cell", in, {}, std::vector<at::Tensor>{h1, c1});
  check("aten::lstm_cell", in, Attrs().i("hx.len", 2), std::vector<at::Tensor>{h1, c1});
  // Without biases: hx's length cannot come from the input count, the table's [2] gives it.
  auto nb = at::lstm_cell(x, {h, c}, m->weight_ih, m->weight_hh);
  check("aten::lstm_cell", {x, h, c, m->weight_ih, m->weight_hh}, {},
        std::vector<at::Tensor>{std::get<0>(nb), std::get<1>(nb)});
}
OP_CASE("aten::gru_cell", "module", at::kFloat, at::kDouble) {
  torch::nn::GRUCell m(kIn, kHidden);
  m->to(dt);
  at::Tensor x = rnd(dt, {kBatch, kIn}), h = rnd(dt, {kBatch, kHidden});
  check("aten::gru_cell", {x, h, m->weight_ih, m->weight_hh, m->bias_ih, m->bias_hh}, {}, m->forward(x, h));
}
OP_CASE("aten::rnn_tanh_cell", "module", at::kFloat, at::kDouble) {
  torch::nn::RNNCell m(kIn, kHidden);
  m->to(dt);
  at::Tensor x = rnd(dt, {kBatch, kIn}), h = rnd(dt, {kBatch, kHidden});
  check("aten::rnn_tanh_cell", {x, h, m->weight_ih, m->weight_hh, m->bias_ih, m->bias_hh}, {}, m->forward(x, h));
}
OP_CASE("aten::rnn_relu_cell", "module", at::kFloat, at::kDouble) {
  torch::nn::RNNCell m(torch::nn::RNNCellOptions(kIn, kHidden).nonlinearity(torch::kReLU));
  m->to(dt);
  at::Tensor x = rnd(dt, {kBatch, kIn}), h = rnd(dt, {kBatch, kHidden});
  check("aten::rnn_relu_cell", {x, h, m->weight_ih, m->weight_hh, m->bias_ih, m->bias_hh}, {}, m->forward(x, h));
}

// ---- binding: what the plugin declines, with the reason
TEST(AtenRnn, DeclinesBadListsAndParams) {
  at::Tensor x = rnd(at::kFloat, {kSteps, kBatch, kIn}), h = rnd(at::kFloat, {1, kBatch, kHidden});
  std::vector<at::Tensor> w = {rnd(at::kFloat, {4 * kHidden, kIn}), rnd(at::kFloat, {4 * kHidden, kHidden}),
                               rnd(at::kFloat, {4 * kHidden}), rnd(at::kFloat, {4 * kHidden})};
  Attrs a = rnn_attrs({1, false, false, true, true});
  std::vector<at::Tensor> in = concat({x, h, h}, w);
  EXPECT_TRUE(supports("aten::lstm", in, a, 3).ok());
  struct Case {
    const char* what;
    Result r;
    const char* reason;
  } cases[] = {
      {"hx.len past the inputs", supports("aten::lstm", in, Attrs(a).i("hx.len", 9), 3), "hx.len"},
      {"hx.len not an int", supports("aten::lstm", in, Attrs(a).s("hx.len", "2"), 3), "hx.len"},
      {"params that don't split", supports("aten::lstm", concat({x, h, h}, {w[0], w[1], w[2]}), a, 3), "params"},
      {"empty hx", supports("aten::lstm", in, Attrs(a).i("hx.len", 0), 3), "empty"},
      {"gru has no hx list", supports("aten::gru", concat({x, h}, {w[0], w[1]}), Attrs(a).i("hx.len", 1), 2), "hx.len"},
      {"num_layers beyond the params", supports("aten::lstm", in, Attrs(a).i("num_layers", 2), 3), "params"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.r.status, SY_ERROR_UNSUPPORTED) << c.what;
    EXPECT_NE(c.r.message.find(c.reason), std::string::npos) << c.what << ": " << c.r.message;
  }
}

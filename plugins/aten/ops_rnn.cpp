// aten plugin: recurrent layers (nn.LSTM / nn.GRU / nn.RNN and their cells).
// One table line per ATen overload; see aten_ops.hpp for the schema conventions.
//
// lstm's schema has two tensor lists, `hx` (h0, c0) and `params`: the node gives hx's
// length as the attribute `hx.len`; without it the table's `Tensor[2] hx` applies. PyTorch
// always passes hx (zeros it creates when the caller gave no state), so hx is never empty.
// `params` holds, per layer and direction, w_ih, w_hh[, b_ih, b_hh][, w_hr (LSTM proj_size)].
#include "aten_ops.hpp"

namespace sy_aten {
namespace {

constexpr DtypeMask kF32_64 = bit(at::kFloat) | bit(at::kDouble);

// Declines at capability time what ATen would only reject at run time: a params list
// that doesn't split into num_layers x directions groups of weights.
template <size_t kParams, size_t kLayers, size_t kBias, size_t kBidir, bool kLstm>
void check_params(const Bound& b) {
  int64_t layers = b.args[kLayers].value.i;
  int64_t groups = layers * (b.args[kBidir].value.i ? 2 : 1);
  int64_t count = b.args[kParams].count;
  int64_t per = groups > 0 ? count / groups : 0;
  int64_t want = b.args[kBias].value.i ? 4 : 2;
  if (layers < 1 || per * groups != count || (per != want && !(kLstm && per == want + 1)))
    throw sy::Unsupported("'params' has " + std::to_string(count) + " tensors; expected " + std::to_string(want) +
                          (kLstm ? " (or " + std::to_string(want + 1) + " with proj_size)" : "") +
                          " per layer and direction for num_layers=" + std::to_string(layers));
}

}  // namespace

void register_rnn_ops(Registry& r) {
  r.family("rnn");
  // ---- whole layers over a padded sequence ([T, B, F], or [B, T, F] with batch_first)
  r.def(
       "lstm.input(Tensor input, Tensor[2] hx, Tensor[] params, bool has_biases, int num_layers, "
       "float dropout=0.0, bool train=False, bool bidirectional, bool batch_first) -> "
       "(Tensor, Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::lstm(c.t(0), c.list(1), c.list(2), c.b(3), c.i(4), c.f(5), c.b(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<2, 4, 3, 7, true>);
  r.def(
       "gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
       "float dropout=0.0, bool train=False, bool bidirectional, bool batch_first) -> "
       "(Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::gru(c.t(0), c.t(1), c.list(2), c.b(3), c.i(4), c.f(5), c.b(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<2, 4, 3, 7, false>);
  r.def(
       "rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
       "float dropout=0.0, bool train=False, bool bidirectional, bool batch_first) -> "
       "(Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::rnn_tanh(c.t(0), c.t(1), c.list(2), c.b(3), c.i(4), c.f(5), c.b(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<2, 4, 3, 7, false>);
  r.def(
       "rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
       "float dropout=0.0, bool train=False, bool bidirectional, bool batch_first) -> "
       "(Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::rnn_relu(c.t(0), c.t(1), c.list(2), c.b(3), c.i(4), c.f(5), c.b(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<2, 4, 3, 7, false>);

  // ---- packed sequences (pack_padded_sequence): data [sum(lengths), F], batch_sizes int64
  r.def(
       "lstm.data(Tensor data, Tensor<long> batch_sizes, Tensor[2] hx, Tensor[] params, "
       "bool has_biases, int num_layers, float dropout=0.0, bool train=False, bool bidirectional) "
       "-> (Tensor, Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::lstm(c.t(0), c.t(1), c.list(2), c.list(3), c.b(4), c.i(5), c.f(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<3, 5, 4, 8, true>);
  r.def(
       "gru.data(Tensor data, Tensor<long> batch_sizes, Tensor hx, Tensor[] params, "
       "bool has_biases, int num_layers, float dropout=0.0, bool train=False, bool bidirectional) "
       "-> (Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::gru(c.t(0), c.t(1), c.t(2), c.list(3), c.b(4), c.i(5), c.f(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<3, 5, 4, 8, false>);
  r.def(
       "rnn_tanh.data(Tensor data, Tensor<long> batch_sizes, Tensor hx, Tensor[] params, "
       "bool has_biases, int num_layers, float dropout=0.0, bool train=False, bool bidirectional) "
       "-> (Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::rnn_tanh(c.t(0), c.t(1), c.t(2), c.list(3), c.b(4), c.i(5), c.f(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<3, 5, 4, 8, false>);
  r.def(
       "rnn_relu.data(Tensor data, Tensor<long> batch_sizes, Tensor hx, Tensor[] params, "
       "bool has_biases, int num_layers, float dropout=0.0, bool train=False, bool bidirectional) "
       "-> (Tensor, Tensor)",
       kF32_64,
       [](const Call& c) {
         return outs(at::rnn_relu(c.t(0), c.t(1), c.t(2), c.list(3), c.b(4), c.i(5), c.f(6), c.b(7), c.b(8)));
       })
      .with_check(check_params<3, 5, 4, 8, false>);

  // ---- single steps (nn.LSTMCell / GRUCell / RNNCell)
  r.def(
      "lstm_cell(Tensor input, Tensor[2] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
      "Tensor? b_hh=None) -> (Tensor, Tensor)",
      kF32_64, [](const Call& c) { return outs(at::lstm_cell(c.t(0), c.list(1), c.t(2), c.t(3), c.ot(4), c.ot(5))); });
  r.def(
      "gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
      "Tensor? b_hh=None) -> Tensor",
      kF32_64, [](const Call& c) { return at::gru_cell(c.t(0), c.t(1), c.t(2), c.t(3), c.ot(4), c.ot(5)); });
  r.def(
      "rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
      "Tensor? b_hh=None) -> Tensor",
      kF32_64, [](const Call& c) { return at::rnn_tanh_cell(c.t(0), c.t(1), c.t(2), c.t(3), c.ot(4), c.ot(5)); });
  r.def(
      "rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
      "Tensor? b_hh=None) -> Tensor",
      kF32_64, [](const Call& c) { return at::rnn_relu_cell(c.t(0), c.t(1), c.t(2), c.t(3), c.ot(4), c.ot(5)); });
}

}  // namespace sy_aten

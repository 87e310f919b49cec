// `plan` without --inputs: shapes with symbolic dimensions ([B, 197, 768]).
//
// A plan is per input-shape signature, so the host plans at sample shapes, then again with
// each named input dimension changed. An output dimension that follows a named input
// dimension is printed with that name; one that changes in another way is printed as "?".
#include "plan_shapes.hpp"

#include "tensor_json.hpp"

#include <switchyard/error.hpp>

#include <cctype>
#include <map>
#include <set>

namespace switchyard::cli {
namespace {

// "[B, 3, H, W]" -> {"B", "3", "H", "W"}; "[..., 768]" -> {"...", "768"}; what follows
// the shape ("with s0 in 1..64") is not a dim.
std::vector<std::string> spec_tokens(const std::string& spec) {
  std::vector<std::string> out;
  std::string token;
  for (char c : spec) {
    if (c == '[' || c == ' ') continue;
    if (c == ',' || c == ']') {
      if (!token.empty()) out.push_back(token);
      token.clear();
      if (c == ']') break;
    } else {
      token += c;
    }
  }
  return out;
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// A named dimension's sample value: the example shape's, else a batch of 2 or a size of `size`.
int64_t sample_value(const std::string& name, int64_t size) { return name == "B" || name == "N" ? 2 : size; }

Tensor sample_like(const Tensor& t, const std::vector<int64_t>& shape) {
  Tensor out = Tensor::empty(t.dtype(), shape);
  const size_t elem = (t.dtype().bits + 7) / 8;
  unsigned char* dst = static_cast<unsigned char*>(out.raw_data());
  const unsigned char* src = static_cast<const unsigned char*>(t.raw_data());
  const size_t n = static_cast<size_t>(out.numel()) * elem, m = static_cast<size_t>(t.numel()) * elem;
  for (size_t k = 0; k < n; ++k) dst[k] = m == 0 ? 0 : src[k % m];  // the sample's own values, repeated
  return out;
}

}  // namespace

SymbolicPlan plan_symbolically(const Model& model) {
  SymbolicPlan result;
  result.specs = model.input_specs();
  const auto examples = model.input_shapes();
  const auto names = model.input_names();
  // Each input's dims as tokens, and which named dims there are.
  std::vector<std::vector<std::string>> tokens;
  for (size_t i = 0; i < result.specs.size(); ++i) {
    tokens.push_back(spec_tokens(result.specs[i]));
    for (const std::string& t : tokens.back())
      if (t == "...") {
        bool has_example = !examples[i].empty();
        for (int64_t d : examples[i]) has_example = has_example && d >= 0;
        if (!has_example)
          throw Error(ErrorKind::Input, "input '" + names[i] + "' takes " + result.specs[i] +
                                            ", which has no rank to plan with: pass --inputs IN.pt");
        tokens.back() = {};
        for (int64_t d : examples[i]) tokens.back().push_back(std::to_string(d));  // planned as given
        break;
      }
  }
  auto shapes_with = [&](int64_t size, const std::map<std::string, int64_t>& bump) {
    std::vector<std::vector<int64_t>> shapes(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i)
      for (size_t d = 0; d < tokens[i].size(); ++d) {
        const std::string& t = tokens[i][d];
        int64_t v = is_number(t)                                   ? std::stoll(t)
                    : d < examples[i].size() && examples[i][d] > 0 ? examples[i][d]
                                                                   : sample_value(t, size);
        if (auto it = bump.find(t); it != bump.end()) v += it->second;
        shapes[i].push_back(v);
      }
    return shapes;
  };
  auto inputs_at = [&](const std::vector<std::vector<int64_t>>& shapes) {
    std::vector<Tensor> inputs = sample_inputs(model);
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = sample_like(inputs[i], shapes[i]);
    return inputs;
  };
  // A sample the model takes: spatial and sequence dims at 64, else 224 (a ViT's).
  std::string last_error;
  for (int64_t size : {64, 224}) {
    try {
      result.sample_shapes = shapes_with(size, {});
      result.plan = model.plan(inputs_at(result.sample_shapes));
      result.size = size;
      break;
    } catch (const Error& e) {
      last_error = e.what();
      result.plan.clear();
    }
  }
  if (result.plan.empty())
    throw Error(ErrorKind::Input, "no sample shapes to plan with (" + last_error + "): pass --inputs IN.pt");
  // Each named dim bumped alone (by a distinct amount, so that names cannot be confused).
  std::set<std::string> dim_names;
  for (const auto& t : tokens)
    for (const std::string& name : t)
      if (!is_number(name)) dim_names.insert(name);
  std::vector<std::vector<std::vector<int64_t>>> base;  // per node, its output shapes
  for (const PlanEntry& e : result.plan) base.push_back(e.output_shapes);
  result.symbolic.assign(base.size(), {});
  for (size_t n = 0; n < base.size(); ++n)
    for (const auto& s : base[n]) {
      std::vector<std::string> dims;
      for (int64_t d : s) dims.push_back(std::to_string(d));
      result.symbolic[n].push_back(dims);
    }
  auto value_of = [&](const std::string& name) -> int64_t {
    for (size_t i = 0; i < tokens.size(); ++i)
      for (size_t d = 0; d < tokens[i].size(); ++d)
        if (tokens[i][d] == name) return result.sample_shapes[i][d];
    return -1;
  };
  int64_t delta = 1;
  for (const std::string& name : dim_names) {
    const std::map<std::string, int64_t> bump{{name, delta}};
    std::vector<PlanEntry> moved;
    try {
      moved = model.plan(inputs_at(shapes_with(result.size, bump)));
    } catch (const Error&) {
      result.fixed_names.push_back(name);  // the model takes only the sample's value
      continue;
    }
    for (size_t n = 0; n < base.size() && n < moved.size(); ++n)
      for (size_t o = 0; o < base[n].size() && o < moved[n].output_shapes.size(); ++o)
        for (size_t d = 0; d < base[n][o].size() && d < moved[n].output_shapes[o].size(); ++d) {
          const int64_t a = base[n][o][d], b = moved[n].output_shapes[o][d];
          if (a == b) continue;
          std::string& text = result.symbolic[n][o][d];
          const bool follows = b - a == delta && a == value_of(name);
          text = follows && is_number(text) ? name : "?";  // two names, or another rule: "?"
        }
    ++delta;
  }
  return result;
}

std::string joined_dims(const std::vector<std::string>& dims) {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + dims[d];
  return s + "]";
}

}  // namespace switchyard::cli

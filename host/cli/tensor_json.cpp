#include "tensor_json.hpp"

#include <switchyard/half.hpp>

#include <nlohmann/json.hpp>

#include <switchyard/sdk.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace switchyard::cli {
namespace {

using nlohmann::json;

template <typename T>
void fill_from(const json& data, Tensor& t) {
  T* out = t.data<T>();
  for (size_t i = 0; i < data.size(); ++i) out[i] = data[i].get<T>();
}

}  // namespace

double element(const Tensor& t, int64_t i) {
  const DLDataType d = t.dtype();
  const void* p = t.raw_data();
  if (d.lanes != 1) return std::nan("");
  if (d.code == kDLFloat && d.bits == 32) return static_cast<const float*>(p)[i];
  if (d.code == kDLFloat && d.bits == 64) return static_cast<const double*>(p)[i];
  if (d.code == kDLFloat && d.bits == 16) return half_to_float(static_cast<const uint16_t*>(p)[i]);
  if (d.code == kDLBfloat && d.bits == 16) return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
  if (d.code == kDLInt && d.bits == 64) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  if (d.code == kDLInt && d.bits == 32) return static_cast<const int32_t*>(p)[i];
  if (d.code == kDLInt && d.bits == 16) return static_cast<const int16_t*>(p)[i];
  if (d.code == kDLInt && d.bits == 8) return static_cast<const int8_t*>(p)[i];
  if ((d.code == kDLUInt || d.code == SY_DL_BOOL) && d.bits == 8) return static_cast<const uint8_t*>(p)[i];
  return std::nan("");
}

std::vector<Tensor> read_tensors_json(const std::string& path, const std::vector<std::string>& names) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::Io, path + ": cannot open inputs file");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::Io, path + ": not valid JSON: " + e.what());
  }
  std::vector<Tensor> out;
  for (const std::string& name : names) {
    if (!doc.contains(name)) throw Error(ErrorKind::Input, path + ": no entry for model input '" + name + "'");
    const json& e = doc[name];
    try {
      DLDataType dtype;
      if (!parse_dtype(e.at("dtype").get<std::string>(), &dtype))
        throw Error(ErrorKind::Input, path + ": input '" + name + "': unknown dtype " + e.at("dtype").dump());
      std::vector<int64_t> shape = e.at("shape").get<std::vector<int64_t>>();
      const json& data = e.at("data");
      // Counted before allocating: a shape far bigger than its data is a mistake, not a request.
      uint64_t numel = 1;
      bool too_big = false;
      for (int64_t d : shape) {
        if (d < 0)
          throw Error(ErrorKind::Input,
                      path + ": input '" + name + "': negative dimension in shape " + shape_string(shape));
        too_big = too_big || __builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel);
      }
      if (!data.is_array() || too_big || data.size() != numel)
        throw Error(ErrorKind::Input, path + ": input '" + name + "': shape " + shape_string(shape) + " needs " +
                                          (too_big ? std::string("more than 2^64") : std::to_string(numel)) +
                                          " values in \"data\"");
      Tensor t = Tensor::empty(dtype, shape);
      if (dtype.code == kDLFloat && dtype.bits == 32)
        fill_from<float>(data, t);
      else if (dtype.code == kDLFloat && dtype.bits == 64)
        fill_from<double>(data, t);
      else if (dtype.code == kDLInt && dtype.bits == 64)
        fill_from<int64_t>(data, t);
      else if (dtype.code == kDLInt && dtype.bits == 32)
        fill_from<int32_t>(data, t);
      else
        throw Error(ErrorKind::Input, path + ": input '" + name + "': dtype " + dtype_name(dtype) +
                                          " is not supported in JSON input files");
      out.push_back(t);
    } catch (const json::exception& e) {
      throw Error(ErrorKind::Input, path + ": input '" + name + "': " + e.what());
    }
  }
  // An entry the model does not take is a misspelt name or the wrong file: never ignored.
  if (doc.is_object())
    for (const auto& item : doc.items())
      if (std::find(names.begin(), names.end(), item.key()) == names.end()) {
        std::string taken;
        for (const std::string& n : names) taken += (taken.empty() ? "'" : ", '") + n + "'";
        throw Error(ErrorKind::Input,
                    path + ": entry '" + item.key() + "' is not an input of the model (it takes " + taken + ")");
      }
  return out;
}

void write_tensors_json(const std::string& path, const std::vector<std::string>& names,
                        const std::vector<Tensor>& tensors) {
  json doc = json::object();
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor t = tensors[i].contiguous();
    json data = json::array();
    for (int64_t k = 0; k < t.numel(); ++k) data.push_back(element(t, k));
    doc[names[i]] = {{"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}, {"data", data}};
  }
  std::ofstream out(path);
  if (!out) throw Error(ErrorKind::Io, path + ": cannot write");
  out << doc.dump(1) << "\n";
}

std::vector<Tensor> sample_inputs(const Model& model) {
  std::vector<Tensor> out;
  auto shapes = model.input_shapes();
  auto dtypes = model.input_dtypes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<int64_t> shape = shapes[i];
    for (int64_t& d : shape)
      if (d < 0) d = 1;
    const DLDataType d = sample_dtype(dtypes[i]);  // float32 where any dtype goes
    Tensor t = Tensor::empty(d, shape);
    for (int64_t k = 0; k < t.numel(); ++k) {  // a fixed, varied pattern: reproducible runs
      double v = std::sin(0.37 * static_cast<double>(k + 1) + static_cast<double>(i));
      if (d.code == kDLFloat && d.bits == 32)
        t.data<float>()[k] = static_cast<float>(v);
      else if (d.code == kDLFloat && d.bits == 64)
        t.data<double>()[k] = v;
      else if (d.code == kDLFloat && d.bits == 16)
        t.data<uint16_t>()[k] = float_to_half(static_cast<float>(v));
      else if (d.code == kDLBfloat && d.bits == 16)
        t.data<uint16_t>()[k] = float_to_bfloat16(static_cast<float>(v));
      else if (d.code == kDLInt && d.bits == 64)
        t.data<int64_t>()[k] = k % 7;
      else if (d.code == kDLInt && d.bits == 32)
        t.data<int32_t>()[k] = static_cast<int32_t>(k % 7);
      else if (d.code == kDLInt && d.bits == 16)
        t.data<int16_t>()[k] = static_cast<int16_t>(k % 7);
      else if (d.code == kDLInt && d.bits == 8)
        t.data<int8_t>()[k] = static_cast<int8_t>(k % 7);
      else if (d.code == kDLUInt && d.bits == 8)
        t.data<uint8_t>()[k] = static_cast<uint8_t>(k % 7);
      else if (d.code == SY_DL_BOOL && d.bits == 8)
        t.data<uint8_t>()[k] = static_cast<uint8_t>(v > 0);
    }
    out.push_back(t);
  }
  return out;
}

std::string preview(const Tensor& t, int limit) {
  Tensor c = t.contiguous();
  std::ostringstream s;
  s.precision(5);
  s << "[";
  int64_t n = std::min<int64_t>(c.numel(), limit);
  for (int64_t k = 0; k < n; ++k) s << (k ? ", " : "") << element(c, k);
  if (c.numel() > n) s << ", ...";
  s << "]";
  return s.str();
}

}  // namespace switchyard::cli

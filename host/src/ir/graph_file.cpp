// Reader and writer of the portable graph file (docs/graph-format.md). The reader is
// written for hostile input: every field is type-checked before use, every size is
// overflow-checked, and nlohmann exceptions become switchyard::Error naming the file.
#include "ir/graph_file.hpp"
#include "ir/graph_file_json.hpp"

#include <switchyard/error.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace switchyard::ir {
namespace {

using graph_file_detail::Json;
using graph_file_detail::JsonFieldReader;

constexpr const char* kFormatName = "switchyard-graph";

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

struct AlignedBuffer {
  void* data = nullptr;
  size_t size = 0;
  ~AlignedBuffer() { std::free(data); }
};

class GraphFileReader : private JsonFieldReader {
 public:
  explicit GraphFileReader(std::string path) : JsonFieldReader(std::move(path)) {}

  Graph read() {
    const std::string text = read_text();
    const Json root = parse_json(text);
    if (!root.is_object()) fail_io("the top level must be a JSON object");
    check_format(root);
    load_weights(root);
    Graph graph;
    read_inputs(root, graph);
    read_constants(root, graph);
    read_nodes(root, graph);
    read_outputs(root, graph);
    try {
      validate(graph);
    } catch (const Error& e) {
      throw Error(e.kind(), path_ + ": " + e.what());
    }
    return graph;
  }

 private:
  [[noreturn]] void fail_graph(const std::string& message) const {
    throw Error(ErrorKind::Graph, path_ + ": " + message);
  }

  std::string read_text() const {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path_, error))
      fail_io("cannot open graph file (missing or not a regular file)");
    std::ifstream in(path_, std::ios::binary);
    if (!in) fail_io("cannot open graph file");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail_io("error while reading graph file");
    return text;
  }

  // --- header and weights ---

  void check_format(const Json& root) {
    auto format = root.find("format");
    if (format == root.end() || !format->is_string() || format->get_ref<const std::string&>() != kFormatName)
      fail_io(std::string("not a switchyard graph file (expected \"format\": \"") + kFormatName + "\")");
    const int64_t version = as_int(field(root, "version", "graph file"), "field 'version'");
    if (version > kGraphFormatVersion)
      fail_io("graph format version " + std::to_string(version) + " is newer than this switchyard reads (version " +
              std::to_string(kGraphFormatVersion) + "); upgrade switchyard or re-export the model as version " +
              std::to_string(kGraphFormatVersion));
    if (version < 1) fail_io("invalid graph format version " + std::to_string(version));
    version_ = version;
  }

  void load_weights(const Json& root) {
    auto it = root.find("weights");
    if (it == root.end()) return;
    const std::string name = as_string(*it, "field 'weights'");
    weights_path_ = (std::filesystem::path(path_).parent_path() / name).string();
    // Directories and devices open fine as streams, so insist on a regular file first.
    std::error_code error;
    const bool regular = std::filesystem::is_regular_file(weights_path_, error);
    const uintmax_t size = regular ? std::filesystem::file_size(weights_path_, error) : 0;
    if (!regular || error) fail_io("cannot open weights file '" + weights_path_ + "' (missing or not a regular file)");
    std::ifstream in(weights_path_, std::ios::binary);
    if (!in) fail_io("cannot open weights file '" + weights_path_ + "'");
    const auto end = static_cast<std::streamsize>(size);
    auto buffer = std::make_shared<AlignedBuffer>();
    buffer->size = static_cast<size_t>(end);
    const size_t padded = (buffer->size / kWeightsAlignment + 1) * kWeightsAlignment;
    buffer->data = std::aligned_alloc(kWeightsAlignment, padded);
    if (buffer->data == nullptr) fail_io("out of memory reading weights file '" + weights_path_ + "'");
    in.read(static_cast<char*>(buffer->data), end);  // the one read of the whole file
    if (in.gcount() != end) fail_io("error while reading weights file '" + weights_path_ + "'");
    weights_ = std::move(buffer);
  }

  // A tensor descriptor {dtype, shape, offset, nbytes} → a view into the shared weights buffer.
  Tensor read_tensor(const Json& desc, const std::string& what) const {
    if (!desc.is_object()) fail_io(what + " must be an object with dtype, shape, offset and nbytes");
    const DLDataType dtype = as_dtype(field(desc, "dtype", what), what + ": field 'dtype'");
    std::vector<int64_t> shape = as_shape(field(desc, "shape", what), what + ": field 'shape'", 0);
    const uint64_t offset = as_size(field(desc, "offset", what), what + ": field 'offset'");
    const uint64_t nbytes = as_size(field(desc, "nbytes", what), what + ": field 'nbytes'");
    uint64_t expected = dtype_size(dtype);
    int64_t elements = 1;  // non-zero dims only: Tensor::numel()/strides() multiply in int64_t
    for (int64_t dim : shape)
      if (__builtin_mul_overflow(expected, static_cast<uint64_t>(dim), &expected) ||
          (dim != 0 && __builtin_mul_overflow(elements, dim, &elements)))
        fail_io(what + ": shape " + shape_string(shape) + " is too large");
    if (expected != nbytes)
      fail_io(what + ": nbytes is " + std::to_string(nbytes) + " but " + dtype_name(dtype) + " " + shape_string(shape) +
              " needs " + std::to_string(expected));
    if (offset % kWeightsAlignment != 0)
      fail_io(what + ": offset " + std::to_string(offset) + " is not a multiple of " +
              std::to_string(kWeightsAlignment));
    if (!weights_) fail_io(what + " needs a weights file, but the graph file has no 'weights' field");
    if (offset > weights_->size || nbytes > weights_->size - offset)
      fail_io(what + ": bytes " + std::to_string(offset) + ".." + std::to_string(offset + nbytes) +
              " lie beyond the end of weights file '" + weights_path_ + "' (" + std::to_string(weights_->size) +
              " bytes; truncated?)");
    char* data = static_cast<char*>(weights_->data) + offset;
    std::shared_ptr<AlignedBuffer> owner = weights_;
    return Tensor::from_blob(data, dtype, std::move(shape), {}, [owner] {});
  }

  // --- graph sections ---

  // Registers a value name, rejecting one already defined (saying what defined it first).
  void define(const std::string& name, ValueId id, const std::string& where, const char* role, std::string origin) {
    if (name.empty()) fail_graph(where + role + " has an empty name");
    auto [it, inserted] = names_.emplace(name, std::make_pair(id, std::move(origin)));
    if (!inserted) fail_graph(where + role + " '" + name + "' is already defined as " + it->second.second);
  }

  void read_inputs(const Json& root, Graph& graph) {
    const Json& inputs = as_array(field(root, "inputs", "graph file"), "field 'inputs'");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Json& input = inputs[i];
      std::string what = "input #" + std::to_string(i);
      if (!input.is_object()) fail_io(what + " must be an object with name, dtype and shape");
      const std::string name = as_string(field(input, "name", what), what + ": field 'name'");
      what = "input '" + name + "'";
      // "any": the model leaves the input's dtype free (kAnyDtype); a constant never has it.
      const Json& dtype_field = field(input, "dtype", what);
      const DLDataType dtype = dtype_field == "any" ? kAnyDtype : as_dtype(dtype_field, what + ": field 'dtype'");
      auto shape_it = input.find("shape");
      std::vector<int64_t> shape;
      if (shape_it != input.end()) shape = as_shape(*shape_it, what + ": field 'shape'", -1);
      const ValueId id = graph.add_input(name, dtype, std::move(shape));
      Value& value = graph.values[static_cast<size_t>(id)];
      // Version 1 wrote [] for an unknown shape; from version 2 on, a present shape gives the rank.
      value.rank_known = version_ >= 2 ? shape_it != input.end() : !value.shape.empty();
      if (auto it = input.find("dim_names"); it != input.end()) {
        for (const Json& d : as_array(*it, what + ": field 'dim_names'"))
          value.dim_names.push_back(as_string(d, what + ": field 'dim_names' entry"));
        if (!value.rank_known || value.dim_names.size() != value.shape.size())
          fail_io(what + ": field 'dim_names' has " + std::to_string(value.dim_names.size()) +
                  " names for a shape of " + (value.rank_known ? std::to_string(value.shape.size()) : "unknown") +
                  " dimensions");
      }
      if (auto it = input.find("dim_ranges"); it != input.end()) read_dim_ranges(*it, what, value);
      if (auto it = input.find("example_shape"); it != input.end()) {
        value.example_shape = as_shape(*it, what + ": field 'example_shape'", 0);
        if (value.rank_known && value.example_shape.size() != value.shape.size())
          fail_io(what + ": field 'example_shape' " + shape_string(value.example_shape) +
                  " does not have the rank of " + "its shape " + shape_string(value.shape));
      }
      define(name, id, "", "graph input", "a graph input");
    }
  }

  // [[min, max], ...], one per dimension; max null = unbounded.
  void read_dim_ranges(const Json& j, const std::string& what, Value& value) const {
    const std::string field_name = what + ": field 'dim_ranges'";
    for (const Json& r : as_array(j, field_name)) {
      if (!r.is_array() || r.size() != 2) fail_io(field_name + " entries must be [min, max]");
      DimRange range;
      range.min = as_int(r[0], field_name + " min");
      if (!r[1].is_null()) range.max = as_int(r[1], field_name + " max");
      if (range.min < 0 || range.max < range.min) fail_io(field_name + " has an empty or negative range");
      value.dim_ranges.push_back(range);
    }
    if (!value.rank_known || value.dim_ranges.size() != value.shape.size())
      fail_io(field_name + " has " + std::to_string(value.dim_ranges.size()) + " ranges for a shape of " +
              (value.rank_known ? std::to_string(value.shape.size()) : "unknown") + " dimensions");
  }

  void read_constants(const Json& root, Graph& graph) {
    auto it = root.find("constants");
    if (it == root.end()) return;
    const Json& constants = as_array(*it, "field 'constants'");
    for (size_t i = 0; i < constants.size(); ++i) {
      const Json& constant = constants[i];
      std::string what = "constant #" + std::to_string(i);
      if (!constant.is_object()) fail_io(what + " must be an object");
      const std::string name = as_string(field(constant, "name", what), what + ": field 'name'");
      what = "constant '" + name + "'";
      define(name, graph.add_constant(name, read_tensor(constant, what)), "", "constant", "a constant");
    }
  }

  // A bound attribute {"ref": "value", "kind": "ints"} (version 2): the value's name is
  // resolved once every node output is defined (pending_refs_).
  Attribute read_bound_attribute(const Json& j, const std::string& what, size_t node, size_t attr) {
    if (version_ < 2) fail_io(what + ": bound attributes ({\"ref\": ...}) need graph format version 2");
    if (j.size() != 2 || !j.contains("kind"))
      fail_io(what + " must be {\"ref\": <value name>, \"kind\": \"int\" | \"float\" | \"ints\" | \"floats\"}");
    const std::string ref = as_string(j["ref"], what + ": field 'ref'");
    const std::string kind = as_string(j["kind"], what + ": field 'kind'");
    const AttrKind k = kind == "int"      ? AttrKind::Int
                       : kind == "float"  ? AttrKind::Float
                       : kind == "ints"   ? AttrKind::Ints
                       : kind == "floats" ? AttrKind::Floats
                                          : AttrKind::None;
    if (k == AttrKind::None)
      fail_io(what + ": unknown bound kind '" + kind + "' (expected int, float, ints or floats)");
    pending_refs_.push_back({node, attr, ref});
    return Attribute::of_ref(0, k);
  }

  Attribute read_attribute(const Json& j, const std::string& what) const {
    if (!j.is_object() || j.size() != 1)
      fail_io(what + " must be an object with exactly one key naming its kind, e.g. {\"int\": 3}");
    const std::string& kind = j.begin().key();
    const Json& value = j.begin().value();
    const std::string value_what = what + " (" + kind + ")";
    if (kind == "none") {
      if (!value.is_null()) fail_io(value_what + " must be null");
      return Attribute::none();
    }
    if (kind == "int") return Attribute::of_int(as_int(value, value_what));
    if (kind == "float") return Attribute::of_float(as_float(value, value_what));
    if (kind == "string") return Attribute::of_string(as_string(value, value_what));
    if (kind == "ints") {
      std::vector<int64_t> ints;
      for (const Json& v : as_array(value, value_what)) ints.push_back(as_int(v, value_what + " entry"));
      return Attribute::of_ints(std::move(ints));
    }
    if (kind == "floats") {
      std::vector<double> floats;
      for (const Json& v : as_array(value, value_what)) floats.push_back(as_float(v, value_what + " entry"));
      return Attribute::of_floats(std::move(floats));
    }
    if (kind == "tensor") return Attribute::of_tensor(read_tensor(value, value_what));
    fail_io(what + ": unknown attribute kind '" + kind +
            "' (expected none, int, float, string, ints, floats or tensor)");
  }

  // Nodes are added in two passes so a node may use a value produced by a later node in the
  // file; validate() then puts them in order.
  void read_nodes(const Json& root, Graph& graph) {
    const Json& nodes = as_array(field(root, "nodes", "graph file"), "field 'nodes'");
    std::vector<const Json*> node_inputs;
    node_inputs.reserve(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n) {
      const Json& node = nodes[n];
      std::string what = "node #" + std::to_string(n);
      if (!node.is_object()) fail_io(what + " must be an object");
      const std::string name = as_string(field(node, "name", what), what + ": field 'name'");
      what = "node '" + name + "'";
      const std::string op = as_string(field(node, "op", what), what + ": field 'op'");
      std::string module_path;
      if (auto it = node.find("module_path"); it != node.end())
        module_path = as_string(*it, what + ": field 'module_path'");
      Attributes attrs;
      if (auto it = node.find("attrs"); it != node.end()) {
        if (!it->is_object()) fail_io(what + ": field 'attrs' must be an object");
        for (auto attr = it->begin(); attr != it->end(); ++attr) {
          const std::string attr_what = what + ": attribute '" + attr.key() + "'";
          const bool bound = attr.value().is_object() && attr.value().contains("ref");
          attrs.emplace_back(attr.key(), bound ? read_bound_attribute(attr.value(), attr_what, n, attrs.size())
                                               : read_attribute(attr.value(), attr_what));
        }
      }
      std::vector<std::string> output_names;
      for (const Json& output : as_array(field(node, "outputs", what), what + ": field 'outputs'"))
        output_names.push_back(as_string(output, what + ": output name"));
      node_inputs.push_back(&as_array(field(node, "inputs", what), what + ": field 'inputs'"));
      const int32_t index = graph.add_node(name, op, {}, output_names, std::move(attrs), std::move(module_path));
      for (ValueId id : graph.nodes[static_cast<size_t>(index)].outputs)
        define(graph.values[static_cast<size_t>(id)].name, id, what + ": ", "output", "an output of " + what);
    }
    for (size_t n = 0; n < nodes.size(); ++n) {
      Node& node = graph.nodes[n];
      for (const Json& input : *node_inputs[n]) {
        if (input.is_null()) {
          node.inputs.push_back(kNoValue);
          continue;
        }
        const std::string name = as_string(input, "node '" + node.name + "': input name (or null)");
        auto it = names_.find(name);
        if (it == names_.end()) fail_graph("node '" + node.name + "': input '" + name + "' is not defined");
        node.inputs.push_back(it->second.first);
      }
    }
    for (const PendingRef& p : pending_refs_) {
      Node& node = graph.nodes[p.node];
      auto it = names_.find(p.name);
      if (it == names_.end())
        fail_graph("node '" + node.name + "': attribute '" + node.attrs[p.attr].first + "' is bound to '" + p.name +
                   "', which is not defined");
      node.attrs[p.attr].second.ref = it->second.first;
    }
  }

  void read_outputs(const Json& root, Graph& graph) {
    for (const Json& output : as_array(field(root, "outputs", "graph file"), "field 'outputs'")) {
      const std::string name = as_string(output, "graph output name");
      auto it = names_.find(name);
      if (it == names_.end()) fail_graph("graph output '" + name + "' is not defined");
      graph.outputs.push_back(it->second.first);
    }
  }

  struct PendingRef {
    size_t node, attr;
    std::string name;
  };
  int64_t version_ = kGraphFormatVersion;
  std::vector<PendingRef> pending_refs_;
  std::string weights_path_;
  std::shared_ptr<AlignedBuffer> weights_;
  std::unordered_map<std::string, std::pair<ValueId, std::string>> names_;  // value → (id, origin)
};

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

Json float_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

class GraphFileWriter {
 public:
  GraphFileWriter(const Graph& graph, std::string path) : graph_(graph), path_(std::move(path)) {}

  void write() {
    Json root;
    root["format"] = kFormatName;
    root["version"] = kGraphFormatVersion;
    const std::string weights_path = weights_path_for(path_);
    root["weights"] = std::filesystem::path(weights_path).filename().string();
    root["inputs"] = write_inputs();
    root["outputs"] = write_outputs();
    root["constants"] = write_constants();
    root["nodes"] = write_nodes();
    std::string text;
    try {
      text = root.dump(2) + "\n";
    } catch (const nlohmann::json::exception& e) {  // e.g. a name that is not valid UTF-8
      fail(std::string("cannot encode the graph as JSON: ") + e.what());
    }
    write_file(weights_path, weights_);
    write_file(path_, text);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw Error(ErrorKind::Io, path_ + ": " + message); }

  const Value& value(ValueId id, const std::string& what) const {
    if (id < 0 || static_cast<size_t>(id) >= graph_.values.size())
      fail(what + " refers to value id " + std::to_string(id) + ", which is out of range");
    return graph_.values[static_cast<size_t>(id)];
  }

  std::string dtype_string(DLDataType dtype, const std::string& what) const {
    const std::string name = dtype_name(dtype);
    DLDataType parsed{};
    if (!parse_dtype(name, &parsed) || !same_dtype(parsed, dtype)) fail(what + ": unsupported dtype " + name);
    return name;
  }

  // Appends a tensor's bytes to the weights blob (once per distinct memory) → its descriptor.
  Json write_tensor(const Tensor& tensor, const std::string& what) {
    if (!tensor.defined()) fail(what + " has no tensor");
    if (tensor.device().device_type != kDLCPU) fail(what + " is not in CPU memory");
    const Tensor data = tensor.contiguous();
    written_.push_back(data);  // keeps its address unique while offsets_ remembers it
    const size_t nbytes = data.nbytes();
    Json desc;
    desc["dtype"] = dtype_string(data.dtype(), what);
    desc["shape"] = data.shape();
    const auto key = std::make_tuple(static_cast<const void*>(data.raw_data()), nbytes, dtype_name(data.dtype()));
    auto it = offsets_.find(key);
    if (it == offsets_.end()) {
      weights_.resize((weights_.size() + kWeightsAlignment - 1) / kWeightsAlignment * kWeightsAlignment, '\0');
      it = offsets_.emplace(key, weights_.size()).first;
      if (nbytes > 0) weights_.append(static_cast<const char*>(data.raw_data()), nbytes);
    }
    desc["offset"] = it->second;
    desc["nbytes"] = nbytes;
    return desc;
  }

  Json write_attribute(const Attribute& attr, const std::string& what) {
    Json j = Json::object();
    if (attr.bound()) {
      if (attr.kind != AttrKind::Int && attr.kind != AttrKind::Float && attr.kind != AttrKind::Ints &&
          attr.kind != AttrKind::Floats)
        fail(what + " is bound to a value but expects " + attr_kind_name(attr.kind));
      j["ref"] = value(attr.ref, what).name;
      j["kind"] = attr_kind_name(attr.kind);
      return j;
    }
    switch (attr.kind) {
      case AttrKind::None: j["none"] = nullptr; break;
      case AttrKind::Int: j["int"] = attr.i; break;
      case AttrKind::Float: j["float"] = float_json(attr.f); break;
      case AttrKind::String: j["string"] = attr.s; break;
      case AttrKind::Ints: j["ints"] = attr.ints; break;
      case AttrKind::Floats:
        j["floats"] = Json::array();
        for (double v : attr.floats) j["floats"].push_back(float_json(v));
        break;
      case AttrKind::Tensor: j["tensor"] = write_tensor(attr.tensor, what); break;
      default: fail(what + " has unknown kind " + std::to_string(static_cast<int>(attr.kind)));
    }
    return j;
  }

  Json write_inputs() const {
    Json inputs = Json::array();
    for (ValueId id : graph_.inputs) {
      const Value& input = value(id, "a graph input");
      Json j{{"name", input.name},
             {"dtype", is_any_dtype(input.dtype) ? "any" : dtype_string(input.dtype, "input '" + input.name + "'")}};
      if (input.rank_known || !input.shape.empty()) j["shape"] = input.shape;
      if (!input.dim_names.empty() && input.dim_names.size() == input.shape.size()) j["dim_names"] = input.dim_names;
      if (!input.dim_ranges.empty() && input.dim_ranges.size() == input.shape.size()) {
        Json ranges = Json::array();
        for (const DimRange& r : input.dim_ranges)
          ranges.push_back(Json::array({r.min, r.max == INT64_MAX ? Json(nullptr) : Json(r.max)}));
        j["dim_ranges"] = ranges;
      }
      if (!input.example_shape.empty()) j["example_shape"] = input.example_shape;
      inputs.push_back(std::move(j));
    }
    return inputs;
  }

  Json write_outputs() const {
    Json outputs = Json::array();
    for (ValueId id : graph_.outputs) outputs.push_back(value(id, "a graph output").name);
    return outputs;
  }

  Json write_constants() {
    Json constants = Json::array();
    for (const Value& v : graph_.values) {
      if (v.kind != ValueKind::Constant) continue;
      Json constant{{"name", v.name}};
      constant.update(write_tensor(v.constant, "constant '" + v.name + "'"));
      constants.push_back(std::move(constant));
    }
    return constants;
  }

  Json write_nodes() {
    Json nodes = Json::array();
    for (const Node& node : graph_.nodes) {
      const std::string what = "node '" + node.name + "'";
      Json inputs = Json::array();
      for (ValueId id : node.inputs)
        inputs.push_back(id == kNoValue ? Json(nullptr) : Json(value(id, what + ": an input").name));
      Json outputs = Json::array();
      for (ValueId id : node.outputs) outputs.push_back(value(id, what + ": an output").name);
      Json attrs = Json::object();
      for (const auto& [name, attr] : node.attrs)
        attrs[name] = write_attribute(attr, what + ": attribute '" + name + "'");
      nodes.push_back(Json{{"name", node.name},
                           {"op", node.op},
                           {"module_path", node.module_path},
                           {"inputs", std::move(inputs)},
                           {"outputs", std::move(outputs)},
                           {"attrs", std::move(attrs)}});
    }
    return nodes;
  }

  void write_file(const std::string& file, const std::string& bytes) const {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::Io, file + ": cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw Error(ErrorKind::Io, file + ": error while writing");
  }

  const Graph& graph_;
  std::string path_;
  std::string weights_;
  std::map<std::tuple<const void*, size_t, std::string>, size_t> offsets_;  // memory → offset
  std::vector<Tensor> written_;
};

}  // namespace

Graph read_graph_file(const std::string& path) {
  try {
    return GraphFileReader(path).read();
  } catch (const Error&) {
    throw;
  } catch (const nlohmann::json::exception& e) {  // a check we missed: still an Error, not a crash
    throw Error(ErrorKind::Io, path + ": malformed graph file: " + e.what());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Io, path + ": out of memory while reading the graph file");
  }
}

void write_graph_file(const Graph& graph, const std::string& path) {
  try {
    GraphFileWriter(graph, path).write();
  } catch (const Error&) {
    throw;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Io, path + ": cannot write graph file: " + e.what());
  }
}

std::string weights_path_for(const std::string& json_path) {
  std::filesystem::path path(json_path);
  if (path.extension() == ".json") return path.replace_extension(".bin").string();
  return json_path + ".bin";
}

}  // namespace switchyard::ir

// Reading a .pt2 file's program and tensors (see archive.hpp).
#include "pt2/archive.hpp"
#include "ir/graph_file_json.hpp"
#include "pt2/torch_pickle.hpp"
#include "pt2/zip_reader.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <memory>

namespace switchyard::pt2 {

using ir::graph_file_detail::Json;

bool dtype_from_schema(int64_t code, DLDataType* out) {
  switch (code) {
    case 1: *out = {kDLUInt, 8, 1}; return true;      // BYTE
    case 2: *out = {kDLInt, 8, 1}; return true;       // CHAR
    case 3: *out = {kDLInt, 16, 1}; return true;      // SHORT
    case 4: *out = {kDLInt, 32, 1}; return true;      // INT
    case 5: *out = {kDLInt, 64, 1}; return true;      // LONG
    case 6: *out = {kDLFloat, 16, 1}; return true;    // HALF
    case 7: *out = {kDLFloat, 32, 1}; return true;    // FLOAT
    case 8: *out = {kDLFloat, 64, 1}; return true;    // DOUBLE
    case 12: *out = {SY_DL_BOOL, 8, 1}; return true;  // BOOL
    case 13: *out = {kDLBfloat, 16, 1}; return true;  // BFLOAT16
    default: return false;
  }
}

namespace {

constexpr const char* kLegacyProgram = "serialized_exported_program.json";

class ArchiveReader : private ir::graph_file_detail::JsonFieldReader {
 public:
  ArchiveReader(const std::string& path, ZipReader zip) : JsonFieldReader(path), zip_(std::move(zip)) {}

  Archive read(const std::string& model) {
    Archive out;
    out.path = path_;
    out.model = model;
    for (const std::string& name : zip_.names())
      if (name == kLegacyProgram) return read_legacy(out);
    for (const std::string& name : zip_.names()) {
      const size_t slash = name.find('/');
      if (slash != std::string::npos && name.substr(slash + 1) == "archive_format")
        return read_pt2(out, name.substr(0, slash + 1));
    }
    fail_io("not a torch.export archive: it has neither " + std::string(kLegacyProgram) +
            " (torch 2.6) nor <root>/archive_format (later torch); is it a .pt2 from torch.export.save?");
  }

 private:
  Archive read_legacy(Archive& out) {
    out.layout = "torch 2.6 layout";
    if (out.model != kDefaultModel)
      fail_io("holds one program (torch 2.6 layout), named '" + std::string(kDefaultModel) + "'; there is no model '" +
              out.model + "'");
    out.program_entry = kLegacyProgram;
    out.program = zip_.read(kLegacyProgram);
    for (const auto& [entry, target] :
         {std::pair<const char*, std::map<std::string, Tensor>*>{"serialized_state_dict.pt", &out.weights},
          {"serialized_constants.pt", &out.constants}}) {
      if (!zip_.has(entry)) continue;
      auto bytes = std::make_shared<const std::string>(zip_.read(entry));
      for (auto& [name, tensor] : load_tensor_dict(bytes, path_ + ": " + entry)) (*target)[name] = tensor;
    }
    return std::move(out);
  }

  Archive read_pt2(Archive& out, const std::string& root) {
    out.layout = "PT2 archive";
    const std::string format = zip_.read(root + "archive_format");
    if (format.rfind("pt2", 0) != 0) fail_io(root + "archive_format says '" + format.substr(0, 32) + "', not 'pt2'");
    out.program_entry = root + "models/" + out.model + ".json";
    if (!zip_.has(out.program_entry)) {
      std::string models;
      const std::string prefix = root + "models/";
      for (const std::string& name : zip_.names())
        if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 5 && name.substr(name.size() - 5) == ".json" &&
            name.find('/', prefix.size()) == std::string::npos)
          models += (models.empty() ? "" : ", ") + name.substr(prefix.size(), name.size() - prefix.size() - 5);
      fail_io("has no model '" + out.model + "'" +
              (models.empty() ? std::string(" (it holds no models/<name>.json)") : "; it has: " + models));
    }
    out.program = zip_.read(out.program_entry);
    read_tensors(root + "data/weights/", out.model + "_weights_config.json", out.weights);
    read_tensors(root + "data/constants/", out.model + "_constants_config.json", out.constants);
    return std::move(out);
  }

  // One <model>_{weights,constants}_config.json and the files it names.
  void read_tensors(const std::string& dir, const std::string& config_name, std::map<std::string, Tensor>& out) {
    const std::string entry = dir + config_name;
    if (!zip_.has(entry)) return;  // a program without weights or constants
    const std::string text = zip_.read(entry);
    const Json root = parse_json_entry(text, entry);
    const Json& config = field(root, "config", entry);
    if (!config.is_object()) fail_io(entry + ": field 'config' must be an object");
    std::map<std::string, std::shared_ptr<const std::string>> files;  // tied weights share a file
    for (const auto& [fqn, desc] : config.items()) {
      const std::string what = entry + ": '" + fqn + "'";
      if (!desc.is_object()) fail_io(what + " must be an object");
      const std::string file = as_string(field(desc, "path_name", what), what + ": field 'path_name'");
      if (file.empty() || file.find('/') != std::string::npos || file == "..")
        fail_io(what + ": path_name '" + file + "' is not a file name");
      auto& bytes = files[file];
      if (!bytes) bytes = std::make_shared<const std::string>(zip_.read(dir + file));
      const auto pickled = desc.find("use_pickle");
      if (pickled != desc.end() && pickled->is_boolean() && pickled->get<bool>()) {
        out[fqn] = load_tensor(bytes, path_ + ": " + dir + file);
        continue;
      }
      out[fqn] = raw_tensor(field(desc, "tensor_meta", what), bytes, what);
    }
  }

  Json parse_json_entry(const std::string& text, const std::string& entry) {
    try {
      return parse_json(text);
    } catch (const Error& e) {
      throw Error(ErrorKind::Io, std::string(e.what()).insert(path_.size(), ": " + entry));
    }
  }

  // A tensor over raw storage bytes, as its TensorMeta describes it.
  Tensor raw_tensor(const Json& meta, const std::shared_ptr<const std::string>& bytes, const std::string& what) {
    DLDataType dtype{};
    const int64_t code = as_int(field(meta, "dtype", what), what + ": dtype");
    if (!dtype_from_schema(code, &dtype)) fail_io(what + ": unsupported dtype code " + std::to_string(code));
    auto ints = [&](const char* key) {
      std::vector<int64_t> v;
      for (const Json& s : as_array(field(meta, key, what), what + ": " + key)) {
        auto it = s.find("as_int");
        if (!s.is_object() || it == s.end()) fail_io(what + ": " + key + " must be concrete integers");
        v.push_back(as_int(*it, what + ": " + key));
        if (v.back() < 0) fail_io(what + ": negative " + key);
      }
      return v;
    };
    std::vector<int64_t> shape = ints("sizes"), strides = ints("strides");
    if (shape.size() != strides.size()) fail_io(what + ": sizes and strides differ in length");
    int64_t offset = 0;
    if (auto it = meta.find("storage_offset"); it != meta.end() && it->is_object() && it->contains("as_int"))
      offset = as_int((*it)["as_int"], what + ": storage_offset");
    if (offset < 0) fail_io(what + ": negative storage_offset");
    uint64_t last = static_cast<uint64_t>(offset), end = 0;
    bool empty = false;
    for (size_t d = 0; d < shape.size(); ++d) {
      empty = empty || shape[d] == 0;
      uint64_t span;
      if (__builtin_mul_overflow(static_cast<uint64_t>(shape[d] > 0 ? shape[d] - 1 : 0),
                                 static_cast<uint64_t>(strides[d]), &span) ||
          __builtin_add_overflow(last, span, &last))
        fail_io(what + ": its size overflows");
    }
    if (__builtin_add_overflow(last, 1, &end) || __builtin_mul_overflow(end, dtype_size(dtype), &end))
      fail_io(what + ": its size overflows");
    if (!empty && end > bytes->size())
      fail_io(what + ": " + dtype_name(dtype) + " " + shape_string(shape) + " needs " + std::to_string(end) +
              " bytes, its file has " + std::to_string(bytes->size()) + " (truncated?)");
    // (An empty tensor's offset is not checked against the file, and no element is read:
    // one past the file's end would already make an invalid pointer.)
    const uint64_t offset_bytes = static_cast<uint64_t>(offset) * dtype_size(dtype);  // <= end: no overflow
    char* data = const_cast<char*>(bytes->data()) + (offset_bytes <= bytes->size() ? offset_bytes : 0);
    std::shared_ptr<const std::string> owner = bytes;
    return Tensor::from_blob(data, dtype, std::move(shape), std::move(strides), [owner] {});
  }

  ZipReader zip_;
};

}  // namespace

Archive read_archive(const std::string& path, const std::string& model) {
  return ArchiveReader(path, ZipReader::open_file(path)).read(model);
}

}  // namespace switchyard::pt2

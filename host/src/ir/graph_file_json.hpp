// JSON helpers of the graph file reader: a checked parse (positions as line:column,
// duplicate keys and deep nesting rejected) and typed field access whose errors name the
// file, the field and its owner. Private to graph_file.cpp.
#pragma once

#include <switchyard/error.hpp>
#include <switchyard/tensor.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace switchyard::ir::graph_file_detail {

using Json = nlohmann::ordered_json;      // keeps attribute order as written
inline constexpr int kMaxJsonDepth = 64;  // real files nest 5 deep; the cap bounds recursion on hostile input

// Line and column (both from 1) of the byte at 1-based position `byte` in `text`.
inline std::string line_column(const std::string& text, size_t byte) {
  const size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < end; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return std::to_string(line) + ":" + std::to_string(end - line_start + 1);
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, column 2:
// <reason>"; keep only the reason, since we print our own position.
inline std::string parse_error_reason(const std::string& what) {
  const size_t column = what.find("column ");
  const size_t colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  if (colon != std::string::npos) return what.substr(colon + 2);
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

class JsonFieldReader {
 public:
  explicit JsonFieldReader(std::string path) : path_(std::move(path)) {}

 protected:
  [[noreturn]] void fail_io(const std::string& message) const { throw Error(ErrorKind::Io, path_ + ": " + message); }

  Json parse_json(const std::string& text) const {
    std::vector<std::vector<std::string>> open_objects;  // keys seen in each open object
    const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
      using Event = Json::parse_event_t;
      if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth)
        fail_io("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      if (event == Event::object_start) open_objects.emplace_back();
      if (event == Event::object_end && !open_objects.empty()) open_objects.pop_back();
      if (event == Event::key && !open_objects.empty() && parsed.is_string()) {
        const auto& key = parsed.get_ref<const std::string&>();
        auto& keys = open_objects.back();
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) fail_io("duplicate JSON key '" + key + "'");
        keys.push_back(key);
      }
      return true;
    };
    try {
      return Json::parse(text, check);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(ErrorKind::Io,
                  path_ + ":" + line_column(text, e.byte) + ": JSON syntax error: " + parse_error_reason(e.what()));
    } catch (const nlohmann::json::exception& e) {
      fail_io(std::string("JSON error: ") + e.what());
    }
  }

  // --- typed field access: each names the field and its owner when the type is wrong ---

  const Json& field(const Json& object, const char* key, const std::string& owner) const {
    auto it = object.find(key);
    if (it == object.end()) fail_io(owner + ": missing field '" + key + "'");
    return *it;
  }

  std::string as_string(const Json& j, const std::string& what) const {
    if (!j.is_string()) fail_io(what + " must be a string");
    return j.get<std::string>();
  }

  int64_t as_int(const Json& j, const std::string& what) const {
    if (!j.is_number_integer()) fail_io(what + " must be an integer");
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail_io(what + " is too large for a 64-bit integer");
    return j.get<int64_t>();
  }

  uint64_t as_size(const Json& j, const std::string& what) const {
    if (!j.is_number_integer() || (!j.is_number_unsigned() && j.get<int64_t>() < 0))
      fail_io(what + " must be a non-negative integer");
    return j.get<uint64_t>();
  }

  double as_float(const Json& j, const std::string& what) const {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {  // JSON has no NaN or infinity literals
      const auto& s = j.get_ref<const std::string&>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail_io(what + " must be a number (or \"nan\", \"inf\", \"-inf\")");
  }

  const Json& as_array(const Json& j, const std::string& what) const {
    if (!j.is_array()) fail_io(what + " must be an array");
    return j;
  }

  DLDataType as_dtype(const Json& j, const std::string& what) const {
    const std::string name = as_string(j, what);
    DLDataType dtype{};
    if (!parse_dtype(name, &dtype))
      fail_io(what + ": unknown dtype '" + name +
              "' (expected float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8 or bool)");
    return dtype;
  }

  std::vector<int64_t> as_shape(const Json& j, const std::string& what, int64_t min_dim) const {
    std::vector<int64_t> shape;
    for (const Json& dim : as_array(j, what)) {
      shape.push_back(as_int(dim, what + " entry"));
      if (shape.back() < min_dim)
        fail_io(what + " has invalid dimension " + std::to_string(shape.back()) +
                (min_dim < 0 ? " (use -1 for a free dimension)" : " (dimensions must be >= 0)"));
    }
    return shape;
  }

  std::string path_;  // the JSON file, first in every message
};

}  // namespace switchyard::ir::graph_file_detail

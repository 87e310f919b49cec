// The exception type of the host's C++ API. Every error names what is at fault: the
// file and line, or the node, op and plugin.
#pragma once

#include <stdexcept>
#include <string>

namespace switchyard {

// OutOfMemory: an allocation failed, in the host or a plugin (SY_ERROR_OUT_OF_MEMORY); the
// message names what asked (node, op, plugin) and the bytes.
enum class ErrorKind { Config, Graph, Plugin, Input, Kernel, Unsupported, Io, Internal, OutOfMemory };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace switchyard

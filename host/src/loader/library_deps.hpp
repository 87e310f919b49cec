// What a plugin library links, read from its file before it is loaded: a plugin that links
// LibTorch (the aten reference plugin) must not be loaded into a process that already runs
// another LibTorch (PyPI's torch 2 under the Python module): the two abort at start-up.
#pragma once

#include <string>
#include <vector>

namespace switchyard::loader {

// The DT_NEEDED sonames of a 64-bit little-endian ELF file; empty if it is not one.
std::vector<std::string> needed_libraries(const std::string& path);

// "" when `path` can load beside the libraries already in this process; otherwise why not,
// e.g. "it links libc10.so.1.13, but this process already runs /venv/.../libc10.so".
std::string library_clash(const std::string& path);

}  // namespace switchyard::loader

// libFuzzer target: the portable graph file reader, ir::read_graph_file (which also runs
// ir::validate). The input is the JSON text. It is written to model.json in a per-process
// temporary folder, beside a fixed 4096-byte weights file model.bin (the seeds name it in
// their "weights" field). Every input must give a Graph or a switchyard::Error.
//
// Second mode: an input whose first line is "#weights=N" (JSON has no comments, so the
// line is stripped before writing model.json) gets a weights file of N zero bytes instead
// (N <= 1 MiB), and "#weights=none" none at all, so the fuzzer also mutates the weights
// length against the offsets and sizes in the JSON.
//
// The folder is on /dev/shm when it exists (SWITCHYARD_FUZZ_TMPDIR overrides), and is
// removed at exit.
#include "ir/graph.hpp"
#include "ir/graph_file.hpp"

#include <switchyard/error.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

constexpr long kDefaultWeights = 4096;
constexpr long kMaxWeights = 1 << 20;

// SWITCHYARD_FUZZ_VERBOSE=1 prints each input's outcome (for checking seeds by hand).
const bool g_verbose = std::getenv("SWITCHYARD_FUZZ_VERBOSE") != nullptr;
std::string g_dir;
std::string g_json;
std::string g_weights;
long g_weights_size = -2;  // what model.bin holds now: -1 none, -2 not written yet

void remove_dir() {
  std::error_code ec;
  if (!g_dir.empty()) std::filesystem::remove_all(g_dir, ec);
}

void write_file(const std::string& path, const char* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();  // a harness failure, not a finding: stop loudly
  }
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

// Makes model.bin `size` bytes long (-1: absent). The reader never looks at the bytes, so
// truncate() sets the length (zeros) at no cost; done only when the length changes.
void set_weights(long size) {
  if (size == g_weights_size) return;
  if (size < 0) {
    std::remove(g_weights.c_str());
  } else {
    if (g_weights_size < 0) write_file(g_weights, "", 0);
    if (truncate(g_weights.c_str(), size) != 0) {
      std::perror(g_weights.c_str());
      std::abort();
    }
  }
  g_weights_size = size;
}

// What the executor does with a constant: sizes, strides, and its bytes (ASan checks that
// the view lies inside the weights buffer; UBSan that no size arithmetic overflows).
void touch(const switchyard::Tensor& t) {
  if (!t.defined()) std::abort();  // validate() lets no undefined constant through
  const int64_t numel = t.numel();
  (void)t.strides();
  (void)t.is_contiguous();
  if (numel < 0) std::abort();
  const size_t nbytes = t.nbytes();
  if (nbytes > 0) {
    volatile const char* bytes = static_cast<const char*>(t.raw_data());
    (void)bytes[0];
    (void)bytes[nbytes - 1];
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A tmpfs (/dev/shm) when there is one: two file writes per input.
  std::string base;
  if (const char* dir = std::getenv("SWITCHYARD_FUZZ_TMPDIR"))
    base = dir;
  else if (access("/dev/shm", W_OK) == 0)
    base = "/dev/shm";
  else if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp)
    base = tmp;
  else
    base = "/tmp";
  std::string templ = base + "/sy-fuzz-graph-XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_dir = templ;
  g_json = g_dir + "/model.json";
  g_weights = g_dir + "/model.bin";
  std::atexit(remove_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  long weights = kDefaultWeights;
  static const char kPrefix[] = "#weights=";
  constexpr size_t kPrefixLen = sizeof(kPrefix) - 1;
  if (size >= kPrefixLen && std::memcmp(text, kPrefix, kPrefixLen) == 0) {
    const char* end = static_cast<const char*>(std::memchr(text, '\n', size));
    const std::string value(text + kPrefixLen, end ? end : text + size);
    if (value == "none") {
      weights = -1;
    } else {
      weights = std::strtol(value.c_str(), nullptr, 10);
      if (weights < 0) weights = 0;
      if (weights > kMaxWeights) weights = kMaxWeights;
    }
    const size_t skip = end ? static_cast<size_t>(end - text) + 1 : size;
    text += skip;
    size -= skip;
  }
  set_weights(weights);
  write_file(g_json, text, size);
  try {
    switchyard::ir::Graph graph = switchyard::ir::read_graph_file(g_json);
    // A graph that loads is validated and sorted; use it as the planner and executor would.
    for (const auto& node : graph.nodes) {
      for (switchyard::ir::ValueId id : node.inputs)
        if (id != switchyard::ir::kNoValue && (id < 0 || static_cast<size_t>(id) >= graph.values.size()))
          std::abort();  // validate() let a dangling value id through
      for (const auto& [name, attr] : node.attrs)
        if (attr.kind == switchyard::ir::AttrKind::Tensor) touch(attr.tensor);
    }
    for (const auto& value : graph.values)
      if (value.kind == switchyard::ir::ValueKind::Constant) touch(value.constant);
  } catch (const switchyard::Error& e) {
    // the expected way to refuse bad input
    if (g_verbose) std::fprintf(stderr, "switchyard::Error: %s\n", e.what());
    return 0;
  }
  if (g_verbose) std::fprintf(stderr, "accepted\n");
  return 0;
}

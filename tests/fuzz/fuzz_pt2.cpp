// libFuzzer target: the .pt2 importer (torch.export.save archives, host/src/pt2/), whole:
// pt2::import_pt2 (the zip through libzip, the torch 2.6 layout's embedded torch.save
// archives through the restricted unpickler, the PT2 archive's weight configs and raw
// tensors, the program JSON, the lowering, the input specs), then ir::validate, as
// Graph::read and Runtime::load do. The input is the .pt2 file; it is written to model.pt2
// in a per-process folder (on /dev/shm when it exists; SWITCHYARD_FUZZ_TMPDIR overrides)
// so that the importer reads it exactly as it reads a user's file. Every input must give
// a graph or a switchyard::Error; a graph that validates is then used as the executor
// would: every constant's sizes, strides, and the first and last bytes of its elements.
//
// A validate() refusal is an Error like any other here (the program JSON comes straight
// from the file, and Graph::read reports validate's message); SWITCHYARD_FUZZ_PT2_STRICT=1
// counts it as a finding instead, to look for lowerings that build invalid graphs.
//
// Mutating a zip's bytes at random mostly breaks its structure, so a custom mutator edits
// one member of the archive and writes it again with correct sizes and CRCs (zip_edit.hpp):
//   * the program JSON (serialized_exported_program.json, <root>/models/<name>.json) and
//     the weight and constant configs: mostly edits of the parsed JSON (a value replaced
//     by an edge value or by another value of the same document, an array element dropped,
//     duplicated or swapped, a key renamed or dropped), sometimes libFuzzer's byte edits;
//   * the embedded torch.save archives (serialized_state_dict.pt, serialized_constants.pt):
//     one level down, their data.pkl or a storage record;
//   * a raw weight file, archive_format, the member list; now and then the raw bytes.
#include "zip_edit.hpp"

#include "ir/graph.hpp"
#include "pt2/import.hpp"
#include "util/log.hpp"

#include <switchyard/error.hpp>
#include <switchyard/tensor.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace switchyard;

namespace {

const bool g_verbose = std::getenv("SWITCHYARD_FUZZ_VERBOSE") != nullptr;
const bool g_strict = std::getenv("SWITCHYARD_FUZZ_PT2_STRICT") != nullptr;
std::string g_dir;
std::string g_path;

void remove_dir() {
  std::error_code ec;
  if (!g_dir.empty()) std::filesystem::remove_all(g_dir, ec);
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_pt2: %s\n", what.c_str());
  std::abort();
}

// What the executor does with a constant: sizes, strides, and its elements' bytes (ASan
// checks that they lie in the archive's memory; UBSan that no size arithmetic overflows).
void touch(const Tensor& t) {
  if (!t.defined()) finding("an undefined constant");
  const int64_t numel = t.numel();
  if (numel < 0) finding("a constant with a negative numel");
  const std::vector<int64_t> strides = t.strides();
  (void)t.is_contiguous();
  if (numel == 0) return;
  const auto& shape = t.shape();
  // The reader checked that the last element lies in the storage: so no overflow here.
  int64_t last = 0, span = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    if (strides[d] < 0 || __builtin_mul_overflow(shape[d] - 1, strides[d], &span) ||
        __builtin_add_overflow(last, span, &last))
      finding("a constant whose last element lies past 2^63 elements");
  const size_t item = dtype_size(t.dtype());
  volatile const char* bytes = static_cast<const char*>(t.raw_data());
  (void)bytes[0];
  (void)bytes[static_cast<size_t>(last) * item + item - 1];
}

// ---- the mutator ------------------------------------------------------------------------

using Json = nlohmann::ordered_json;

// Every node of a document, with how much the mutator wants it: the nodes, signature and
// configs are what the lowering reads; tensor_values (beyond the user inputs) and the
// nodes' metadata mostly are not.
void collect(Json& j, unsigned weight, std::vector<std::pair<Json*, unsigned>>& out, int depth = 0) {
  out.emplace_back(&j, weight);
  if (depth > 80) return;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      const unsigned w = (key == "metadata" || key == "tensor_values" || key == "stack_trace") ? 1 : weight;
      collect(it.value(), w, out, depth + 1);
    }
  } else if (j.is_array()) {
    for (Json& e : j) collect(e, weight, out, depth + 1);
  }
}

Json* pick(const std::vector<std::pair<Json*, unsigned>>& nodes, std::minstd_rand& rng) {
  uint64_t total = 0;
  for (const auto& n : nodes) total += n.second;
  uint64_t at = rng() % total;
  for (const auto& n : nodes) {
    if (at < n.second) return n.first;
    at -= n.second;
  }
  return nodes.back().first;
}

// A string of the document (a value or a key), to swap names between places.
std::string some_string(const std::vector<std::pair<Json*, unsigned>>& nodes, std::minstd_rand& rng) {
  for (int tries = 0; tries < 16; ++tries) {
    const Json& j = *nodes[rng() % nodes.size()].first;
    if (j.is_string()) return j.get<std::string>();
    if (j.is_object() && !j.empty()) {
      auto it = j.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % j.size()));
      return it.key();
    }
  }
  return "";
}

std::string mutate_string(const std::string& s) {
  std::vector<uint8_t> bytes(s.begin(), s.end());
  syfuzz::mutate_range(bytes, 0, bytes.size(), 16);
  return std::string(bytes.begin(), bytes.end());
}

Json edge_number(std::minstd_rand& rng) {
  static const int64_t kInts[] = {0,
                                  1,
                                  2,
                                  3,
                                  -1,
                                  -2,
                                  7,
                                  8,
                                  13,
                                  64,
                                  255,
                                  1000,
                                  int64_t{1} << 31,
                                  int64_t{1} << 32,
                                  int64_t{1} << 62,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(),
                                  -(int64_t{1} << 40)};
  const unsigned r = rng() % 24;
  if (r < sizeof kInts / sizeof kInts[0]) return kInts[r];
  if (r == 18) return std::numeric_limits<uint64_t>::max();
  if (r == 19) return 1e308;
  if (r == 20) return -0.5;
  if (r == 21) return 2.5;
  if (r == 22) return "NaN";
  return "Infinity";
}

// One edit of a parsed JSON document; false when there was nothing to edit.
bool mutate_json(Json& doc, std::minstd_rand& rng) {
  std::vector<std::pair<Json*, unsigned>> nodes;
  collect(doc, 8, nodes);
  if (nodes.empty()) return false;
  Json* p = pick(nodes, rng);
  Json& j = *p;
  switch (rng() % 8) {
    case 0:  // another node's value, anywhere in the document
    {
      Json copy = *nodes[rng() % nodes.size()].first;
      j = std::move(copy);
      return true;
    }
    case 1:  // a value of another type
    {
      static const char* kLiterals[] = {"null",
                                        "{}",
                                        "[]",
                                        "\"\"",
                                        "0",
                                        "true",
                                        "-1",
                                        "1.5",
                                        "[0]",
                                        "{\"as_int\": 0}",
                                        "{\"as_none\": true}",
                                        "{\"as_name\": \"s0\"}"};
      j = Json::parse(kLiterals[rng() % (sizeof kLiterals / sizeof kLiterals[0])]);
      return true;
    }
    default: break;
  }
  if (j.is_number()) {
    if (rng() % 2 && j.is_number_integer())  // +-2, wrapping (unsigned: no overflow)
      j = static_cast<int64_t>(static_cast<uint64_t>(j.get<int64_t>()) + rng() % 5 - 2);
    else
      j = edge_number(rng);
  } else if (j.is_string()) {
    j = rng() % 2 ? some_string(nodes, rng) : mutate_string(j.get<std::string>());
  } else if (j.is_boolean()) {
    j = !j.get<bool>();
  } else if (j.is_array()) {
    if (j.empty()) {
      Json copy = *nodes[rng() % nodes.size()].first;
      j.push_back(std::move(copy));
      return true;
    }
    const size_t a = rng() % j.size(), b = rng() % j.size();
    switch (rng() % 4) {
      case 0: j.erase(j.begin() + static_cast<std::ptrdiff_t>(a)); break;
      case 1: j.insert(j.begin() + static_cast<std::ptrdiff_t>(b), Json(j[a])); break;
      case 2: std::swap(j[a], j[b]); break;
      default: {
        Json copy = *nodes[rng() % nodes.size()].first;  // (may be j or inside it)
        j.push_back(std::move(copy));
        break;
      }
    }
  } else if (j.is_object()) {
    if (j.empty()) {
      Json copy = *nodes[rng() % nodes.size()].first;
      j[some_string(nodes, rng)] = std::move(copy);
      return true;
    }
    const size_t a = rng() % j.size();
    Json out = Json::object();
    size_t k = 0;
    const unsigned how = rng() % 3;
    for (auto it = j.begin(); it != j.end(); ++it, ++k) {
      if (k != a) {
        out[it.key()] = it.value();
      } else if (how == 1) {  // renamed
        out[rng() % 2 ? some_string(nodes, rng) : mutate_string(it.key())] = it.value();
      } else if (how == 2) {  // and a copy of it under another name
        out[it.key()] = it.value();
        out[some_string(nodes, rng)] = it.value();
      }  // how == 0: dropped
    }
    j = std::move(out);
  } else {  // null
    j = edge_number(rng);
  }
  return true;
}

bool is_json(const syfuzz::ZipMember& m) { return m.ends_with(".json"); }
bool is_zip(const std::vector<uint8_t>& d) { return d.size() >= 4 && std::memcmp(d.data(), "PK\x03\x04", 4) == 0; }

unsigned outer_weight(const syfuzz::ZipMember& m) {
  if (m.ends_with("serialized_exported_program.json") || m.name.find("/models/") != std::string::npos) return 12;
  if (is_json(m)) return 4;  // weight and constant configs
  if (m.ends_with("serialized_state_dict.pt") || m.ends_with("serialized_constants.pt")) return 5;
  if (m.name.find("/data/weights/") != std::string::npos || m.name.find("/data/constants/") != std::string::npos)
    return 1;
  if (m.ends_with("archive_format")) return 1;
  return 0;  // example inputs, versions, byteorder: not read
}

unsigned inner_weight(const syfuzz::ZipMember& m) {
  if (m.ends_with("data.pkl")) return 8;
  if (m.name.find("/data/") != std::string::npos) return 1;
  return 0;
}

// New bytes for one member: JSON edits for JSON, one level down for a torch.save archive.
void mutate_member(syfuzz::ZipMember& m, size_t room, std::minstd_rand& rng) {
  std::vector<uint8_t> bytes = m.data;
  if (is_json(m) && rng() % 4 != 0) {
    Json doc = Json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded() && mutate_json(doc, rng)) {
      const std::string text = doc.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (text.size() <= bytes.size() + room) {
        m.set(std::vector<uint8_t>(text.begin(), text.end()));
        return;
      }
    }
  } else if (is_zip(bytes) && rng() % 8 != 0) {
    std::vector<syfuzz::ZipMember> inner;
    if (syfuzz::parse_zip(bytes, inner)) {
      const long i = rng() % 32 == 0 ? -1 : syfuzz::pick_member(inner, inner_weight, rng);
      if (i < 0) {
        syfuzz::restructure(inner, rng);
      } else {
        std::vector<uint8_t> part = inner[static_cast<size_t>(i)].data;
        syfuzz::mutate_range(part, 0, part.size(), std::min<size_t>(room, 256));
        inner[static_cast<size_t>(i)].set(std::move(part));
      }
      m.set(syfuzz::write_zip(inner));
      return;
    }
  }
  syfuzz::mutate_range(bytes, 0, bytes.size(), std::min<size_t>(room, 1024));
  m.set(std::move(bytes));
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<syfuzz::ZipMember> members;
  if (rng() % 64 == 0 || !syfuzz::parse_zip(data, size, members)) return LLVMFuzzerMutate(data, size, max_size);
  const long i = rng() % 32 == 0 ? -1 : syfuzz::pick_member(members, outer_weight, rng);
  if (i < 0)
    syfuzz::restructure(members, rng);
  else
    mutate_member(members[static_cast<size_t>(i)], max_size > size ? max_size - size : 0, rng);
  const std::vector<uint8_t> out = syfuzz::write_zip(members);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string base;
  if (const char* dir = std::getenv("SWITCHYARD_FUZZ_TMPDIR"))
    base = dir;
  else if (access("/dev/shm", W_OK) == 0)
    base = "/dev/shm";
  else if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp)
    base = tmp;
  else
    base = "/tmp";
  std::string templ = base + "/sy-fuzz-pt2-XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_dir = templ;
  g_path = g_dir + "/model.pt2";
  std::atexit(remove_dir);
  if (!g_verbose) log::set_level("off");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FILE* f = std::fopen(g_path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size)) std::abort();
  std::fclose(f);
  ir::Graph graph;
  try {
    pt2::import_pt2(g_path, graph);
  } catch (const Error& e) {
    // the expected way to refuse bad input
    if (g_verbose) std::fprintf(stderr, "switchyard::Error: %s\n", e.what());
    return 0;
  }
  try {
    ir::validate(graph);
  } catch (const Error& e) {
    if (g_strict) finding(std::string("import_pt2 returned a graph validate() refuses: ") + e.what());
    if (g_verbose) std::fprintf(stderr, "validate: switchyard::Error: %s\n", e.what());
    return 0;
  }
  for (const ir::Node& node : graph.nodes) {
    for (ir::ValueId id : node.inputs)
      if (id != ir::kNoValue && (id < 0 || static_cast<size_t>(id) >= graph.values.size()))
        finding("validate() let a dangling value id through");
    for (const auto& [name, attr] : node.attrs)
      if (attr.kind == ir::AttrKind::Tensor) touch(attr.tensor);
  }
  for (const ir::Value& value : graph.values)
    if (value.kind == ir::ValueKind::Constant) touch(value.constant);
  if (g_verbose) std::fprintf(stderr, "accepted: %zu nodes, %zu values\n", graph.nodes.size(), graph.values.size());
  return 0;
}

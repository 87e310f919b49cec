// libFuzzer target: the TorchScript importer, torchscript::import_model (jit::load, freeze,
// inline, then switchyard's lowering). The input is a .pt file: a zip archive. Every input
// must give a Graph or a switchyard::Error: LibTorch's own exceptions (c10::Error and the
// rest) must come back converted, never escape, and nothing may abort.
//
// Mutating a zip's bytes at random mostly breaks its structure, so little would reach the
// lowering. A custom mutator therefore edits one member of the archive (the method bodies
// of the TorchScript source code/*.py, switchyard_inputs.json, a tensor's bytes) and writes
// the archive again with correct sizes and CRCs. Seeds store every member uncompressed
// (tests/fuzz/make_torchscript_seeds.py); deflated members are copied as they are.
//
// LibTorch 1.13's jit::load itself crashes on many malformed archives, before any
// switchyard code runs (tests/fuzz/README.md lists those found). By default the mutator
// leaves alone what triggers them (pickles, class headers, source maps, the zip layer);
// SWITCHYARD_FUZZ_TS_WHOLE=1 mutates those too, and tools/fuzz.sh --keep-going triages.
//
// The file is written to model.pt in a per-process temporary folder (on /dev/shm when it
// exists; SWITCHYARD_FUZZ_TMPDIR overrides), removed at exit.
#include "import_model.hpp"
#include "ir/graph.hpp"
#include "util/log.hpp"
#include "zip_edit.hpp"

#include <switchyard/error.hpp>
#include <switchyard/torchscript.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// SWITCHYARD_FUZZ_VERBOSE=1 prints each input's outcome (for checking seeds by hand).
const bool g_verbose = std::getenv("SWITCHYARD_FUZZ_VERBOSE") != nullptr;
std::string g_dir;
std::string g_path;

void remove_dir() {
  std::error_code ec;
  if (!g_dir.empty()) std::filesystem::remove_all(g_dir, ec);
}

// The zip reader and writer the custom mutators share (zip_edit.hpp).
using syfuzz::crc32;
using syfuzz::get16;
using syfuzz::get32;
using syfuzz::parse_zip;
using syfuzz::put16;
using syfuzz::put32;
using syfuzz::write_zip;
using ZipMember = syfuzz::ZipMember;

// SWITCHYARD_FUZZ_TS_WHOLE=1 also mutates the pickles, the member list and the raw bytes:
// that fuzzes LibTorch's own loader, which crashes within minutes (README.md). By default
// only what reaches switchyard's lowering is mutated.
const bool g_whole = std::getenv("SWITCHYARD_FUZZ_TS_WHOLE") != nullptr;

// How much the mutator prefers a member: the code, the input hints and the tensors, which
// reach the lowering. Pickles only in whole mode: LibTorch's unpickler trusts them (a
// corrupt length asks for gigabytes, a NEWOBJ on an empty stack crashes). Source maps never.
unsigned weight(const ZipMember& m) {
  if (m.method != 0) return 0;
  const std::string& n = m.name;
  auto ends_with = [&](const char* s) {
    const size_t l = std::strlen(s);
    return n.size() >= l && n.compare(n.size() - l, l, s) == 0;
  };
  if (ends_with(".debug_pkl")) return 0;
  if (ends_with(".py")) return 12;
  if (ends_with(".json")) return 4;
  if (ends_with(".pkl") || ends_with("/version")) return g_whole ? 1 : 0;
  return 2;  // tensor storage: data/N, constants/N
}

// The part of a TorchScript source file the mutator edits: the bodies of its methods (from
// the end of the first `def` signature on). LibTorch 1.13 crashes on many malformed class
// headers (a SEGV in ScriptTypeParser::parseClassConstant for `__parameters__v= [...]`),
// which would stop the fuzzer long before it reaches switchyard's lowering.
std::pair<size_t, size_t> code_region(const std::vector<uint8_t>& data) {
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  const size_t def = text.find("\n  def ");
  if (def == std::string_view::npos) return {data.size(), data.size()};
  const size_t colon = text.find(":\n", text.find(')', def));
  if (colon == std::string_view::npos) return {data.size(), data.size()};
  return {colon + 2, data.size()};
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<ZipMember> members;
  // In whole mode now and then the raw bytes (the zip layer, deflated members).
  if ((g_whole && rng() % 50 == 0) || !parse_zip(data, size, members)) return LLVMFuzzerMutate(data, size, max_size);

  unsigned total = 0;
  for (const ZipMember& m : members) total += weight(m);
  const bool restructure = g_whole && rng() % 64 == 0;
  if (total == 0 || restructure) {
    // Drop or duplicate a member, or mutate its name.
    const size_t i = rng() % members.size();
    if (rng() % 3 == 0 && members.size() > 1) {
      members.erase(members.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (rng() % 2) {
      members.push_back(members[i]);
    } else {
      std::string& name = members[i].name;
      const size_t old = name.size();
      name.resize(old + 8);
      name.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(name.data()), old, name.size()));
    }
  } else {
    unsigned pick = rng() % total;
    size_t i = 0;
    while (pick >= weight(members[i])) pick -= weight(members[i++]);
    ZipMember& m = members[i];
    size_t begin = 0, end = m.data.size();
    const std::string& n = m.name;
    if (n.size() > 3 && n.compare(n.size() - 3, 3, ".py") == 0) std::tie(begin, end) = code_region(m.data);
    if (begin >= end) return LLVMFuzzerMutate(data, size, max_size);
    const size_t room = max_size > size ? max_size - size : 0;
    std::vector<uint8_t> part(m.data.begin() + static_cast<std::ptrdiff_t>(begin),
                              m.data.begin() + static_cast<std::ptrdiff_t>(end));
    const size_t old = part.size();
    part.resize(old + std::min<size_t>(room, 4096));
    part.resize(LLVMFuzzerMutate(part.data(), old, part.size()));
    m.data.erase(m.data.begin() + static_cast<std::ptrdiff_t>(begin),
                 m.data.begin() + static_cast<std::ptrdiff_t>(end));
    m.data.insert(m.data.begin() + static_cast<std::ptrdiff_t>(begin), part.begin(), part.end());
    m.usize = static_cast<uint32_t>(m.data.size());
    m.crc = crc32(m.data.data(), m.data.size());
  }
  const std::vector<uint8_t> out = write_zip(members);
  if (out.size() > max_size) return g_whole ? LLVMFuzzerMutate(data, size, max_size) : size;
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
  std::string templ = base + "/sy-fuzz-ts-XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_dir = templ;
  g_path = g_dir + "/model.pt";
  std::atexit(remove_dir);
  if (!g_verbose) switchyard::log::set_level("off");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FILE* f = std::fopen(g_path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size)) std::abort();
  std::fclose(f);
  try {
    switchyard::ir::Graph graph;
    switchyard::torchscript::import_model(g_path, graph);
    // Runtime::load validates what a loader returns; a graph the importer accepted but
    // validate() refuses is a lowering bug, so stop on it (with validate's message).
    try {
      switchyard::ir::validate(graph);
    } catch (const switchyard::Error& e) {
      std::fprintf(stderr, "fuzz_torchscript: import_model returned a graph validate() refuses: %s\n", e.what());
      std::abort();
    }
  } catch (const switchyard::Error& e) {
    // the expected way to refuse bad input
    if (g_verbose) std::fprintf(stderr, "switchyard::Error: %s\n", e.what());
    return 0;
  }
  if (g_verbose) std::fprintf(stderr, "accepted\n");
  return 0;
}

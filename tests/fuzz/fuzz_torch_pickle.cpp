// libFuzzer target: the restricted unpickler for torch.save files (host/src/pt2/
// torch_pickle.cpp), on in-memory bytes as the .pt2 reader hands it the archive's
// serialized_state_dict.pt or a use_pickle weight. The input is a torch.save zip
// (<dir>/data.pkl and <dir>/data/<key> records); it goes to pt2::load_tensor_dict, and
// where that refuses a root that is not a dict, to pt2::load_tensor. Every input must give
// tensors or a switchyard::Error. Each tensor returned is read where its sizes and strides
// say its first and last elements are (ASan checks that they lie in the record).
//
// A custom mutator edits one member of the zip (mostly data.pkl, sometimes a record's
// bytes or the member list) and writes the archive again with correct sizes and CRCs;
// now and then it mutates the raw bytes, which exercises the zip layer (libzip).
#include "zip_edit.hpp"

#include "pt2/torch_pickle.hpp"

#include <switchyard/error.hpp>
#include <switchyard/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace switchyard;

namespace {

const bool g_verbose = std::getenv("SWITCHYARD_FUZZ_VERBOSE") != nullptr;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_torch_pickle: %s\n", what);
  std::abort();
}

// Sizes, strides, and the first and last bytes its elements cover.
void touch(const Tensor& t) {
  if (!t.defined()) finding("an undefined tensor");
  const int64_t numel = t.numel();
  if (numel < 0) finding("a tensor with a negative numel");
  const std::vector<int64_t> strides = t.strides();
  (void)t.is_contiguous();
  if (numel == 0) return;
  const auto& shape = t.shape();
  // The reader checked that the last element lies in the storage: so no overflow here.
  int64_t last = 0, span = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    if (strides[d] < 0 || __builtin_mul_overflow(shape[d] - 1, strides[d], &span) ||
        __builtin_add_overflow(last, span, &last))
      finding("a tensor whose last element lies past 2^63 elements");
  const size_t item = dtype_size(t.dtype());
  volatile const char* bytes = static_cast<const char*>(t.raw_data());
  (void)bytes[0];
  (void)bytes[static_cast<size_t>(last) * item + item - 1];
}

unsigned weight(const syfuzz::ZipMember& m) {
  if (m.ends_with("data.pkl")) return 8;
  if (m.name.find("/data/") != std::string::npos) return 1;
  return 0;  // byteorder, version, serialization_id: not read
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<syfuzz::ZipMember> members;
  if (rng() % 64 == 0 || !syfuzz::parse_zip(data, size, members)) return LLVMFuzzerMutate(data, size, max_size);
  const long i = rng() % 32 == 0 ? -1 : syfuzz::pick_member(members, weight, rng);
  if (i < 0) {
    syfuzz::restructure(members, rng);
  } else {
    syfuzz::ZipMember& m = members[static_cast<size_t>(i)];
    std::vector<uint8_t> bytes = m.data;
    syfuzz::mutate_range(bytes, 0, bytes.size(), std::min<size_t>(max_size > size ? max_size - size : 0, 256));
    m.set(std::move(bytes));
  }
  const std::vector<uint8_t> out = syfuzz::write_zip(members);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const std::string>(reinterpret_cast<const char*>(data), size);
  try {
    try {
      for (const auto& [name, tensor] : pt2::load_tensor_dict(bytes, "fuzz.pt")) touch(tensor);
    } catch (const Error& e) {
      if (std::strstr(e.what(), "not a dict of tensors") == nullptr) throw;
      touch(pt2::load_tensor(bytes, "fuzz.pt"));
    }
  } catch (const Error& e) {
    // the expected way to refuse bad input
    if (g_verbose) std::fprintf(stderr, "switchyard::Error: %s\n", e.what());
    return 0;
  }
  if (g_verbose) std::fprintf(stderr, "accepted\n");
  return 0;
}

// Bad .pt2 archives and bad inputs: each is refused with an error that names the file,
// the version, or the node and op. The archives are the committed fixtures, rewritten
// here with one thing broken.
#include "pt2_test_util.hpp"

#include <switchyard/error.hpp>
#include <switchyard/runtime.hpp>

#include <gtest/gtest.h>
#include <zip.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

using namespace switchyard;
using namespace switchyard::pt2_test;

namespace {

const std::string kLegacy = fixtures_dir() + "/torch-2.6/cnn.pt2";    // torch 2.6 layout
const std::string kArchive = fixtures_dir() + "/torch-2.15/cnn.pt2";  // PT2 archive

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("sy_pt2_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::map<std::string, std::string> read_zip(const std::string& path) {
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &error);
  if (z == nullptr) throw std::runtime_error("cannot open " + path);
  std::map<std::string, std::string> entries;
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st);
    std::string bytes(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    zip_fread(f, bytes.data(), st.size);
    zip_fclose(f);
    entries[st.name] = std::move(bytes);
  }
  zip_discard(z);
  return entries;
}

void write_zip(const std::string& path, const std::map<std::string, std::string>& entries) {
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, bytes] : entries) {
    zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    ASSERT_GE(zip_file_add(z, name.c_str(), s, ZIP_FL_OVERWRITE), 0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

// `src` with its entries changed by `edit`, written to a temporary file.
std::string rewritten(const std::string& src, const std::string& name,
                      const std::function<void(std::map<std::string, std::string>&)>& edit) {
  auto entries = read_zip(src);
  edit(entries);
  const std::string path = temp_path(name + ".pt2");
  write_zip(path, entries);
  return path;
}

// The program's JSON entry of either layout.
std::string& program_of(std::map<std::string, std::string>& entries) {
  for (auto& [name, bytes] : entries)
    if (name == "serialized_exported_program.json" || name.find("/models/model.json") != std::string::npos)
      return bytes;
  throw std::runtime_error("no program entry");
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("'" + from + "' not found");
  text.replace(at, from.size(), to);
}

// The error message of loading `path` and running it on the fixture's batch-3 inputs.
std::string error_of(const std::string& path, const std::string& inputs = "/torch-2.6/cnn.b3.inputs.json",
                     ErrorKind* kind = nullptr) {
  try {
    Runtime rt(Options{config_path("default.toml")});
    auto model = rt.load(path);
    model->run(read_tensors(fixtures_dir() + inputs, model->input_names()));
  } catch (const Error& e) {
    if (kind != nullptr) *kind = e.kind();
    return e.what();
  }
  return "";
}

TEST(Pt2Errors, MissingFileAndNotAZip) {
  EXPECT_NE(error_of("/nonexistent/m.pt2").find("/nonexistent/m.pt2: no such file"), std::string::npos);
  const std::string junk = temp_path("junk.pt2");
  std::ofstream(junk) << "this is not a zip archive";
  const std::string e = error_of(junk);
  EXPECT_NE(e.find(junk), std::string::npos) << e;
  EXPECT_NE(e.find("not a readable zip archive"), std::string::npos) << e;
  std::filesystem::remove(junk);
}

TEST(Pt2Errors, TruncatedArchiveNamesTheFile) {
  for (const std::string& src : {kLegacy, kArchive}) {
    std::ifstream in(src, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    const std::string cut = temp_path("cut.pt2");
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    ErrorKind kind{};
    const std::string e = error_of(cut, "/torch-2.6/cnn.b3.inputs.json", &kind);
    EXPECT_EQ(kind, ErrorKind::Io) << e;
    EXPECT_NE(e.find(cut), std::string::npos) << e;
    std::filesystem::remove(cut);
  }
}

TEST(Pt2Errors, ZipWithoutAProgram) {
  const std::string path =
      rewritten(kLegacy, "noprogram", [](auto& entries) { entries.erase("serialized_exported_program.json"); });
  const std::string e = error_of(path);
  EXPECT_NE(e.find("not a torch.export archive"), std::string::npos) << e;
  std::filesystem::remove(path);
}

TEST(Pt2Errors, UnsupportedSchemaVersionNamesVersionAndRange) {
  for (const std::string& src : {kLegacy, kArchive}) {
    const std::string path = rewritten(src, "version", [](auto& entries) {
      std::string& program = program_of(entries);
      replace_once(program, "\"schema_version\": {\"major\": 8", "\"schema_version\": {\"major\": 9");
    });
    const std::string e = error_of(path);
    EXPECT_NE(e.find("schema version 9."), std::string::npos) << e;
    EXPECT_NE(e.find("reads 8.2 to 8.20"), std::string::npos) << e;
    std::filesystem::remove(path);
  }
}

TEST(Pt2Errors, MalformedProgramJsonNamesEntryAndPosition) {
  const std::string path = rewritten(kLegacy, "badjson", [](auto& entries) {
    std::string& program = program_of(entries);
    program.resize(program.size() / 3);
  });
  const std::string e = error_of(path);
  EXPECT_NE(e.find("serialized_exported_program.json:"), std::string::npos) << e;
  EXPECT_NE(e.find("JSON syntax error"), std::string::npos) << e;
  std::filesystem::remove(path);
}

TEST(Pt2Errors, OpWithNoKernelNamesNodeAndOp) {
  const std::string path = rewritten(kArchive, "noop", [](auto& entries) {
    replace_once(program_of(entries), "torch.ops.aten.relu.default", "torch.ops.aten.frobnicate.default");
  });
  const std::string e = error_of(path);
  EXPECT_NE(e.find("aten::frobnicate"), std::string::npos) << e;
  EXPECT_NE(e.find("relu"), std::string::npos) << e;  // the node keeps its FX name
  std::filesystem::remove(path);
}

TEST(Pt2Errors, InputOutsideTheExportedRange) {
  Runtime rt(Options{config_path("default.toml")});
  auto model = rt.load(kLegacy);
  Tensor x = Tensor::empty(DLDataType{kDLFloat, 32, 1}, {65, 3, 16, 16});
  try {
    model->run({x});
    FAIL() << "a batch of 65 ran, outside the exported 1..64";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("must be in 1..64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
  }
}

TEST(Pt2Errors, ModelNotInTheArchiveListsTheOthers) {
  const std::string e = error_of(kArchive + "#encoder");
  EXPECT_NE(e.find("has no model 'encoder'; it has: model"), std::string::npos) << e;
}

TEST(Pt2Errors, MutatedBufferIsRefusedByName) {
  const std::string path = rewritten(kArchive, "mutation", [](auto& entries) {
    std::string& program = program_of(entries);
    replace_once(program, "\"output_specs\": [",
                 "\"output_specs\": [{\"buffer_mutation\": {\"arg\": {\"name\": \"conv2d\"}, "
                 "\"buffer_name\": \"stem.1.running_mean\"}}, ");
  });
  const std::string e = error_of(path);
  EXPECT_NE(e.find("mutates buffer 'stem.1.running_mean'"), std::string::npos) << e;
  std::filesystem::remove(path);
}

TEST(Pt2Errors, TruncatedWeightNamesTheTensor) {
  const std::string path = rewritten(kArchive, "weight", [](auto& entries) {
    for (auto& [name, bytes] : entries)
      if (name.find("data/weights/weight_0") != std::string::npos) bytes.resize(bytes.size() / 2);
  });
  const std::string e = error_of(path);
  EXPECT_NE(e.find("truncated?"), std::string::npos) << e;
  EXPECT_NE(e.find("stem.0.weight"), std::string::npos) << e;
  std::filesystem::remove(path);
}

TEST(Pt2Errors, CorruptStateDictPickle) {
  const std::string path = rewritten(kLegacy, "pickle", [](auto& entries) {
    auto inner = entries["serialized_state_dict.pt"];
    const std::string tmp = temp_path("inner.zip");
    std::ofstream(tmp, std::ios::binary) << inner;
    auto files = read_zip(tmp);
    for (auto& [name, bytes] : files)
      if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) bytes.resize(bytes.size() / 2);
    write_zip(tmp, files);
    std::ifstream in(tmp, std::ios::binary);
    entries["serialized_state_dict.pt"].assign((std::istreambuf_iterator<char>(in)), {});
    std::filesystem::remove(tmp);
  });
  ErrorKind kind{};
  const std::string e = error_of(path, "/torch-2.6/cnn.b3.inputs.json", &kind);
  EXPECT_EQ(kind, ErrorKind::Io) << e;
  EXPECT_NE(e.find("serialized_state_dict.pt"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  std::filesystem::remove(path);
}

}  // namespace

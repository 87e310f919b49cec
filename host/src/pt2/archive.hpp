// The contents of a .pt2 file (torch.export.save): one ExportedProgram's JSON and the
// tensors its signature names. Two layouts are read:
//   * torch 2.6 and earlier: serialized_exported_program.json at the zip's top level, the
//     weights as a torch.save'd state dict (serialized_state_dict.pt) and the constants
//     likewise (serialized_constants.pt);
//   * the PT2 archive of later torch: <root>/archive_format ("pt2"), one program per model
//     in <root>/models/<name>.json, and the tensors as raw bytes under <root>/data/weights/
//     and <root>/data/constants/, described by <name>_weights_config.json and
//     <name>_constants_config.json (a tensor marked use_pickle is a torch.save file).
#pragma once

#include <switchyard/tensor.hpp>

#include <map>
#include <string>
#include <vector>

namespace switchyard::pt2 {

struct Archive {
  std::string path;                         // the .pt2 file
  std::string layout;                       // "torch 2.6 layout" or "PT2 archive"
  std::string model;                        // the model read ("model")
  std::string program_entry;                // the zip entry with the program's JSON
  std::string program;                      // that JSON's text
  std::map<std::string, Tensor> weights;    // parameters and persistent buffers, by FQN
  std::map<std::string, Tensor> constants;  // non-persistent buffers and lifted constants
};

// The model a .pt2 holds by default.
inline constexpr const char* kDefaultModel = "model";

// Reads `model` from the .pt2 at `path`. Throws Error (Io) naming the file and entry for a
// file that is missing, not a zip, truncated or corrupt, in neither layout, or without the
// model (the message lists the models it has).
Archive read_archive(const std::string& path, const std::string& model = kDefaultModel);

// The program JSON's tensor dtype codes (torch/_export/serde/schema.py ScalarType).
bool dtype_from_schema(int64_t code, DLDataType* out);

}  // namespace switchyard::pt2

// Reading zip archives (the .pt2 file itself, and the torch.save archives inside a torch
// 2.6 .pt2) through libzip. Every failure is an Error (Io) naming the archive and entry.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace switchyard::pt2 {

class ZipReader {
 public:
  // Opens a zip file; throws Error (Io) naming `path` when it is missing or not a zip.
  static ZipReader open_file(const std::string& path);
  // Opens a zip held in memory; `what` names it in errors ("m.pt2: serialized_state_dict.pt").
  static ZipReader open_memory(std::shared_ptr<const std::string> bytes, const std::string& what);

  ZipReader(ZipReader&&) noexcept;
  ZipReader& operator=(ZipReader&&) noexcept;
  ~ZipReader();

  const std::string& what() const { return what_; }
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const;
  // The entry's bytes, whole. Throws Error (Io) for a missing entry, a corrupt or truncated
  // one, and one whose size is implausible for the archive (a zip bomb).
  std::string read(const std::string& name) const;

 private:
  ZipReader() = default;
  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::string what_;
  std::vector<std::string> names_;
};

}  // namespace switchyard::pt2

// Reading DT_NEEDED from an ELF file's dynamic section (library_deps.hpp).
#include "loader/library_deps.hpp"

#include <elf.h>
#include <link.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace switchyard::loader {

namespace {

template <typename T>
bool read_at(std::ifstream& in, uint64_t offset, T* out, size_t count = 1) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(sizeof(T) * count));
  return static_cast<size_t>(in.gcount()) == sizeof(T) * count;
}

// Libraries of which a process can hold one build only.
bool is_single_instance(const std::string& soname) {
  for (const char* prefix : {"libc10.so", "libtorch_cpu.so", "libtorch.so"})
    if (soname.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<std::string> needed_libraries(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in || !read_at(in, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > 4096)
    return out;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!read_at(in, eh.e_shoff, sections.data(), sections.size())) return out;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNAMIC || s.sh_link >= sections.size() || s.sh_size > (1u << 24)) continue;
    const Elf64_Shdr& strtab = sections[s.sh_link];
    if (strtab.sh_size > (1u << 26)) continue;
    std::vector<Elf64_Dyn> dyn(s.sh_size / sizeof(Elf64_Dyn));
    std::string strings(strtab.sh_size, '\0');
    if (!read_at(in, s.sh_offset, dyn.data(), dyn.size()) ||
        !read_at(in, strtab.sh_offset, strings.data(), strings.size()))
      return out;
    for (const Elf64_Dyn& d : dyn) {
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED && d.d_un.d_val < strings.size()) out.emplace_back(strings.c_str() + d.d_un.d_val);
    }
  }
  return out;
}

std::string library_clash(const std::string& path) {
  std::vector<std::string> wanted;
  for (const std::string& soname : needed_libraries(path))
    if (is_single_instance(soname)) wanted.push_back(soname);
  if (wanted.empty()) return "";
  struct Search {
    const std::vector<std::string>* wanted;
    std::string clash;
  } search{&wanted, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name == nullptr || *info->dlpi_name == '\0') return 0;
        const std::string loaded = std::filesystem::path(info->dlpi_name).filename().string();
        if (!is_single_instance(loaded)) return 0;
        for (const std::string& w : *s->wanted) {
          const std::string stem = w.substr(0, w.find(".so") + 3);  // "libc10.so"
          if (loaded.rfind(stem, 0) == 0 && loaded != w) {
            s->clash = "it links " + w + ", but this process already runs " + info->dlpi_name +
                       " (another torch build); loading both would abort the process";
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.clash;
}

}  // namespace switchyard::loader

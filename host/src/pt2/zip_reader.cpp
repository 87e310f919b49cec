// ZipReader over libzip. Entries are read whole into memory: .pt2 weights are read once,
// at load time, and then shared by the graph's constants.
#include "pt2/zip_reader.hpp"

#include <switchyard/error.hpp>

#include <zip.h>

#include <algorithm>
#include <filesystem>

namespace switchyard::pt2 {

namespace {

// A deflated entry may expand, but not past this factor of the archive (plus a margin):
// torch writes its archives uncompressed, so real entries are never near it.
constexpr uint64_t kMaxExpansion = 1024;
constexpr uint64_t kExpansionMargin = uint64_t{1} << 20;

[[noreturn]] void fail(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::Io, what + ": " + why);
}

std::string zip_error_text(zip_error_t* error) {
  std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

}  // namespace

struct ZipReader::Handle {
  zip_t* archive = nullptr;
  std::shared_ptr<const std::string> bytes;  // the memory a memory archive reads
  uint64_t archive_size = 0;
  ~Handle() {
    if (archive != nullptr) zip_discard(archive);
  }
};

ZipReader::ZipReader(ZipReader&&) noexcept = default;
ZipReader& ZipReader::operator=(ZipReader&&) noexcept = default;
ZipReader::~ZipReader() = default;

static void list_names(zip_t* archive, const std::string& what, std::vector<std::string>& names) {
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  if (count < 0) fail(what, "cannot list the zip archive's entries");
  names.reserve(static_cast<size_t>(count));
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(archive, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (name == nullptr) fail(what, "zip entry #" + std::to_string(i) + " has no readable name");
    names.emplace_back(name);
  }
}

ZipReader ZipReader::open_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, "no such file");
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "not a regular file");
  ZipReader reader;
  reader.what_ = path;
  reader.handle_ = std::make_unique<Handle>();
  reader.handle_->archive_size = std::filesystem::file_size(path, ec);
  int code = 0;
  reader.handle_->archive = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (reader.handle_->archive == nullptr) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    fail(path, "not a readable zip archive (" + zip_error_text(&error) +
                   "); a .pt2 file is the zip that "
                   "torch.export.save writes");
  }
  list_names(reader.handle_->archive, path, reader.names_);
  return reader;
}

ZipReader ZipReader::open_memory(std::shared_ptr<const std::string> bytes, const std::string& what) {
  ZipReader reader;
  reader.what_ = what;
  reader.handle_ = std::make_unique<Handle>();
  reader.handle_->bytes = std::move(bytes);
  reader.handle_->archive_size = reader.handle_->bytes->size();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source =
      zip_source_buffer_create(reader.handle_->bytes->data(), reader.handle_->bytes->size(), 0, &error);
  if (source == nullptr) fail(what, "cannot read the embedded zip archive (" + zip_error_text(&error) + ")");
  reader.handle_->archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (reader.handle_->archive == nullptr) {
    zip_source_free(source);
    fail(what, "not a readable zip archive (" + zip_error_text(&error) + ")");
  }
  zip_error_fini(&error);
  list_names(reader.handle_->archive, what, reader.names_);
  return reader;
}

bool ZipReader::has(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

std::string ZipReader::read(const std::string& name) const {
  const std::string what = what_ + ": " + name;
  const zip_int64_t index = zip_name_locate(handle_->archive, name.c_str(), ZIP_FL_ENC_RAW);
  if (index < 0) fail(what_, "the archive has no entry '" + name + "'");
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(handle_->archive, static_cast<zip_uint64_t>(index), 0, &stat) != 0 ||
      (stat.valid & ZIP_STAT_SIZE) == 0)
    fail(what, "cannot read the entry's size (" + std::string(zip_strerror(handle_->archive)) + ")");
  const uint64_t limit = handle_->archive_size * kMaxExpansion + kExpansionMargin;
  if (stat.size > limit)
    fail(what, "the entry claims " + std::to_string(stat.size) + " bytes, implausible in an archive of " +
                   std::to_string(handle_->archive_size) + " bytes (corrupt?)");
  zip_file_t* file = zip_fopen_index(handle_->archive, static_cast<zip_uint64_t>(index), 0);
  if (file == nullptr) fail(what, "cannot open the entry (" + std::string(zip_strerror(handle_->archive)) + ")");
  std::string bytes(static_cast<size_t>(stat.size), '\0');
  const zip_int64_t got = stat.size == 0 ? 0 : zip_fread(file, bytes.data(), stat.size);
  std::string why;
  if (got < 0) why = zip_file_strerror(file);
  zip_fclose(file);
  if (got < 0) fail(what, "cannot read the entry (" + why + "; truncated or corrupt archive?)");
  if (static_cast<uint64_t>(got) != stat.size)
    fail(what, "read " + std::to_string(got) + " of " + std::to_string(stat.size) + " bytes (truncated archive?)");
  return bytes;
}

}  // namespace switchyard::pt2

// A minimal zip reader and writer for the fuzz targets' custom mutators (fuzz_pt2,
// fuzz_torch_pickle): random bytes in a zip mostly break its structure, so these mutators
// take the archive apart, edit one member, and write it again with correct sizes and CRCs.
// Members are stored (method 0) or copied as they are (deflated ones are never edited).
// The layout written is Python zipfile's for stored members without extra fields, the one
// torch's archives use apart from alignment padding (which switchyard's reader ignores).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace syfuzz {

inline uint32_t crc32(const uint8_t* data, size_t size) {
  static const auto table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

struct ZipMember {
  std::string name;
  uint16_t method = 0;  // 0 stored, else copied verbatim, never edited
  uint32_t crc = 0;
  uint32_t usize = 0;         // uncompressed size
  std::vector<uint8_t> data;  // the bytes as they are in the archive

  bool ends_with(const char* s) const {
    const size_t l = std::strlen(s);
    return name.size() >= l && name.compare(name.size() - l, l, s) == 0;
  }
  // New contents for a stored member.
  void set(std::vector<uint8_t> bytes) {
    data = std::move(bytes);
    usize = static_cast<uint32_t>(data.size());
    crc = crc32(data.data(), data.size());
  }
};

inline uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
inline void put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
inline void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

// Reads the central directory. False for anything unusual (zip64, spanning, bad offsets,
// no members): the caller then mutates raw bytes.
inline bool parse_zip(const uint8_t* data, size_t size, std::vector<ZipMember>& members) {
  members.clear();
  if (size < 22) return false;
  size_t eocd = size - 22;
  const size_t stop = size > 22 + 0xFFFF ? size - 22 - 0xFFFF : 0;
  while (get32(data + eocd) != 0x06054b50) {
    if (eocd == stop) return false;
    --eocd;
  }
  const uint16_t count = get16(data + eocd + 10);
  const uint32_t cd_size = get32(data + eocd + 12);
  const uint32_t cd_offset = get32(data + eocd + 16);
  if (cd_offset > eocd || cd_size > eocd - cd_offset) return false;
  size_t p = cd_offset;
  for (uint16_t i = 0; i < count; ++i) {
    if (p + 46 > eocd || get32(data + p) != 0x02014b50) return false;
    ZipMember m;
    m.method = get16(data + p + 10);
    m.crc = get32(data + p + 16);
    const uint32_t csize = get32(data + p + 20);
    m.usize = get32(data + p + 24);
    const uint16_t name_len = get16(data + p + 28), extra_len = get16(data + p + 30),
                   comment_len = get16(data + p + 32);
    const uint32_t local = get32(data + p + 42);
    if (p + 46 + name_len > eocd) return false;
    m.name.assign(reinterpret_cast<const char*>(data + p + 46), name_len);
    p += 46 + size_t{name_len} + extra_len + comment_len;
    if (local + size_t{30} > size || get32(data + local) != 0x04034b50) return false;
    const size_t start = local + size_t{30} + get16(data + local + 26) + get16(data + local + 28);
    if (start > size || csize > size - start) return false;
    if (m.method == 0 && csize != m.usize) return false;
    m.data.assign(data + start, data + start + csize);
    members.push_back(std::move(m));
  }
  return !members.empty();
}

inline bool parse_zip(const std::vector<uint8_t>& bytes, std::vector<ZipMember>& members) {
  return parse_zip(bytes.data(), bytes.size(), members);
}

// Local headers, then the central directory; no extra fields, no comments.
inline std::vector<uint8_t> write_zip(const std::vector<ZipMember>& members) {
  std::vector<uint8_t> out, cd;
  for (const ZipMember& m : members) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<uint8_t>& o = pass == 0 ? out : cd;
      put32(o, pass == 0 ? 0x04034b50 : 0x02014b50);
      if (pass == 1) put16(o, 20);  // version made by
      put16(o, 20);                 // version needed
      put16(o, 0);                  // flags
      put16(o, m.method);
      put16(o, 0);     // time
      put16(o, 0x21);  // date: 1980-01-01
      put32(o, m.crc);
      put32(o, static_cast<uint32_t>(m.data.size()));
      put32(o, m.usize);
      put16(o, static_cast<uint32_t>(m.name.size()));
      put16(o, 0);  // extra field
      if (pass == 1) {
        put16(o, 0);  // comment
        put16(o, 0);  // disk
        put16(o, 0);  // internal attributes
        put32(o, 0);  // external attributes
        put32(o, offset);
      }
      o.insert(o.end(), m.name.begin(), m.name.end());
    }
    out.insert(out.end(), m.data.begin(), m.data.end());
  }
  const uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out.insert(out.end(), cd.begin(), cd.end());
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(members.size()));
  put16(out, static_cast<uint32_t>(members.size()));
  put32(out, static_cast<uint32_t>(cd.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

// libFuzzer's own mutations on `bytes[begin, end)`, which may grow by up to `room` bytes.
inline void mutate_range(std::vector<uint8_t>& bytes, size_t begin, size_t end, size_t room) {
  std::vector<uint8_t> part(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                            bytes.begin() + static_cast<std::ptrdiff_t>(end));
  const size_t old = part.size();
  part.resize(old + room + 1);  // (LLVMFuzzerMutate needs max_size > 0)
  part.resize(LLVMFuzzerMutate(part.data(), old, part.size()));
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(begin), bytes.begin() + static_cast<std::ptrdiff_t>(end));
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(begin), part.begin(), part.end());
}

// Drops, duplicates or renames (libFuzzer's mutations on the name) one member.
inline void restructure(std::vector<ZipMember>& members, std::minstd_rand& rng) {
  const size_t i = rng() % members.size();
  const unsigned what = rng() % 3;
  if (what == 0 && members.size() > 1) {
    members.erase(members.begin() + static_cast<std::ptrdiff_t>(i));
  } else if (what == 1) {
    members.push_back(members[i]);
  } else {
    std::string& name = members[i].name;
    const size_t old = name.size();
    name.resize(old + 9);
    name.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(name.data()), old, name.size()));
  }
}

// A member chosen with probability proportional to weight(member); -1 when all weigh 0.
template <typename Weight>
long pick_member(const std::vector<ZipMember>& members, Weight weight, std::minstd_rand& rng) {
  unsigned total = 0;
  for (const ZipMember& m : members) total += m.method == 0 ? weight(m) : 0;
  if (total == 0) return -1;
  unsigned pick = rng() % total;
  for (size_t i = 0; i < members.size(); ++i) {
    const unsigned w = members[i].method == 0 ? weight(members[i]) : 0;
    if (pick < w) return static_cast<long>(i);
    pick -= w;
  }
  return -1;
}

}  // namespace syfuzz

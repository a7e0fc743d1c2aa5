// The reader against real objects: this test program, the libc it loads and curl (which links
// libcurl), as files, as bytes in memory, as loaded objects, and cut short.
#include "elf/dynamic.h"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace curlretry::elf {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every DT_NEEDED of the first PT_DYNAMIC of the file held in `bytes`.
std::vector<std::string> needed_of(const std::string& bytes) {
  const MemorySource source(bytes.data(), bytes.size());
  Header header;
  if (!read_header(source, &header)) return {};
  Segment segment;
  for (std::uint64_t i = 0; read_segment(source, header, i, &segment); ++i) {
    if (segment.type != kPtDynamic) continue;
    const Dynamic dynamic = file_dynamic(source, header, segment);
    std::vector<std::string> out;
    DynamicEntry entry;
    for (std::uint64_t j = 0; read_dynamic_entry(source, dynamic, j, &entry); ++j) {
      char name[256];
      if (entry.tag == kDtNeeded && dynamic_string(source, dynamic, entry.value, name, sizeof name) >= 0)
        out.emplace_back(name);
    }
    return out;
  }
  return {};
}

const char* kCurl = "/usr/bin/curl";

TEST(ElfDynamic, ThisProgramNeedsLibcAndNotLibcurl) {
  const std::vector<std::string> needed = needed_of(slurp("/proc/self/exe"));
  EXPECT_NE(std::find(needed.begin(), needed.end(), "libc.so.6"), needed.end());
  EXPECT_FALSE(file_needs("/proc/self/exe", "libcurl"));
  EXPECT_TRUE(file_needs("/proc/self/exe", "libc.so"));
}

TEST(ElfDynamic, CurlNeedsLibcurlAsAFileAndAsBytes) {
  if (::access(kCurl, R_OK) != 0) GTEST_SKIP() << kCurl << " is not installed";
  EXPECT_TRUE(file_needs(kCurl, "libcurl"));
  const std::vector<std::string> needed = needed_of(slurp(kCurl));
  EXPECT_NE(std::find(needed.begin(), needed.end(), "libcurl.so.4"), needed.end());
}

TEST(ElfDynamic, CutShortItStaysWithinTheBytes) {
  if (::access(kCurl, R_OK) != 0) GTEST_SKIP() << kCurl << " is not installed";
  const std::string bytes = slurp(kCurl);
  // Cut short anywhere in the first 16 KiB (headers, dynamic array, strings), the reader must stay
  // inside the bytes and must not invent a name.
  for (std::size_t size = 0; size < std::min<std::size_t>(bytes.size(), 16384); size += 7) {
    const std::string cut = bytes.substr(0, size);
    for (const std::string& name : needed_of(cut)) EXPECT_LT(name.size(), 256u);
  }
}

TEST(ElfDynamic, NotElfAndMissingFilesAreFalse) {
  EXPECT_FALSE(file_needs("/nonexistent/libfoo.so", "libcurl"));
  EXPECT_FALSE(file_needs("/etc/passwd", "libcurl"));
  const std::string text = "#!/bin/sh\necho libcurl\n";
  const MemorySource source(text.data(), text.size());
  Header header;
  EXPECT_FALSE(read_header(source, &header));
}

int check_libstdcxx(struct dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libstdc++") == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const LoadedSource memory;
    const Dynamic dynamic = loaded_dynamic(memory, info->dlpi_addr + info->dlpi_phdr[i].p_vaddr, info->dlpi_addr);
    char name[64];
    *static_cast<bool*>(data) = find_needed(memory, dynamic, "libc.so", name, sizeof name) &&
                                std::string(name) == "libc.so.6";
    return 1;
  }
  return 0;
}

TEST(ElfDynamic, ALoadedObjectIsReadWhereTheLoaderMappedIt) {
  bool libstdcxx_needs_libc = false;
  dl_iterate_phdr(check_libstdcxx, &libstdcxx_needs_libc);
  EXPECT_TRUE(libstdcxx_needs_libc);
}

TEST(ElfDynamic, BigEndianAndThirtyTwoBitFieldsAreDecoded) {
  const unsigned char bytes[] = {0x12, 0x34, 0x56, 0x78};
  const MemorySource source(reinterpret_cast<const char*>(bytes), sizeof bytes);
  std::uint64_t value = 0;
  ASSERT_TRUE(read_uint(source, Format{false, false}, 0, 4, &value));
  EXPECT_EQ(value, 0x12345678u);
  ASSERT_TRUE(read_uint(source, Format{false, true}, 0, 4, &value));
  EXPECT_EQ(value, 0x78563412u);
  EXPECT_FALSE(read_uint(source, Format{}, 1, 4, &value));
}

}  // namespace
}  // namespace curlretry::elf

#include "proxy/ensure_records.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string_view>

namespace curlretry::proxy {
namespace {

constexpr std::string_view kBesideInfix = ".cfg-";
constexpr std::size_t kConfigIdSize = 12;  // proxy::config_id's hex digits
constexpr std::string_view kPortSuffix = ".port";

}  // namespace

std::string stem_of(const boost::asio::ip::tcp::endpoint& where) {
  return "proxy-" + where.address().to_string() + "-" + std::to_string(where.port());
}

std::string beside_stem(const boost::asio::ip::tcp::endpoint& where, const std::string& config_id) {
  return stem_of(where) + std::string(kBesideInfix) + config_id;
}

std::vector<std::string> beside_stems(const state::Dir& dir, const boost::asio::ip::tcp::endpoint& where) {
  std::vector<std::string> out;
  const std::string prefix = stem_of(where) + std::string(kBesideInfix);
  // A descriptor of its own: readdir moves the offset of the one it reads.
  const int fd = ::openat(dir.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return out;
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    ::close(fd);
    return out;
  }
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name.size() != prefix.size() + kConfigIdSize + kPortSuffix.size() || !name.starts_with(prefix) ||
        !name.ends_with(kPortSuffix)) {
      continue;
    }
    if (name.substr(prefix.size(), kConfigIdSize).find_first_not_of("0123456789abcdef") != std::string_view::npos) {
      continue;
    }
    out.emplace_back(name.substr(0, name.size() - kPortSuffix.size()));
  }
  ::closedir(listing);
  return out;
}

std::optional<unsigned short> recorded_port(const state::Dir& dir, const std::string& stem) {
  std::string error;
  const int fd = dir.open_file(stem + std::string(kPortSuffix), O_RDONLY, error);
  if (fd < 0) return std::nullopt;
  char text[8] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  unsigned long port = 0;
  ssize_t i = 0;
  for (; i < n && text[i] >= '0' && text[i] <= '9' && port <= 65535; ++i) port = port * 10 + (text[i] - '0');
  if (i == 0 || i + 1 != n || text[i] != '\n' || port == 0 || port > 65535) return std::nullopt;
  return static_cast<unsigned short>(port);
}

}  // namespace curlretry::proxy

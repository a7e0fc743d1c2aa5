#include "cli/privilege.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include <cstdint>
#include <fstream>
#include <iterator>

namespace curlretry::cli::doctor {
namespace {

const char* capability_name(int bit) {
  static constexpr const char* kNames[] = {
      "chown",        "dac_override",   "dac_read_search", "fowner",        "fsetid",     "kill",
      "setgid",       "setuid",         "setpcap",         "linux_immutable", "net_bind_service",
      "net_broadcast", "net_admin",     "net_raw",         "ipc_lock",      "ipc_owner",  "sys_module",
      "sys_rawio",    "sys_chroot",     "sys_ptrace",      "sys_pacct",     "sys_admin",  "sys_boot",
      "sys_nice",     "sys_resource",   "sys_time",        "sys_tty_config", "mknod",     "lease",
      "audit_write",  "audit_control",  "setfcap",         "mac_override",  "mac_admin",  "syslog",
      "wake_alarm",   "block_suspend",  "audit_read",      "perfmon",       "bpf",        "checkpoint_restore"};
  return bit >= 0 && bit < static_cast<int>(std::size(kNames)) ? kNames[bit] : nullptr;
}

// "cap_net_raw=ep" style text of the file's capabilities, or empty when it has none.
std::string file_capabilities(const std::string& path) {
  unsigned char buf[64];
  const ssize_t n = ::getxattr(path.c_str(), "security.capability", buf, sizeof buf);
  if (n < 4) return {};
  auto le32 = [&](int off) -> std::uint32_t {
    if (off + 4 > n) return 0;
    return static_cast<std::uint32_t>(buf[off]) | static_cast<std::uint32_t>(buf[off + 1]) << 8 |
           static_cast<std::uint32_t>(buf[off + 2]) << 16 | static_cast<std::uint32_t>(buf[off + 3]) << 24;
  };
  const std::uint32_t magic = le32(0);
  const bool effective = (magic & 1) != 0;
  const std::uint64_t permitted = le32(4) | (static_cast<std::uint64_t>(le32(12)) << 32);
  std::string names;
  for (int bit = 0; bit < 64; ++bit) {
    if ((permitted >> bit & 1) == 0) continue;
    const char* name = capability_name(bit);
    names += (names.empty() ? "cap_" : ",cap_") + (name ? std::string(name) : std::to_string(bit));
  }
  if (names.empty()) return "file capabilities (security.capability)";
  return names + (effective ? "=ep" : "=p");
}

std::string account_name(const char* file, unsigned id) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    const auto c = b == std::string::npos ? b : line.find(':', b + 1);
    if (c == std::string::npos) continue;
    if (line.substr(b + 1, c - b - 1) == std::to_string(id)) return line.substr(0, a);
  }
  return std::to_string(id);
}

}  // namespace

Privilege privilege_of(const std::string& path) {
  Privilege p;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return p;
  if ((st.st_mode & S_ISUID) != 0) p.phrases.push_back("is set-user-ID " + account_name("/etc/passwd", st.st_uid));
  // Without group execute permission the bit means mandatory locking, not set-group-ID.
  if ((st.st_mode & S_ISGID) != 0 && (st.st_mode & S_IXGRP) != 0) {
    p.phrases.push_back("is set-group-ID " + account_name("/etc/group", st.st_gid));
  }
  if (const auto caps = file_capabilities(path); !caps.empty()) p.phrases.push_back("has file capabilities " + caps);
  struct statvfs vfs{};
  p.nosuid_mount = !p.phrases.empty() && ::statvfs(path.c_str(), &vfs) == 0 && (vfs.f_flag & ST_NOSUID) != 0;
  return p;
}

}  // namespace curlretry::cli::doctor

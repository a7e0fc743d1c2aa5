#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "fleet/location.h"
#include "temp_dir.h"

namespace curlretry::fleet {
namespace {

using testing::TempDir;

TEST(StoreDir, ConfiguredWins) {
  auto env = [](const char*) -> const char* { return "/run/user/1000"; };
  EXPECT_EQ(store_dir("/tmp/x", env), "/tmp/x");
}

TEST(StoreDir, XdgRuntimeDirThenDevShm) {
  TempDir tmp;
  static std::string runtime;
  runtime = tmp.path();
  auto xdg = [](const char* name) -> const char* {
    return std::string(name) == "XDG_RUNTIME_DIR" ? runtime.c_str() : nullptr;
  };
  EXPECT_EQ(store_dir("", xdg), runtime + "/curlretry");
  auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_EQ(store_dir("", none), "/dev/shm/curlretry-" + std::to_string(::getuid()));
  auto relative = [](const char*) -> const char* { return "relative"; };
  EXPECT_EQ(store_dir("", relative), "/dev/shm/curlretry-" + std::to_string(::getuid()));
}

TEST(StoreDir, AnotherUsersRuntimeDirIsNotUsed) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  TempDir tmp;
  ASSERT_EQ(::chown(tmp.path().c_str(), 65534, 65534), 0);
  static std::string runtime;
  runtime = tmp.path();
  auto xdg = [](const char* name) -> const char* {
    return std::string(name) == "XDG_RUNTIME_DIR" ? runtime.c_str() : nullptr;
  };
  EXPECT_EQ(store_dir("", xdg), "/dev/shm/curlretry-" + std::to_string(::getuid()));
  auto missing = [](const char*) -> const char* { return "/nonexistent/run/user/1"; };
  EXPECT_EQ(store_dir("", missing), "/dev/shm/curlretry-" + std::to_string(::getuid()));
}

TEST(PrivateDir, CreatedWithMode0700) {
  TempDir tmp;
  ASSERT_EQ(ensure_private_dir(tmp.store()), "");
  struct stat st {};
  ASSERT_EQ(::stat(tmp.store().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(PrivateDir, OpenToOthersIsRefused) {
  TempDir tmp;
  ASSERT_EQ(::mkdir(tmp.store().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(tmp.store().c_str(), 0755), 0);
  EXPECT_EQ(ensure_private_dir(tmp.store()),
            "the fleet directory " + tmp.store() +
                " is open to others (mode 0755, must be 0700); refusing it: fix with chmod 700 " + tmp.store());
}

TEST(PrivateDir, AFileIsRefused) {
  TempDir tmp;
  std::ofstream(tmp.store()) << "x";
  EXPECT_EQ(ensure_private_dir(tmp.store()),
            "the fleet directory " + tmp.store() + " is not a directory (a file); refusing it: remove it");
}

TEST(PrivateDir, ASymlinkIsRefused) {
  TempDir tmp;
  ASSERT_EQ(::mkdir((tmp.path() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((tmp.path() + "/real").c_str(), tmp.store().c_str()), 0);
  EXPECT_EQ(ensure_private_dir(tmp.store()),
            "the fleet directory " + tmp.store() + " is not a directory (a symlink); refusing it: remove it");
}

TEST(PrivateDir, ARelativePathIsRefused) {
  EXPECT_EQ(ensure_private_dir("rel/dir"), "the fleet directory \"rel/dir\" is not an absolute path");
}

TEST(PrivateDir, ForeignOwnerIsRefused) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  TempDir tmp;
  ASSERT_EQ(::mkdir(tmp.store().c_str(), 0700), 0);
  ASSERT_EQ(::chown(tmp.store().c_str(), 65534, 65534), 0);
  EXPECT_EQ(ensure_private_dir(tmp.store()),
            "the fleet directory " + tmp.store() +
                " belongs to uid 65534, not to you (uid 0); refusing it: have user nobody (or root) remove it");
}

}  // namespace
}  // namespace curlretry::fleet

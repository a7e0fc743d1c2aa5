// state/private_dir.h: the one rule for private state (tested here beside the fleet, its first
// user). Files inside are opened relative to the checked directory, never through a link.
#include "state/private_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "temp_dir.h"

namespace curlretry::state {
namespace {

using fleet::testing::TempDir;

TEST(PrivateState, FilesAreMade0600WhateverTheUmask) {
  TempDir tmp;
  const Dir dir = open_private_dir(tmp.store(), "the proxy directory");
  ASSERT_TRUE(dir) << dir.error();
  const mode_t old = ::umask(0);
  std::string error;
  const int fd = dir.open_file("x.log", O_WRONLY | O_CREAT | O_APPEND, error);
  ::umask(old);
  ASSERT_GE(fd, 0) << error;
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ::close(fd);
}

TEST(PrivateState, ALinkInsideIsNotFollowed) {
  TempDir tmp;
  const Dir dir = open_private_dir(tmp.store(), "");
  ASSERT_TRUE(dir) << dir.error();
  const std::string victim = tmp.path() + "/victim";
  std::ofstream(victim) << "untouched\n";
  ASSERT_EQ(::symlink(victim.c_str(), (tmp.store() + "/x.log").c_str()), 0);
  std::string error;
  EXPECT_EQ(dir.open_file("x.log", O_WRONLY | O_CREAT | O_APPEND, error), -1);
  EXPECT_EQ(error, tmp.store() + "/x.log is a symlink; refusing it: remove it");
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "untouched\n");
}

TEST(PrivateState, AFileOpenToOthersIsRefused) {
  TempDir tmp;
  const Dir dir = open_private_dir(tmp.store(), "");
  ASSERT_TRUE(dir) << dir.error();
  const std::string path = tmp.store() + "/x.log";
  std::ofstream(path) << "";
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  std::string error;
  EXPECT_EQ(dir.open_file("x.log", O_WRONLY | O_APPEND, error), -1);
  EXPECT_EQ(error, path + " is open to others (mode 0666, must be 0600); refusing it: fix with chmod 600 " + path);
}

TEST(PrivateState, ParentsAreMadeOnRequest) {
  TempDir tmp;
  const Dir dir = open_private_dir(tmp.path() + "/a/b/ca", "", true);
  ASSERT_TRUE(dir) << dir.error();
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() + "/a/b/ca").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(PrivateState, DefaultIsTheRuntimeDirThenDevShm) {
  TempDir tmp;
  static std::string runtime;
  runtime = tmp.path() + "/";
  auto xdg = [](const char* name) -> const char* {
    return std::string(name) == "XDG_RUNTIME_DIR" ? runtime.c_str() : nullptr;
  };
  EXPECT_EQ(default_dir(xdg), tmp.path() + "/curlretry");
  auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_EQ(default_dir(none), "/dev/shm/curlretry-" + std::to_string(::getuid()));
}

}  // namespace
}  // namespace curlretry::state

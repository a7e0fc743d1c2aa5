// state/user_named_file.h: a file the user names in a directory anyone can write to, against what
// another user planted there (the kernel's protected_symlinks and protected_regular rules, applied
// by us). Another user's links and files are made with lchown, so these need root; the real
// second user is in tests/integration/test_shared_machine.py.
#include "state/user_named_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "temp_dir.h"

namespace curlretry::state {
namespace {

using fleet::testing::TempDir;

constexpr uid_t kOther = 54321;  // no such user is needed: lchown takes any number
constexpr int kFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC;

std::string read(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class UserNamedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link or a file to another uid";
    ASSERT_EQ(::mkdir(shared().c_str(), 0777), 0);
    ASSERT_EQ(::chmod(shared().c_str(), 01777), 0);  // what /tmp is
    std::ofstream(victim()) << "untouched\n";
  }
  std::string shared() const { return tmp_.path() + "/shared"; }
  std::string victim() const { return tmp_.path() + "/victim"; }
  // A link at `name` in the shared directory to the victim's file, owned by `owner`.
  std::string link(const std::string& name, uid_t owner) const {
    const std::string at = shared() + "/" + name;
    EXPECT_EQ(::symlink(victim().c_str(), at.c_str()), 0);
    EXPECT_EQ(::lchown(at.c_str(), owner, owner), 0);
    return at;
  }
  TempDir tmp_;
};

TEST_F(UserNamedFile, AnotherUsersLinkIsNotFollowed) {
  const std::string at = link("attempts.jsonl", kOther);
  Planted planted;
  EXPECT_EQ(open_user_named(at.c_str(), kFlags, 0600, planted), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(planted.kind, Planted::Kind::link);
  EXPECT_EQ(planted.owner, kOther);
  EXPECT_EQ(read(victim()), "untouched\n");
  EXPECT_EQ(describe(planted),
            "a symbolic link owned by uid 54321 in a directory anyone can write to: not followed, another user "
            "may have put it there");
}

TEST_F(UserNamedFile, OnesOwnLinkInAStickyDirectoryIsFollowed) {
  const std::string at = link("mine.jsonl", ::geteuid());
  Planted planted;
  const int fd = open_user_named(at.c_str(), kFlags, 0600, planted);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(planted);
  ASSERT_EQ(::write(fd, "line\n", 5), 5);
  ::close(fd);
  EXPECT_EQ(read(victim()), "untouched\nline\n");
}

TEST_F(UserNamedFile, WithoutTheStickyBitEvenOnesOwnLinkIsNotFollowed) {
  // Anyone may rename it away there and put theirs in its place between a look and the open.
  ASSERT_EQ(::chmod(shared().c_str(), 0777), 0);
  const std::string at = link("mine.jsonl", ::geteuid());
  Planted planted;
  EXPECT_EQ(open_user_named(at.c_str(), kFlags, 0600, planted), -1);
  EXPECT_EQ(planted.kind, Planted::Kind::link);
  EXPECT_EQ(read(victim()), "untouched\n");
}

TEST_F(UserNamedFile, AnotherUsersFileIsNotWrittenTo) {
  const std::string at = shared() + "/curlretry.log";
  std::ofstream(at) << "";
  ASSERT_EQ(::chown(at.c_str(), kOther, kOther), 0);
  ASSERT_EQ(::chmod(at.c_str(), 0666), 0);
  Planted planted;
  EXPECT_EQ(open_user_named(at.c_str(), kFlags, 0600, planted), -1);
  EXPECT_EQ(planted.kind, Planted::Kind::file);
  EXPECT_EQ(planted.owner, kOther);
  EXPECT_EQ(read(at), "");
  EXPECT_EQ(describe(planted),
            "a file owned by uid 54321 in a directory anyone can write to: not written to, another user may "
            "have put it there");
}

TEST_F(UserNamedFile, TheDirectoryOwnersFileAndANewNameAreFine) {
  // The directory is root's, as /tmp is: root's own file there is trusted, as the kernel trusts it.
  const std::string owners = shared() + "/owners.log";
  std::ofstream(owners) << "";
  Planted planted;
  int fd = open_user_named(owners.c_str(), kFlags, 0600, planted);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(planted);
  ::close(fd);
  const std::string fresh = shared() + "/fresh.log";
  fd = open_user_named(fresh.c_str(), kFlags, 0600, planted);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ::close(fd);
}

TEST_F(UserNamedFile, OutsideADirectoryAnyoneCanWriteToLinksAreFollowedAsBefore) {
  // /dev/stderr is a link; a user's own directories may hold links of anyone's (root's, a
  // package's): the rule is about shared directories only.
  const std::string own = tmp_.path() + "/own";
  ASSERT_EQ(::mkdir(own.c_str(), 0755), 0);
  const std::string at = own + "/log";
  ASSERT_EQ(::symlink(victim().c_str(), at.c_str()), 0);
  ASSERT_EQ(::lchown(at.c_str(), kOther, kOther), 0);
  Planted planted;
  const int fd = open_user_named(at.c_str(), kFlags, 0600, planted);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(planted);
  ::close(fd);
}

TEST(UserNamedFileErrors, OpensOwnFailuresAreErrnoAndNothingPlanted) {
  Planted planted;
  EXPECT_EQ(open_user_named("/nonexistent-curlretry-dir/x.log", kFlags, 0600, planted), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_FALSE(planted);
  EXPECT_EQ(open_user_named("/", kFlags, 0600, planted), -1);
  EXPECT_EQ(errno, EISDIR);
  EXPECT_FALSE(planted);
}

}  // namespace
}  // namespace curlretry::state

// Which file is read: explicit, $CURLRETRY_CONFIG, XDG, ~/.config, the system file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/file_trust.h"
#include "test_env.h"

namespace curlretry::config {
namespace {

namespace fs = std::filesystem;
using testing::FakeEnv;

class FileSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/curlretry-config-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    env_.vars["HOME"] = root_ + "/home";
    env_.vars["XDG_CONFIG_HOME"] = root_ + "/xdg";
    env_.system_file = root_ + "/etc/curlretry/config.yaml";
  }
  void TearDown() override { fs::remove_all(root_); }

  // A config whose max_attempts identifies it.
  std::string write(const std::string& relative, int attempts) {
    const std::string path = root_ + "/" + relative;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << "version: 1\ndefaults:\n  max_attempts: " << attempts << "\n";
    return path;
  }

  int attempts_loaded(const std::optional<std::string>& explicit_path = std::nullopt) {
    const LoadResult r = load(env_.env(), explicit_path);
    EXPECT_TRUE(r.ok()) << r.error;
    return r.ok() ? r.config->defaults.max_attempts : 0;
  }

  std::string root_;
  FakeEnv env_;
};

TEST_F(FileSearch, NothingFoundMeansBuiltInDefaults) {
  const LoadResult r = load(env_.env());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->file.empty());
  EXPECT_EQ(r.config->defaults.max_attempts, 3);
}

TEST_F(FileSearch, EachLocationInOrder) {
  write("etc/curlretry/config.yaml", 11);
  EXPECT_EQ(attempts_loaded(), 11);
  write("home/.config/curlretry/config.yaml", 12);
  EXPECT_EQ(attempts_loaded(), 12);
  write("xdg/curlretry/config.yaml", 13);
  EXPECT_EQ(attempts_loaded(), 13);
  env_.vars["CURLRETRY_CONFIG"] = write("named.yaml", 14);
  EXPECT_EQ(attempts_loaded(), 14);
  EXPECT_EQ(attempts_loaded(write("explicit.yaml", 15)), 15);
}

TEST_F(FileSearch, TheFileReadIsRecordedAndUsedInSources) {
  const std::string path = write("xdg/curlretry/config.yaml", 5);
  const LoadResult r = load(env_.env());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->file, path);
  EXPECT_EQ(r.config->default_sources.at("max_attempts"), path + ":3:17");
}

TEST_F(FileSearch, ExplicitHomeBeatsTheHomeVariable) {
  write("other/.config/curlretry/config.yaml", 21);
  env_.home = root_ + "/other";
  EXPECT_EQ(attempts_loaded(), 21);
}

TEST_F(FileSearch, RelativeXdgConfigHomeIsIgnored) {
  env_.vars["XDG_CONFIG_HOME"] = "relative/xdg";
  write("home/.config/curlretry/config.yaml", 12);
  EXPECT_EQ(attempts_loaded(), 12);
}

TEST_F(FileSearch, AMissingNamedFileIsAnError) {
  env_.vars["CURLRETRY_CONFIG"] = root_ + "/missing.yaml";
  write("etc/curlretry/config.yaml", 11);  // must not be used instead
  const LoadResult r = load(env_.env());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "CURLRETRY_CONFIG=" + root_ + "/missing.yaml: cannot read the config: No such file or directory");

  const LoadResult e = load(env_.env(), root_ + "/also-missing.yaml");
  EXPECT_EQ(e.error, root_ + "/also-missing.yaml: cannot read the config: No such file or directory");
}

TEST_F(FileSearch, ADirectoryOrAnOversizedFileIsAnError) {
  fs::create_directories(root_ + "/xdg/curlretry/config.yaml");
  const LoadResult dir = load(env_.env());
  EXPECT_EQ(dir.error, root_ + "/xdg/curlretry/config.yaml: cannot read the config: is a directory");

  const std::string big = root_ + "/big.yaml";
  std::ofstream(big) << "version: 1\n" << std::string(1024 * 1024, '#') << "\n";
  const LoadResult r = load(env_.env(), big);
  EXPECT_EQ(r.error, big + ": cannot read the config: file is larger than 1024 KiB; refusing to read it");
}

TEST_F(FileSearch, AnInvalidFallbackFileIsAnErrorNotSkipped) {
  write("home/.config/curlretry/config.yaml", 0);
  const LoadResult r = load(env_.env());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error.rfind(root_ + "/home/.config/curlretry/config.yaml:3:17: defaults.max_attempts:", 0), 0u)
      << r.error;
}

constexpr const char* kUntrustedWhy =
    ": a config can name a command to run and the upstreams that get your credentials, so curlretry reads only one "
    "no other user can change";

TEST_F(FileSearch, AConfigAnyUserCanWriteIsAnErrorNotSkipped) {
  const std::string path = write("home/.config/curlretry/config.yaml", 4);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  const LoadResult r = load(env_.env());
  EXPECT_EQ(r.error, path + ": cannot read the config: any user can write to it (mode 0666)" + kUntrustedWhy +
                         "; chmod o-w " + path);
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);  // group-writable: a user-private group's default
  EXPECT_EQ(attempts_loaded(), 4);
}

TEST_F(FileSearch, AConfigInADirectoryAnyoneCanRenameInIsAnError) {
  const std::string path = write("shared/zai.yaml", 4);
  ASSERT_EQ(::chmod((root_ + "/shared").c_str(), 0777), 0);
  const LoadResult r = load(env_.env(), path);
  EXPECT_EQ(r.error, path + ": cannot read the config: any user can replace it: its directory " + root_ +
                         "/shared is writable by anyone without the sticky bit (mode 0777)" + kUntrustedWhy);
  ASSERT_EQ(::chmod((root_ + "/shared").c_str(), 01777), 0);  // what /tmp is: only the owner may replace it
  EXPECT_EQ(attempts_loaded(path), 4);
}

TEST(FileTrust, TheOwnerMustBeTheReaderOrRoot) {
  struct stat st {};
  st.st_mode = S_IFREG | 0644;
  st.st_uid = 1001;
  EXPECT_EQ(untrusted_config(st, "/x/c.yaml", 1002),
            std::string("it belongs to uid 1001, not to you (uid 1002) nor root") + kUntrustedWhy);
  EXPECT_EQ(untrusted_config(st, "/x/c.yaml", 1001), "");
  st.st_uid = 0;
  EXPECT_EQ(untrusted_config(st, "/x/c.yaml", 1002), "");  // /etc's files, the presets
}

TEST_F(FileSearch, SecureExecutionReadsOnlyTheSystemFile) {
  write("etc/curlretry/config.yaml", 11);
  write("xdg/curlretry/config.yaml", 13);
  env_.vars["CURLRETRY_CONFIG"] = write("named.yaml", 14);
  env_.secure = true;
  EXPECT_EQ(attempts_loaded(), 11);
  EXPECT_EQ(attempts_loaded(write("explicit.yaml", 15)), 11);
  fs::remove(env_.system_file);
  const LoadResult r = load(env_.env());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.config->file.empty());
}

TEST_F(FileSearch, EnvStillOverridesTheFileFound) {
  write("xdg/curlretry/config.yaml", 13);
  env_.vars["BILI_REPLAY_RETRY_MAX"] = "1";
  EXPECT_EQ(attempts_loaded(), 1);
}

TEST(FileSearchProcess, ProcessEnvironmentReadsGetenv) {
  ::setenv("CURLRETRY_TEST_PROBE", "yes", 1);
  const Environment env = Environment::process();
  ASSERT_TRUE(env.get);
  EXPECT_STREQ(env.get("CURLRETRY_TEST_PROBE"), "yes");
  EXPECT_FALSE(env.secure);  // the test binary is not setuid
  EXPECT_EQ(env.system_file, "/etc/curlretry/config.yaml");
}

}  // namespace
}  // namespace curlretry::config

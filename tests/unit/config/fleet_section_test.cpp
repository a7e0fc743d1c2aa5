// The `fleet:` section and CURLRETRY_FLEET / CURLRETRY_FLEET_DIR.
#include <gtest/gtest.h>

#include "test_env.h"

namespace curlretry::config {
namespace {

using std::chrono::milliseconds;
using testing::FakeEnv;
using testing::load_yaml;

TEST(FleetSection, BuiltInsAreMachineStoreTenPercentTenSecondsTenReserve) {
  LoadResult r = load_yaml("version: 1\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const FleetSettings& f = r.config->settings.fleet;
  EXPECT_EQ(f.store, FleetStore::machine);
  EXPECT_FALSE(f.hold_new);
  EXPECT_EQ(f.budget.percent, 10);
  EXPECT_EQ(f.budget.window, milliseconds(10000));
  EXPECT_EQ(f.budget.reserve, 10);
  EXPECT_EQ(r.config->settings_sources.at("fleet.budget.percent"), "built-in");
}

TEST(FleetSection, EveryKeyIsReadWithItsPosition) {
  LoadResult r = load_yaml(
      "version: 1\n"
      "fleet:\n"
      "  store: off\n"
      "  hold_new: true\n"
      "  budget: {percent: 20, window_ms: 2000, reserve: 3}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  const FleetSettings& f = r.config->settings.fleet;
  EXPECT_EQ(f.store, FleetStore::off);
  EXPECT_TRUE(f.hold_new);
  EXPECT_EQ(f.budget.percent, 20);
  EXPECT_EQ(f.budget.window, milliseconds(2000));
  EXPECT_EQ(f.budget.reserve, 3);
  EXPECT_EQ(r.config->settings_sources.at("fleet.store"), "test.yaml:3:10");
  EXPECT_EQ(r.config->settings_sources.at("fleet.budget.reserve"), "test.yaml:5:51");
}

TEST(FleetSection, RedisUrl) {
  LoadResult r = load_yaml("version: 1\nfleet: {store: \"redis://127.0.0.1:6379/2\"}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->settings.fleet.store, FleetStore::redis);
  EXPECT_EQ(r.config->settings.fleet.redis_url, "redis://127.0.0.1:6379/2");
}

TEST(FleetSection, RedisUrlWithAnIpv6Host) {
  LoadResult r = load_yaml("version: 1\nfleet: {store: \"redis://[::1]:6380/1\"}\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->settings.fleet.redis_url, "redis://[::1]:6380/1");
  // The port after the brackets is checked like any other.
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  store: \"redis://[::1]:x/0\"\n").error,
            "test.yaml:3:10: fleet.store: \"redis://[::1]:x/0\": the port of a redis:// URL must be 1..65535");
}

TEST(FleetSection, ErrorsNameFileLineColumn) {
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  stor: off\n").error,
            "test.yaml:3:3: fleet.stor: unknown key; did you mean \"store\"?");
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  store: cluster\n").error,
            "test.yaml:3:10: fleet.store: \"cluster\": expected off, machine or redis://host:port/db");
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  budget: {percent: 1001}\n").error,
            "test.yaml:3:21: fleet.budget.percent: 1001 is out of range (expected a percentage of requests, 0..1000)");
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  budget: {window_ms: 100}\n").error,
            "test.yaml:3:23: fleet.budget.window_ms: 100 is out of range (expected ms, 500..64000)");
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  store: \"redis://:6379\"\n").error,
            "test.yaml:3:10: fleet.store: \"redis://:6379\": a redis:// URL needs a host (redis://127.0.0.1:6379/0)");
  EXPECT_EQ(load_yaml("version: 1\nfleet:\n  store: \"redis://u:pw@h:1/0\"\n").error,
            "test.yaml:3:10: fleet.store: \"redis://u:pw@h:1/0\": a redis:// URL with a password is not supported "
            "(it would end up in logs and `check`)");
}

TEST(FleetSection, EnvOverridesTheFile) {
  FakeEnv env;
  env.vars["CURLRETRY_FLEET"] = "off";
  env.vars["CURLRETRY_FLEET_DIR"] = "/tmp/fleet-x";
  LoadResult r = load_yaml("version: 1\nfleet: {store: machine}\n", env);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.config->settings.fleet.store, FleetStore::off);
  EXPECT_EQ(r.config->settings.fleet.dir, "/tmp/fleet-x");
  EXPECT_EQ(r.config->settings_sources.at("fleet.store"), "env CURLRETRY_FLEET");
  EXPECT_EQ(r.config->settings_sources.at("fleet.dir"), "env CURLRETRY_FLEET_DIR");
}

TEST(FleetSection, BadEnvNamesTheVariable) {
  FakeEnv env;
  env.vars["CURLRETRY_FLEET"] = "everywhere";
  EXPECT_EQ(load_yaml("version: 1\n", env).error,
            "CURLRETRY_FLEET=everywhere: expected off, machine or redis://host:port/db");
  FakeEnv rel;
  rel.vars["CURLRETRY_FLEET_DIR"] = "fleet";
  EXPECT_EQ(load_yaml("version: 1\n", rel).error, "CURLRETRY_FLEET_DIR=fleet: not an absolute path");
}

}  // namespace
}  // namespace curlretry::config

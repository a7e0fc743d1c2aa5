// How `curlretry -- omp` hands oh-my-pi curlretry's proxy in PI_PROXY (proxy/omp_proxy.h), which
// omp reads in place of HTTPS_PROXY for its provider requests.
#include "proxy/omp_proxy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/unit/proxy/scratch.h"

namespace curlretry::proxy {
namespace {

const boost::asio::ip::tcp::endpoint kWhere(boost::asio::ip::make_address("127.0.0.1"), 7878);
const std::string kOrigin = "http://127.0.0.1:7878";

class OmpProxy : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"PI_PROXY", "PI_PROXY_ANTHROPIC", "PI_PROXYX", "CURLRETRY_VIA_PROXY"}) {
      env.set(name, nullptr);
    }
  }
  std::string pi_proxy() const {
    const char* value = std::getenv("PI_PROXY");
    return value != nullptr ? value : "(unset)";
  }

  testing::Scratch env;
};

TEST_F(OmpProxy, UnsetItIsCurlretrysProxy) {
  EXPECT_EQ(hand_omp_proxy("/usr/local/bin/omp", kOrigin, kWhere, ""), "");
  EXPECT_EQ(pi_proxy(), kOrigin);
  env.set("PI_PROXYX", "http://unrelated.example:1");  // not one of omp's
  EXPECT_EQ(hand_omp_proxy("omp", kOrigin, kWhere, ""), "");
}

TEST_F(OmpProxy, CurlretrysOwnOrTheOneItGoesThroughIsReplaced) {
  env.set("PI_PROXY", "http://localhost:7878");  // a shell exporting curlretry's proxy for every program
  EXPECT_EQ(hand_omp_proxy("omp", kOrigin, kWhere, ""), "");
  EXPECT_EQ(pi_proxy(), kOrigin);
  // The company's proxy, in HTTPS_PROXY too: curlretry's proxy goes through it, so omp's requests
  // still leave by it.
  env.set("PI_PROXY", "http://user:pw@proxy.corp.example:3128");
  EXPECT_EQ(hand_omp_proxy("omp", kOrigin, kWhere, "http://user:pw@proxy.corp.example:3128"), "");
  EXPECT_EQ(pi_proxy(), kOrigin);
}

TEST_F(OmpProxy, AProxyOfTheUsersOwnIsKeptAndOmpIsToldItsRequestsThereAreNotRetried) {
  env.set("PI_PROXY", "http://user:s3cret@proxy.eu.example:3128");
  EXPECT_EQ(hand_omp_proxy("/opt/omp/bin/omp", kOrigin, kWhere, ""),
            "curlretry: proxy: PI_PROXY names a proxy of yours, which omp sends its provider requests through in "
            "place of curlretry's: none of them is retried; to have them retried, name that proxy in HTTPS_PROXY "
            "instead (curlretry's proxy then reaches the providers through it)");
  EXPECT_EQ(pi_proxy(), "http://user:s3cret@proxy.eu.example:3128");
  EXPECT_EQ(hand_omp_proxy("claude", kOrigin, kWhere, ""), "");  // only omp reads it: no line for another
  EXPECT_EQ(pi_proxy(), "http://user:s3cret@proxy.eu.example:3128");
}

TEST_F(OmpProxy, OneProvidersProxyIsKeptTheOthersGoThroughCurlretrys) {
  env.set("PI_PROXY_ANTHROPIC", "http://proxy.eu.example:3128");
  EXPECT_EQ(hand_omp_proxy("omp", kOrigin, kWhere, ""),
            "curlretry: proxy: PI_PROXY_ANTHROPIC names a proxy of yours, which omp sends its requests on that "
            "provider (ANTHROPIC) through in place of curlretry's: none of them is retried; to have them retried, "
            "name that proxy in HTTPS_PROXY instead (curlretry's proxy then reaches the providers through it)");
  EXPECT_EQ(pi_proxy(), kOrigin);
}

}  // namespace
}  // namespace curlretry::proxy

// proxy/upgrade.h's pure part and request_rules' websocket_upgrade: which requests become a
// WebSocket tunnel, and the head that goes upstream. test_proxy_websocket.py drives the tunnel
// itself with a real ws client and server.
#include "proxy/upgrade.h"

#include <gtest/gtest.h>

#include "proxy/request_rules.h"

namespace curlretry::proxy {
namespace {

namespace http = boost::beast::http;

RequestHead get(unsigned version, std::initializer_list<std::pair<std::string, std::string>> fields) {
  RequestHead h;
  h.method(http::verb::get);
  h.target("/r/x");
  h.version(version);
  for (const auto& [name, value] : fields) h.insert(name, value);
  return h;
}

TEST(WebSocketUpgrade, NeedsBothTokensHttp11AndNoBody) {
  EXPECT_TRUE(websocket_upgrade(get(11, {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}})));
  EXPECT_TRUE(websocket_upgrade(get(11, {{"Connection", "keep-alive, UPGRADE"}, {"Upgrade", "WebSocket"}})));
  EXPECT_TRUE(
      websocket_upgrade(get(11, {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}, {"Content-Length", "0"}})));
  EXPECT_FALSE(websocket_upgrade(get(11, {{"Upgrade", "websocket"}})));  // Connection does not list it
  EXPECT_FALSE(websocket_upgrade(get(11, {{"Connection", "Upgrade"}})));
  EXPECT_FALSE(websocket_upgrade(get(11, {{"Connection", "Upgrade"}, {"Upgrade", "h2c"}})));  // stays HTTP/1.1
  EXPECT_FALSE(websocket_upgrade(get(10, {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}})));
  EXPECT_FALSE(
      websocket_upgrade(get(11, {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}, {"Content-Length", "5"}})));
  EXPECT_FALSE(websocket_upgrade(
      get(11, {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}, {"Transfer-Encoding", "chunked"}})));
}

TEST(UpgradeTarget, HeadCarriesTheTargetHostAndEndToEndFields) {
  UpgradeHead head{"GET", "websocket", {{"Sec-WebSocket-Key", "k=="}, {"Sec-WebSocket-Version", "13"}}};
  auto t = upgrade_target("https://api.openai.com/v1/responses?a=1", head);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->host, "api.openai.com");
  EXPECT_EQ(t->port, "443");
  EXPECT_EQ(t->path, "/v1/responses");
  EXPECT_EQ(t->head,
            "GET /v1/responses?a=1 HTTP/1.1\r\nHost: api.openai.com\r\nSec-WebSocket-Key: k==\r\n"
            "Sec-WebSocket-Version: 13\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");

  t = upgrade_target("http://[::1]:8080?q", head);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->tls);
  EXPECT_EQ(t->host, "::1");
  EXPECT_EQ(t->port, "8080");
  EXPECT_EQ(t->head.substr(0, t->head.find("\r\n", t->head.find("\r\n") + 2)), "GET /?q HTTP/1.1\r\nHost: [::1]:8080");
}

TEST(UpgradeTarget, RefusesWhatIsNotHttpOrCarriesCredentials) {
  const UpgradeHead head{"GET", "websocket", {}};
  EXPECT_FALSE(upgrade_target("ftp://host/x", head));
  EXPECT_FALSE(upgrade_target("http:///x", head));
  EXPECT_FALSE(upgrade_target("http://user:pw@host/x", head));
}

}  // namespace
}  // namespace curlretry::proxy

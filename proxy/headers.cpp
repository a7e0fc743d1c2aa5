#include "proxy/headers.h"

namespace curlretry::proxy {
namespace {

using core::ascii::lower;

constexpr std::string_view kHopByHop[] = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                                          "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"};

}  // namespace

std::vector<std::string> connection_tokens(std::string_view value) {
  std::vector<std::string> out;
  std::string token;
  for (std::size_t i = 0; i <= value.size(); ++i) {
    const char c = i < value.size() ? value[i] : ',';
    if (c == ',') {
      if (!token.empty()) out.push_back(token);
      token.clear();
    } else if (c != ' ' && c != '\t') {
      token += lower(c);
    }
  }
  return out;
}

bool hop_by_hop(std::string_view name, const std::vector<std::string>& connection_listed) {
  for (std::string_view h : kHopByHop) {
    if (iequals(name, h)) return true;
  }
  for (const auto& listed : connection_listed) {
    if (iequals(name, listed)) return true;
  }
  return false;
}

bool framing_header(std::string_view name) { return iequals(name, "content-length"); }

}  // namespace curlretry::proxy

#include "config/yaml_proxy.h"

#include <algorithm>
#include <string_view>

#include "config/glob.h"
#include "config/keys.h"
#include "config/upstream_proxy.h"

namespace curlretry::config {
namespace {

bool route_name_ok(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '_' || name[0] == '.') return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool env_name_ok(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// "http(s)://host[:port][/prefix]" without query, fragment or userinfo; the trailing '/' goes.
std::string upstream_or_fail(const Values& v, const YamlNode& node, const std::string& key) {
  std::string url = v.string(node, key);
  std::string_view rest;
  if (url.rfind("https://", 0) == 0)
    rest = std::string_view(url).substr(8);
  else if (url.rfind("http://", 0) == 0)
    rest = std::string_view(url).substr(7);
  else
    v.fail(node, key, "\"" + url + "\" is not an http:// or https:// URL");
  const std::size_t host_end = rest.find('/');
  const std::string_view authority = rest.substr(0, host_end);
  if (authority.empty()) v.fail(node, key, "\"" + url + "\" has no host");
  if (authority.find('@') != std::string_view::npos) {
    v.fail(node, key, "an upstream URL may not carry credentials; the program's own headers pass through");
  }
  if (url.find_first_of("?# \t") != std::string::npos) {
    v.fail(node, key, "\"" + url + "\": no query, fragment or spaces in an upstream URL");
  }
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  return url;
}

// proxy.forward: {allow_ports: [80, 443] | any, allow_loopback: false}.
void read_forward(const Values& v, const YamlNode& node, const std::string& key, ProxyForward& out, Sources& sources) {
  v.expect_map(node, key, true);
  v.check_keys(node, key, part_keys("proxy.forward"));
  for (const auto& [name, value] : node.entries) {
    const std::string fkey = join_key(key, name.text);
    if (name.text == "allow_loopback") {
      out.allow_loopback = v.boolean(value, fkey);
    } else if (value.kind == YamlNode::Kind::scalar && value.text == "any") {
      out.allow_ports.clear();
    } else {
      if (value.kind != YamlNode::Kind::sequence || value.items.empty()) {
        v.fail(value, fkey, "a list of TCP ports, e.g. [80, 443, 8080], or `any`");
      }
      out.allow_ports.clear();
      for (std::size_t i = 0; i < value.items.size(); ++i) {
        const std::string ikey = fkey + "[" + std::to_string(i) + "]";
        out.allow_ports.push_back(
            static_cast<unsigned>(v.integer(value.items[i], ikey, 1, 65535, "a TCP port, 1..65535")));
      }
    }
    sources[fkey] = v.where(value);
  }
}

// The keys of `proxy:` and of a route, each with its reader: one table each, whose names are
// config/keys.h's (checked below at compile time), so a new key is a row there and one here.
using ProxyReader = void (*)(const Values&, const YamlNode& value, const std::string& key, ProxySettings& out);
using RouteReader = void (*)(const Values&, const YamlNode& value, const std::string& key, ProxyRoute& out);

void read_token(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  out.token = v.string(value, key);
  if (out.token.size() < 16) v.fail(value, key, "too short; use at least 16 random characters");
}

void read_max_body(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  out.max_body = static_cast<std::size_t>(v.integer(value, key, 0, 1LL << 30, "a byte count up to 1 GiB"));
}

// A host glob: no port, no scheme ("api.anthropic.com", "*.openai.com", "127.0.0.1").
void read_intercept(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  if (value.kind != YamlNode::Kind::null && value.kind != YamlNode::Kind::sequence) {
    v.fail(value, key, "a list of host globs, e.g. [\"api.anthropic.com\", \"*.openai.com\"]");
  }
  for (std::size_t i = 0; i < value.items.size(); ++i) {
    const YamlNode& item = value.items[i];
    const std::string ikey = key + "[" + std::to_string(i) + "]";
    const std::string glob = v.string(item, ikey);
    if (glob.empty()) v.fail(item, ikey, "an empty host glob");
    // One ':' is a port; an IPv6 address ("::1", unbracketed) has several.
    const bool port = std::count(glob.begin(), glob.end(), ':') == 1;
    if (glob.find_first_of("/ \t@") != std::string::npos || port) {
      v.fail(item, ikey, "\"" + glob + "\" is not a host glob (no scheme, port, path or spaces)");
    }
    if (auto bad = glob_error(glob)) v.fail(item, ikey, "bad glob \"" + glob + "\": " + *bad);
    out.intercept.push_back(glob);
  }
}

void read_tunnel_idle(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  out.tunnel_idle_ms = v.integer(value, key, 1, 24LL * 3600 * 1000, "milliseconds, 1..86400000");
}

// Bounded by what one process can hold, not by the descriptor limit of the machine it was
// written on: the proxy checks that at start (proxy/connection_limit.h).
void read_max_connections(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  out.max_connections = static_cast<std::size_t>(v.integer(value, key, 1, 1000000, "a connection count, 1..1000000"));
}

void read_upstream_ca(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  out.upstream_ca_file = v.string(value, key);
  if (out.upstream_ca_file.empty() || out.upstream_ca_file[0] != '/') {
    v.fail(value, key, "an absolute path to a PEM file of extra CA certificates");
  }
}

// Never quoted in an error: the URL may carry a password.
void read_upstream_proxy(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out) {
  out.upstream_proxy = v.string(value, key);
  const std::string problem = upstream_proxy_problem(out.upstream_proxy);
  if (!problem.empty()) v.fail(value, key, problem + " (the value is not shown)");
}

void read_route_upstream(const Values& v, const YamlNode& value, const std::string& key, ProxyRoute& out) {
  out.upstream = upstream_or_fail(v, value, key);
}

void read_route_env(const Values& v, const YamlNode& value, const std::string& key, ProxyRoute& out) {
  out.env = v.string(value, key);
  if (!env_name_ok(out.env)) v.fail(value, key, "\"" + out.env + "\" is not an environment variable name");
}

template <class Reader>
struct KeyReader {
  std::string_view name;
  Reader read;  // nullptr: a map of its own, read by read_proxy (forward, routes)
};

constexpr KeyReader<ProxyReader> kProxyKeys[] = {
    {"routes", nullptr},
    {"token", read_token},
    {"max_body_bytes", read_max_body},
    {"intercept", read_intercept},
    {"upstream_ca_file", read_upstream_ca},
    {"forward", nullptr},
    {"tunnel_idle_ms", read_tunnel_idle},
    {"max_connections", read_max_connections},
    {"upstream_proxy", read_upstream_proxy},
};

constexpr KeyReader<RouteReader> kRouteKeys[] = {
    {"upstream", read_route_upstream},
    {"env", read_route_env},
};

// The tables above hold exactly config/keys.h's keys of `part`.
template <class Reader, std::size_t N>
constexpr bool same_keys(const KeyReader<Reader> (&table)[N], std::string_view part) {
  std::size_t listed = 0;
  for (const PartKey& entry : kPartKeys) {
    if (entry.part != part) continue;
    ++listed;
    bool found = false;
    for (const auto& row : table) found = found || row.name == entry.key;
    if (!found) return false;
  }
  return listed == N;
}
static_assert(same_keys(kProxyKeys, "proxy"), "kProxyKeys must list config/keys.h's proxy keys");
static_assert(same_keys(kRouteKeys, "proxy.route"), "kRouteKeys must list config/keys.h's proxy.route keys");

template <class Reader, std::size_t N>
Reader reader_of(const KeyReader<Reader> (&table)[N], std::string_view name) {
  for (const auto& row : table) {
    if (row.name == name) return row.read;
  }
  return nullptr;  // unreachable: check_keys refused any other name
}

void read_routes(const Values& v, const YamlNode& value, const std::string& key, ProxySettings& out, Sources& sources) {
  v.expect_map(value, key, true);
  for (const auto& [route_name, route] : value.entries) {
    const std::string rkey = join_key(key, route_name.text);
    if (!route_name_ok(route_name.text)) {
      v.fail(route_name, rkey,
             "a route name is 1-64 characters of A-Z a-z 0-9 - _ . and does not start with '_' or '.'");
    }
    v.expect_map(route, rkey);
    v.check_keys(route, rkey, part_keys("proxy.route"));
    ProxyRoute r;
    r.name = route_name.text;
    for (const auto& [field, field_value] : route.entries) {
      if (const RouteReader read = reader_of(kRouteKeys, field.text))
        read(v, field_value, join_key(rkey, field.text), r);
    }
    if (r.upstream.empty()) v.fail(route, rkey, "a route needs `upstream: https://...`");
    sources[rkey] = v.where(route);
    out.routes.push_back(std::move(r));
  }
}

}  // namespace

void read_proxy(const Values& v, const YamlNode& node, ProxySettings& out, Sources& sources) {
  v.expect_map(node, "proxy", true);
  v.check_keys(node, "proxy", part_keys("proxy"));
  for (const auto& [name, value] : node.entries) {
    const std::string key = join_key("proxy", name.text);
    if (name.text == "forward") {
      read_forward(v, value, key, out.forward, sources);
    } else if (name.text == "routes") {
      read_routes(v, value, key, out, sources);
    } else if (const ProxyReader read = reader_of(kProxyKeys, name.text)) {
      read(v, value, key, out);
      sources[key] = v.where(value);
    }
  }
}

}  // namespace curlretry::config

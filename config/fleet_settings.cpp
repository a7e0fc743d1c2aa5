#include "config/fleet_settings.h"

#include "core/ascii.h"

namespace curlretry::config {

std::optional<ParsedStore> parse_fleet_store(std::string_view text, std::string& why) {
  const std::string_view value = core::ascii::field_value(text);
  const std::string name = core::ascii::lower(value);
  if (name == "off") return ParsedStore{FleetStore::off, {}};
  if (name == "machine") return ParsedStore{FleetStore::machine, {}};
  if (name.rfind("redis://", 0) != 0) {
    why = "expected off, machine or redis://host:port/db";
    return std::nullopt;
  }
  std::string_view rest = value.substr(8);
  const auto slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view host = authority;
  const auto colon = authority.rfind(':');
  const auto bracket = authority.rfind(']');  // an IPv6 host: [::1]:6379
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    host = authority.substr(0, colon);
    const std::string_view port = authority.substr(colon + 1);
    const bool digits = !port.empty() && port.size() <= 5 && core::ascii::only_digits(port);
    if (!digits || std::stol(std::string(port)) < 1 || std::stol(std::string(port)) > 65535) {
      why = "the port of a redis:// URL must be 1..65535";
      return std::nullopt;
    }
  }
  if (host.empty()) {
    why = "a redis:// URL needs a host (redis://127.0.0.1:6379/0)";
    return std::nullopt;
  }
  if (host.find('@') != std::string_view::npos) {
    why = "a redis:// URL with a password is not supported (it would end up in logs and `check`)";
    return std::nullopt;
  }
  if (slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    if (db.size() > 5 || !core::ascii::only_digits(db)) {
      why = "the database of a redis:// URL is a number (redis://host:6379/0)";
      return std::nullopt;
    }
  }
  return ParsedStore{FleetStore::redis, std::string(value)};
}

std::string describe_fleet_store(const FleetSettings& fleet) {
  switch (fleet.store) {
    case FleetStore::off: return "off";
    case FleetStore::machine: return "machine";
    case FleetStore::redis: return fleet.redis_url;
  }
  return "machine";
}

}  // namespace curlretry::config

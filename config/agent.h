// What a careful API client does beyond backing off, per rule: pick rules by request header,
// switch to a fallback model or base URL after repeated overloads, refresh a credential on 401.
// Plain data, filled in by config/yaml_agent.cpp and acted on by the shim.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace curlretry::config {

// One `match.header` entry: the request must carry header `name` with a value matching `glob`.
struct HeaderMatch {
  std::string name;  // lower case: header names compare case-insensitively
  std::string glob;  // on the value, case-sensitive, as sent (trimmed)
};

// The request headers a program set (CURLOPT_HTTPHEADER), names lower-cased, values trimmed.
// A header the program removes ("Name:") has no value and is not listed.
using RequestHeaders = std::vector<std::pair<std::string, std::string>>;

// True when every entry of `want` is met by some header in `have` (an empty `want` always is).
bool headers_match(const std::vector<HeaderMatch>& want, const RequestHeaders& have);

// `fallback:` of a rule. Off when `after` is 0.
struct Fallback {
  int after = 0;                         // consecutive overload attempts of one transfer
  std::vector<int> on_status;            // statuses counted as an overload
  std::vector<std::string> on_markers;   // body markers counted as an overload (any status)
  std::string model;                     // replaces the JSON body's top-level "model"; empty = keep
  std::string url;                       // replaces scheme://authority of the URL; empty = keep
  bool enabled() const { return after > 0; }
};

// `auth:` of a rule: a command that prints a fresh value for `header`. Off when `command` is empty.
struct AuthRefresh {
  std::vector<int> on;                   // statuses that trigger a refresh
  std::vector<std::string> command;      // argv, run without a shell
  std::string header = "Authorization";
  long long timeout_ms = 10000;
  bool enabled() const { return !command.empty(); }
};

}  // namespace curlretry::config

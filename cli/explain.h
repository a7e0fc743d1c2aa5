// `curlretry explain METHOD URL ...`: runs the decision the shim runs when attempt N of this
// request has just produced the given status / body / headers / transport error, and prints the
// rule, verdict, delay and reason (or one JSON object with --json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/decide.h"

namespace curlretry::cli {

struct ExplainOptions {
  std::optional<std::string> config;
  bool json = false;
  std::string method;
  std::string url;
  int status = 0;
  std::optional<std::string> body;   // TEXT, @FILE or @- (stdin)
  std::vector<std::string> headers;  // "Name: value"
  std::string transport = "ok";
  int attempt = 1;
  long long elapsed_ms = 0;
  long long previous_delay_ms = 0;
  bool committed = false;
  bool not_replayable = false;
};

// What `explain` decided; separate from printing so tests can pin it.
struct Explanation {
  std::string rule;  // rule name, or "defaults"
  const config::Rule* matched = nullptr;
  core::Outcome outcome;
  core::Verdict verdict;
  int max_attempts = 0;
  // When this attempt, and every one before it, was an overload of the rule's `fallback:` and
  // it is retried after at least `after` of them: what the next attempt switches to
  // ("model claude-y", "url backup.example/v1"). Empty otherwise.
  std::string fallback;
  // For a 2xx text/event-stream body: which event decided, e.g. "event 3 (error) at byte 290:
  // an error before any content". Empty otherwise.
  std::string stream;
  // The steps after decide (core/settle.h) that could change this verdict, each in words with
  // what only the running transfer knows said so: the headers already delivered, the rule's
  // credential command, the upload's rewind. Empty when the step cannot apply.
  std::string commit;
  std::string credential;
  std::string upload;
};

// Builds the Outcome from the options (headers matched case-insensitively, body cut to the
// rule's body_window) and decides. `error` is set (and nullopt returned) for bad options.
std::optional<Explanation> explain(const config::Config& config, const ExplainOptions& options, std::string& error);

// Exit status: 0 curlretry would retry, 1 it would not (give up, or done on success), 2 it cannot
// say (bad options, config or environment).
constexpr int kExplainRetry = 0;
constexpr int kExplainNoRetry = 1;
constexpr int kExplainCannotDecide = 2;

int run_explain(const ExplainOptions& options);

}  // namespace curlretry::cli

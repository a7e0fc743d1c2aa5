#include "shim/credential_refresh.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "shim/credential_command.h"
#include "shim/fork_guard.h"
#include "shim/log.h"
#include "shim/runtime.h"
#include "shim/transfer.h"

namespace curlretry::shim::credential {
namespace {

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::string> values;
};

Cache& cache() {
  static Cache* c = [] {
    auto* made = new Cache;  // never destroyed: transfers may run during exit
    guard_across_fork(made->mutex);
    return made;
  }();
  return *c;
}

std::atomic<bool> g_any{false};

}  // namespace

std::optional<std::string> cached(const std::string& rule) {
  if (!any_cached()) return std::nullopt;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.values.find(rule);
  if (it == c.values.end()) return std::nullopt;
  return it->second;
}

void store(const std::string& rule, const std::string& value) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.values[rule] = value;
  g_any.store(true, std::memory_order_release);
}

void forget(const std::string& rule) {
  if (!any_cached()) return;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.values.erase(rule);
}

bool any_cached() { return g_any.load(std::memory_order_acquire); }

}  // namespace curlretry::shim::credential

namespace curlretry::shim {

bool Transfer::wants_refresh(int status) const {
  if (run_.rule == nullptr || run_.auth_tried || !run_.rule->auth.enabled()) return false;
  const auto& on = run_.rule->auth.on;
  return std::find(on.begin(), on.end(), status) != on.end();
}

core::settle::Credential Transfer::refresh_credential(const std::string& what) {
  run_.auth_tried = true;
  const config::AuthRefresh& auth = run_.rule->auth;
  run_.auth_what = run_.method + " " + run_.display + " -> " + what;
  std::string value, why;
  if (async_credential_) {
    // The transfer waits while the command runs (shim/between_attempts.h), and the host's loop, or
    // its progress callback, goes on.
    auto command = std::make_unique<credential::Command>();
    if (!command->start(auth, why)) {
      credential_failed(why);
      return core::settle::Credential::failed;
    }
    pending_credential_ = std::move(command);
    return core::settle::Credential::running;
  }
  if (!credential::run(auth, value, why)) {
    credential_failed(why);
    return core::settle::Credential::failed;
  }
  credential_ready(std::move(value));
  return core::settle::Credential::refreshed;
}

void Transfer::credential_failed(const std::string& why) {
  credential::forget(run_.rule->name);
  log::write(config::LogLevel::warn, run_.auth_what + ": cannot refresh " + run_.rule->auth.header + ": " + why +
                                         "; giving up with the upstream's response");
}

void Transfer::credential_ready(std::string value) {
  credential::store(run_.rule->name, value);
  override_.set_header(run_.rule->auth.header, std::move(value));
  log::write(config::LogLevel::info, run_.auth_what + ": refreshed " + run_.rule->auth.header + ", retrying once");
}

Transfer::CredentialProgress Transfer::poll_credential() {
  if (!pending_credential_) return CredentialProgress::none;
  std::string value, why;
  switch (pending_credential_->step(0, value, why)) {
    case credential::Command::State::running: return CredentialProgress::running;
    case credential::Command::State::done:
      pending_credential_.reset();
      credential_ready(std::move(value));
      return CredentialProgress::ready;
    case credential::Command::State::failed: break;
  }
  pending_credential_.reset();
  credential_failed(why);
  return CredentialProgress::failed;
}

Transfer::Step Transfer::give_up_after_refresh(CURLcode code) {
  // The refused attempt's response is still held (nothing was reset since): it is the answer.
  attempt_.replay_code = code;
  enter(Phase::replaying);
  return resume_replay();
}

Transfer::Step Transfer::refresh_outlasted_deadline(CURLcode code) {
  pending_credential_.reset();  // killed, with everything it started
  log::write(config::LogLevel::warn, run_.auth_what + ": the program's timeout came while refreshing " +
                                         run_.rule->auth.header + "; giving up with the upstream's response");
  // The refused response, as the program would have had it without us (and as a failed command
  // or a budget give-up at the deadline hands it over): a timeout would turn an answer into none.
  return give_up_after_refresh(code);
}

void Transfer::apply_cached_credential() {
  if (!credential::any_cached() || runtime_->config.rules.empty()) return;
  // Before the first attempt libcurl has no effective URL or method yet: the program's own.
  UrlParts parts = split_url(host.url);
  const config::Rule* rule = match_rule(request_method(host), parts);
  if (rule == nullptr || !rule->auth.enabled()) return;
  if (auto value = credential::cached(rule->name)) {
    override_.set_header(rule->auth.header, std::move(*value));
    override_.apply(*api_, easy_, host);
  }
}

}  // namespace curlretry::shim

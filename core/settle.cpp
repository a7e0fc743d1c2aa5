#include "core/settle.h"

namespace curlretry::core::settle {

void commit(Verdict& verdict, bool host_has_headers) {
  if (verdict.action != Action::retry || !host_has_headers) return;
  verdict.action = Action::give_up;  // the program has its headers: nothing to take back
  verdict.reason = Reason::committed;
}

bool wants_credential(const Verdict& verdict, bool rule_refreshes, bool committed) {
  return verdict.action == Action::give_up && !committed && rule_refreshes;
}

void credential(Verdict& verdict, Credential result) {
  if (result == Credential::failed) return;
  verdict.action = Action::retry;
  verdict.delay = Millis{0};
  verdict.reason = Reason::auth_refresh;
}

bool wants_rewind(const Verdict& verdict) { return verdict.action == Action::retry; }

void replay(Verdict& verdict, bool rewound) {
  if (verdict.action != Action::retry || rewound) return;
  verdict.action = Action::give_up;
  verdict.reason = Reason::not_replayable;
}

}  // namespace curlretry::core::settle

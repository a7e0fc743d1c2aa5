// The verdict finished: what core::decide cannot know, the facts of the running transfer, each a
// pure step applied after decide() in this fixed order (the shim's Transfer::settle_verdict;
// `curlretry explain` shows each step it can know):
//   1. commit      the program already has this response's headers: a retry gives up (committed)
//   2. fleet       the shared cooldown stretches a retry's delay (core/fleet_verdict.h)
//   3. credential  a give-up the rule's `auth:` command answers becomes one retry, at once
//   4. replay      a retry whose upload could not be rewound gives up (not-replayable)
// A step's fact is gathered only when the step can use it (wants_credential, wants_rewind): the
// credential command runs, and the program's upload is rewound, only for a verdict that needs it.
// Core knows nothing of libcurl: the shim observes the facts and passes them in.
#pragma once

#include <cstdint>

#include "core/decide.h"

namespace curlretry::core::settle {

// Step 1. `host_has_headers`: the headers of a response without a body went to the program at
// their end (nothing of this attempt can be taken back, though no body byte reached it).
void commit(Verdict& verdict, bool host_has_headers);

// Step 3. Whether the rule's credential command should run: a give-up of a response whose status
// the rule refreshes for (`rule_refreshes`: in its `auth.on`, the command not yet run in this
// transfer), nothing of which reached the program (`committed`).
bool wants_credential(const Verdict& verdict, bool rule_refreshes, bool committed);
// What the command did: printed a value (run to its end, where the transfer cannot wait for it:
// a multi handle without curl_multi_remove_handle), runs on (the transfer waits for it between
// attempts, easy and multi alike: shim/between_attempts.h), or failed (no value, an error, its
// timeout).
enum class Credential : std::uint8_t { refreshed, running, failed };
// A value (or one on its way) turns the give-up into one immediate retry (auth-refresh); a failed
// command leaves the give-up with the upstream's response.
void credential(Verdict& verdict, Credential result);

// Step 4. Whether the program's upload must be rewound now: a retry sends the request again.
bool wants_rewind(const Verdict& verdict);
// `rewound`: the upload is at its start again (or there is none); else the retry gives up.
void replay(Verdict& verdict, bool rewound);

}  // namespace curlretry::core::settle

// "Nothing silent": after the launcher's exec nobody is left to notice a command that never used
// libcurl, so a small watcher process, started just before the exec, does. The command keeps the
// launcher's pid; the watcher is not its child (double fork), holds only stderr, waits for that
// pid to exit (pidfd) and then looks for the file the library creates on its first intercepted
// call (CURLRETRY_REACHED, shim/reach_marker.h). No file: one message on stderr.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace curlretry::cli {

struct ReachWatch {
  int exec_failed_fd = -1;  // write a byte here when the exec fails: the watcher then says nothing
};

// Starts the watcher for this process, which is about to exec `command` (run with the launcher's
// `configs`), and sets CURLRETRY_REACHED. nullopt when it cannot (no pidfd, no temporary
// directory): nothing is said.
std::optional<ReachWatch> start_reach_watch(const std::vector<std::string>& command,
                                            const std::vector<std::string>& configs);

void cancel_reach_watch(const ReachWatch& watch);

// What the watcher says; `doctor` says the same ahead of time.
std::string unreached_message(const std::vector<std::string>& command, const std::vector<std::string>& configs);

// `command` as a shell would take it back: words with anything but [A-Za-z0-9_./:=@%+,-]
// single-quoted.
std::string shell_words(const std::vector<std::string>& command);

}  // namespace curlretry::cli

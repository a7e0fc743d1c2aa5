// Running a short-lived helper process (an interpreter asked about its extensions, git asked for
// its exec path) and reading what it prints.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace curlretry::cli::doctor {

// Runs argv (no shell) with stdin on /dev/null, stderr discarded and LD_PRELOAD removed; its
// stdout when it exits 0 within the time limit.
std::optional<std::string> run_probe(const std::vector<std::string>& argv, std::chrono::seconds limit);

// The lines of `text`, without their newlines.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace curlretry::cli::doctor

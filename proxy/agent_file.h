// How the launch reads an agent's own files (Claude Code's settings, Codex's config.toml and
// auth.json, Pi's models.json and auth.json, Gemini CLI's .env): one rule for all of them.
#pragma once

#include <string>

namespace curlretry::proxy {

// The whole file, or "" when it cannot be read, is not a regular file (a FIFO must not block the
// launch), is 1 MiB or more (an agent's file is a few KiB; a cut one is not read half), or is owned
// by neither this user nor root: a directory another user can write to (/tmp, above the working
// directory) must not choose which hosts this user's proxy intercepts and retries.
std::string read_agent_file(const std::string& path);

// One variable an agent's file sets (a Claude Code settings file's `env` block, Gemini CLI's .env):
// its name and value, and the file, so a line can say where a value came from.
struct SettingsValue {
  std::string name;
  std::string value;
  std::string file;
};

}  // namespace curlretry::proxy

// How the launch reads an agent's own files (Claude Code's settings, Codex's config.toml and
// auth.json, Pi's models.json and auth.json, Gemini CLI's .env): one rule for all of them.
#pragma once

#include <string>
#include <string_view>

namespace curlretry::proxy {

// The whole file, or "" when it cannot be read, is not a regular file (a FIFO must not block the
// launch), is 1 MiB or more (an agent's file is a few KiB; a cut one is not read half), or is owned
// by neither this user nor root: a directory another user can write to (/tmp, above the working
// directory) must not choose which hosts this user's proxy intercepts and retries.
std::string read_agent_file(const std::string& path);

// What an agent strips from its JSON settings text before it parses it: `//` comments always,
// `/* */` comments and commas before a closing `}` or `]` as each agent does. String literals are
// left as they are; an unclosed comment ends the text.
struct JsonComments {
  bool block = false;            // `/* */` too
  bool trailing_commas = false;  // a comma with only whitespace and comments before `}` or `]`
};
constexpr JsonComments kPiJsonComments{false, true};    // Pi's stripJsonComments
constexpr JsonComments kQwenJsonComments{true, false};  // Qwen Code's strip-json-comments
std::string strip_json_comments(std::string_view text, JsonComments rules);

// One variable an agent's file sets (a Claude Code settings file's `env` block, Gemini CLI's .env):
// its name and value, and the file, so a line can say where a value came from.
struct SettingsValue {
  std::string name;
  std::string value;
  std::string file;
};

}  // namespace curlretry::proxy

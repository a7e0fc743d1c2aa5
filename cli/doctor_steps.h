// What the steps of a diagnosis share: the program examined, how a reason is noted, and the advice
// several verdicts give.
#pragma once

#include <string>

#include "cli/doctor.h"
#include "cli/elf_file.h"
#include "cli/program_lookup.h"

namespace curlretry::cli::doctor {

// The same words the launcher uses after the fact (reach_watch.h), said ahead of time.
inline constexpr const char* kNothingToRetry =
    "curlretry would have nothing to retry: run it through curlretry's local proxy: curlretry --proxy -- COMMAND "
    "(https:// through HTTPS_PROXY also needs, once: curlretry proxy ca)";

inline constexpr const char* kProxyAdvice =
    "no LD_PRELOAD can reach it: `curlretry -- COMMAND` runs it through curlretry's local proxy, intercepting the "
    "API hosts of the providers curlretry knows (Anthropic, OpenAI, Gemini, z.ai, DeepSeek, OpenRouter, ...) through "
    "HTTPS_PROXY and the local CA; other hosts: proxy.intercept or proxy.routes in the config, then curlretry "
    "--proxy -- COMMAND";


struct Examined {
  std::string exec_path;  // the ELF file as it would be executed (PATH result, symlinks kept)
  std::string real_path;
  ElfInfo elf;
  std::string invocation;   // what the user asked about, as typed ("python3 agent.py")
  std::string interpreter;  // the interpreter to ask about extensions (may be a wrapper script)
  Language language = Language::none;
};

// Adds the reason "label: text" to the diagnosis.
inline void detail(Diagnosis& d, const std::string& label, const std::string& text) {
  d.details.push_back(label + ": " + text);
}

}  // namespace curlretry::cli::doctor

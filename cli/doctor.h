// `curlretry doctor COMMAND|PATH [ARGS...]`: whether libcurlretry.so can help this program, in one
// verdict line and the reasons for it. It follows `#!` interpreters (and `env`) and PATH, reads
// ELF files itself (program headers, DT_NEEDED closure, Go build info, libcurl compiled in), and
// asks Python and PHP interpreters whether pycurl / the curl extension is installed.
//
// Verdicts and exit statuses:
//   works            0  links libcurl dynamically: `curlretry -- COMMAND` retries its transfers
//   works-through    0  an interpreter whose extension (pycurl, php-curl) loads libcurl
//   maybe            5  names libcurl but does not link it (dlopen at run time): try it with -v
//   not-reachable    3  libcurl compiled in, Go, foreign loader or word size: use a proxy instead
//   preload-ignored  3  set-user-ID, set-group-ID or file capabilities: the loader ignores LD_PRELOAD
//   nothing-to-do    4  no libcurl anywhere
//   (1: the program cannot be found or read; 2: usage)
#pragma once

#include <string>
#include <vector>

namespace curlretry::cli {

enum class DoctorVerdict { works, works_through, maybe, not_reachable, preload_ignored, nothing_to_do, error };

struct Diagnosis {
  DoctorVerdict verdict = DoctorVerdict::error;
  std::string program;             // the file that was examined first (resolved through PATH)
  std::vector<std::string> chain;  // script -> interpreter -> ... (files actually executed)
  std::string summary;             // the verdict line, without the verdict word
  std::vector<std::string> details;  // "label: text" lines saying why
  std::string advice;              // what to do next
  std::string via;                 // "pycurl", "php-curl", "curl" (a shell script's curl), or ""
  std::string libcurl;             // the libcurl soname that matters, when one was found
  std::string flavour;             // "OpenSSL", "GnuTLS", ... when known
  bool static_program = false;     // nothing-to-do for a static ELF program (no loader at all)
  bool bun_executable = false;     // nothing-to-do for a Bun single-file executable (.bun section):
                                   // Bun's own HTTP stack, e.g. Claude Code's claude.exe
};

struct DoctorOptions {
  std::vector<std::string> command;  // COMMAND or PATH, then its arguments (used to find a script)
  bool json = false;
};

std::string_view to_string(DoctorVerdict verdict);
int exit_status(DoctorVerdict verdict);

Diagnosis diagnose(const std::vector<std::string>& command);

int run_doctor(const DoctorOptions& options);

}  // namespace curlretry::cli

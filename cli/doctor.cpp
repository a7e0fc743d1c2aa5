// The diagnosis: follows `#!` lines and PATH to the ELF file that runs, then decides from its
// architecture, loader, privilege, libcurl link, Go build info, interpreter extensions and the
// programs a script or git runs.
#include "cli/doctor.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "cli/doctor_interpreters.h"
#include "cli/doctor_steps.h"
#include "cli/elf_file.h"
#include "cli/libcurl_link.h"
#include "cli/loader_search.h"
#include "cli/path_names.h"
#include "cli/privilege.h"
#include "cli/probe_process.h"
#include "cli/program_lookup.h"

namespace curlretry::cli {
namespace {

using namespace doctor;
namespace fs = std::filesystem;

const ElfInfo& own_elf() {
  static const ElfInfo self = [] {
    std::string error;
    auto info = read_elf("/proc/self/exe", error);
    return info ? *info : ElfInfo{};
  }();
  return self;
}

Diagnosis diagnose_at_depth(const std::vector<std::string>& command, int depth);

// The steps of diagnose_elf(), in the order they are tried: each either decides the diagnosis and
// returns true, or leaves it to the next step.

// A program the loader cannot preload libcurlretry.so into at all: another architecture or musl.
bool foreign_abi(Diagnosis& d, const ElfInfo& e, const std::string& name) {
  const ElfInfo& self = own_elf();
  if (self.is_elf && (e.is64 != self.is64 || e.machine != self.machine)) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " is " + (e.is64 ? "64" : "32") + "-bit " + machine_name(e.machine) +
                ", libcurlretry.so is " + (self.is64 ? "64" : "32") + "-bit " + machine_name(self.machine) +
                ": the loader cannot preload it";
    d.advice = "build curlretry for that architecture, or " + std::string(kProxyAdvice);
    return true;
  }
  if (!e.interpreter.empty() && e.interpreter.find("ld-musl") != std::string::npos) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = name + " runs on musl (" + e.interpreter + "); libcurlretry.so is built for glibc";
    d.advice = "build curlretry against musl, or " + std::string(kProxyAdvice);
    return true;
  }
  return false;
}

// A set-user-ID (or capability) program: the loader ignores LD_PRELOAD for it.
bool privileged(Diagnosis& d, const Examined& x, const std::string& name, bool links_libcurl) {
  const Privilege privilege = privilege_of(x.real_path);
  if (privilege.phrases.empty()) return false;
  detail(d, "mode", privilege.text() + (privilege.nosuid_mount ? ", but it sits on a nosuid mount: no effect" : ""));
  if (privilege.nosuid_mount) return false;
  d.verdict = DoctorVerdict::preload_ignored;
  d.summary = name + " " + privilege.text() + ": the loader runs it in secure-execution mode and ignores LD_PRELOAD";
  detail(d, "note", "the loader honours LD_PRELOAD only for a run that gains no privilege (its owner running "
                    "it); curlretry also ignores env and user config in secure-execution processes");
  d.advice = links_libcurl ? "run a copy without the privilege bits under curlretry, or " + std::string(kProxyAdvice)
                           : std::string(kProxyAdvice);
  return true;
}

// How the program itself holds libcurl, if it does: linked (works), Go, or a copy compiled in.
bool own_libcurl(Diagnosis& d, const Examined& x, const std::string& name, const std::optional<CurlLink>& link,
                 const Closure& closure) {
  const ElfInfo& e = x.elf;
  if (link) {
    d.verdict = DoctorVerdict::works;
    d.summary = name + " links libcurl dynamically (" + link->object->name + ", " + link->flavour + " flavour)";
    if (e.go) {
      d.summary += "; it is a Go program, so only its cgo calls into libcurl are covered, not net/http";
    }
    d.advice = basename_of(x.real_path).rfind("git-remote-http", 0) == 0
                   ? "git runs it for http(s) remotes: curlretry -- git clone|fetch|push https://..."
                   : "curlretry -- " + x.invocation + " ...";
    return true;
  }
  auto unreachable = [&d](std::string summary) {
    d.verdict = DoctorVerdict::not_reachable;
    d.summary = std::move(summary);
    d.advice = kProxyAdvice;
    return true;
  };
  if (e.go) {
    return unreachable(name + " is a Go program" + (e.go_version.empty() ? "" : " (" + e.go_version + ")") +
                       ": Go's net/http does not use libcurl" +
                       (e.interpreter.empty() ? " and the binary is static" : ""));
  }
  if (!e.curl_inside.empty()) {
    return unreachable(name + " has libcurl compiled in (" +
                       (e.curl_inside == "unknown version" ? std::string("libcurl") : "libcurl " + e.curl_inside) +
                       ", " + (e.interpreter.empty() ? "statically linked program" : "static copy in a dynamic program") +
                       "): its curl_* calls never go through the loader");
  }
  if (const LoadedObject* embedded = find_embedded_libcurl(closure)) {
    return unreachable(name + " loads " + embedded->name + ", which has libcurl " + embedded->info.curl_inside +
                       " compiled in: its curl_* calls never go through the loader");
  }
  return false;
}

// A shell script: what counts is the curl it runs.
void shell_script(Diagnosis& d, const Examined& x, const std::string& script, int depth) {
  if (!contains_word(read_text(script), "curl")) {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = script + " is a " + basename_of(x.exec_path) +
                " script that does not run curl; programs it starts are covered if they link libcurl";
    d.advice = "run curlretry doctor on the programs it starts";
    return;
  }
  const Diagnosis inner = diagnose_at_depth({"curl"}, depth + 1);
  detail(d, "runs", "curl (" + (inner.program.empty() ? std::string("not found in PATH") : inner.program) + ")");
  for (const auto& line : inner.details) d.details.push_back("curl " + line);
  if (inner.verdict == DoctorVerdict::works) {
    d.verdict = DoctorVerdict::works_through;
    d.via = "curl";
    d.libcurl = inner.libcurl;
    d.flavour = inner.flavour;
    d.summary = script + " runs curl, which links libcurl dynamically (" + inner.libcurl + ", " + inner.flavour +
                " flavour); programs it starts inherit LD_PRELOAD";
    d.advice = "curlretry -- " + x.invocation + " ...";
  } else {
    d.verdict = inner.verdict;
    d.summary = script + " runs curl, and for that curl: " + inner.summary;
    d.advice = inner.advice;
  }
}

// git itself never links libcurl: https remotes run git-remote-http, which inherits LD_PRELOAD.
bool git_helper(Diagnosis& d, const Examined& x, const std::string& name, int depth) {
  const auto exec_dir = run_probe({x.exec_path, "--exec-path"}, std::chrono::seconds(10));
  const auto dir = exec_dir ? lines_of(*exec_dir) : std::vector<std::string>{};
  const std::string helper = dir.empty() ? std::string() : dir[0] + "/git-remote-http";
  if (helper.empty() || !is_executable_file(helper)) return false;
  const Diagnosis inner = diagnose_at_depth({helper}, depth + 1);
  detail(d, "helper", "http(s) remotes run " + helper);
  for (const auto& line : inner.details) {
    if (line.rfind("program: ", 0) != 0) d.details.push_back(line);
  }
  d.verdict = inner.verdict == DoctorVerdict::works ? DoctorVerdict::works_through : inner.verdict;
  d.via = "git-remote-http";
  d.libcurl = inner.libcurl;
  d.flavour = inner.flavour;
  d.summary = inner.verdict == DoctorVerdict::works
                  ? name + " fetches and pushes over http(s) through git-remote-http, which links libcurl "
                           "dynamically (" + inner.libcurl + ", " + inner.flavour + " flavour)"
                  : name + " uses git-remote-http for http(s), and for that helper: " + inner.summary;
  d.advice = inner.verdict == DoctorVerdict::works ? "curlretry -- " + name + " clone|fetch|push https://..."
                                                   : inner.advice;
  return true;
}

// Nothing links libcurl: perhaps it loads it at run time, else there is nothing to do.
void no_libcurl(Diagnosis& d, const ElfInfo& e, const std::string& name, const Examined& x) {
  if (!e.interpreter.empty() && e.names_libcurl) {
    d.verdict = DoctorVerdict::maybe;
    d.summary = name + " mentions libcurl.so but does not link it: it probably loads libcurl at run time (dlopen)";
    d.advice = "try it: curlretry -v -- " + x.invocation +
               " ... and look for curlretry: lines; calls looked up with dlsym() on its own libcurl handle are "
               "not reachable";
    return;
  }
  d.verdict = DoctorVerdict::nothing_to_do;
  d.summary = name + " does not use libcurl (" +
              (e.interpreter.empty() ? std::string("statically linked, no libcurl inside")
                                     : "no libcurl in what it loads") +
              ")";
  d.static_program = e.interpreter.empty();
  d.bun_executable = e.sections.count(".bun") > 0;
  d.advice = kNothingToRetry;
}

void diagnose_elf(Diagnosis& d, const Examined& x, const std::string& script, const std::string& name, int depth) {
  const ElfInfo& e = x.elf;
  detail(d, "program", x.real_path + " (" + describe_elf(e) + ")");
  if (foreign_abi(d, e, name)) return;

  Closure closure;
  if (e.dynamic) closure = load_closure(x.real_path, e);
  const auto link = e.dynamic ? find_libcurl(closure) : std::nullopt;
  if (link) {
    d.libcurl = link->object->name;
    d.flavour = link->flavour;
    detail(d, "libcurl", describe_link(*link));
  }
  for (const auto& missing : closure.missing) {
    detail(d, "warning", "cannot find " + missing + " where the loader looks");
  }
  if (privileged(d, x, name, link.has_value())) return;
  if (own_libcurl(d, x, name, link, closure)) return;

  if (x.interpreter != x.exec_path && x.language != Language::none) {
    detail(d, "wrapper", x.interpreter + " is a wrapper script, run by " + x.exec_path);
  }
  if (x.language == Language::python) return diagnose_python(d, x, script);
  if (x.language == Language::php) return diagnose_php(d, x, script);
  if (x.language == Language::shell && !script.empty() && depth < 4) return shell_script(d, x, script, depth);
  if (basename_of(x.exec_path) == "git" && depth < 4 && git_helper(d, x, name, depth)) return;
  no_libcurl(d, e, name, x);
}

Diagnosis diagnose_at_depth(const std::vector<std::string>& command, int depth) {
  Diagnosis d;
  if (command.empty() || command[0].empty()) {
    d.summary = "no program given";
    return d;
  }
  const auto found = find_program(command[0]);
  if (!found) {
    d.summary = command[0] + ": not found in PATH";
    d.advice = "give a path, or check PATH";
    return d;
  }
  d.program = *found;
  std::error_code ec;
  std::string exec_path = *found;
  std::string script = script_argument(command);

  // Follow `#!` lines (the kernel allows a few levels; so do we).
  for (int level = 0; level < 5; ++level) {
    if (!fs::exists(exec_path, ec)) {
      d.summary = exec_path + ": no such file";
      return d;
    }
    if (!is_executable_file(exec_path)) {
      d.summary = exec_path + ": not an executable file";
      d.advice = "chmod +x it, or name the program that runs it";
      return d;
    }
    d.chain.push_back(exec_path);
    const auto shebang = read_shebang(exec_path);
    if (!shebang) break;
    std::string interpreter = shebang->interpreter;
    detail(d, "script", exec_path + " starts with #!" + interpreter +
                            (shebang->argument.empty() ? "" : " " + shebang->argument));
    if (level == 0) script = exec_path;
    if (basename_of(interpreter) == "env") {
      const auto target = env_target(shebang->argument);
      const auto resolved = target ? find_program(*target) : std::nullopt;
      if (!resolved) {
        d.summary = exec_path + ": env cannot find " + (target ? *target : std::string("a program")) + " in PATH";
        return d;
      }
      interpreter = *resolved;
    }
    exec_path = interpreter;
  }

  Examined x;
  x.exec_path = exec_path;
  x.real_path = fs::weakly_canonical(exec_path, ec).string();
  if (ec) x.real_path = exec_path;
  std::string error;
  const auto elf = read_elf(x.real_path, error);
  if (!elf) {
    d.summary = x.real_path + ": cannot read (" + error + ")";
    return d;
  }
  if (!elf->is_elf) {
    d.summary = x.real_path + ": neither an ELF program nor a #! script";
    return d;
  }
  x.elf = *elf;
  for (std::size_t i = 0; i < command.size() && i < 8; ++i) x.invocation += (i ? " " : "") + command[i];
  // The interpreter is the first file of the chain that names a language (python3, php): it may be
  // a wrapper script (pyenv shims), which is still the right program to ask about its extensions.
  x.interpreter = x.exec_path;
  for (const auto& file : d.chain) {
    const Language language = language_of(file);
    if (language == Language::none) continue;
    if (x.language == Language::none || (x.language == Language::shell && language != Language::shell)) {
      x.language = language;
      x.interpreter = file;
    }
  }
  // `python3 agent.py` where python3 is a wrapper script: the program is agent.py, not the wrapper.
  if (script == x.interpreter) script = script_argument(command);
  // Summaries name what the user typed; for a script, the interpreter's verdicts name the interpreter.
  diagnose_elf(d, x, script, script.empty() ? command[0] : basename_of(x.exec_path), depth);
  return d;
}

}  // namespace

std::string_view to_string(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::works: return "works";
    case DoctorVerdict::works_through: return "works-through";
    case DoctorVerdict::maybe: return "maybe";
    case DoctorVerdict::not_reachable: return "not-reachable";
    case DoctorVerdict::preload_ignored: return "preload-ignored";
    case DoctorVerdict::nothing_to_do: return "nothing-to-do";
    case DoctorVerdict::error: return "error";
  }
  return "error";
}

int exit_status(DoctorVerdict verdict) {
  switch (verdict) {
    case DoctorVerdict::works:
    case DoctorVerdict::works_through: return 0;
    case DoctorVerdict::not_reachable:
    case DoctorVerdict::preload_ignored: return 3;
    case DoctorVerdict::nothing_to_do: return 4;
    case DoctorVerdict::maybe: return 5;
    case DoctorVerdict::error: return 1;
  }
  return 1;
}

Diagnosis diagnose(const std::vector<std::string>& command) { return diagnose_at_depth(command, 0); }

}  // namespace curlretry::cli

#include "cli/doctor_interpreters.h"

#include <chrono>
#include <optional>
#include <vector>

#include "cli/libcurl_link.h"
#include "cli/loader_search.h"
#include "cli/path_names.h"
#include "cli/probe_process.h"

namespace curlretry::cli::doctor {
namespace {

// The libcurl that the extension at `path` loads; `closure` keeps what the link points into.
std::optional<CurlLink> libcurl_loaded_by(const std::string& path, Closure& closure, std::string& error) {
  const auto elf = read_elf(path, error);
  if (!elf || !elf->is_elf) return std::nullopt;
  closure = load_closure(path, *elf);
  return find_libcurl(closure);
}

// An interpreter extension was found but its libcurl could not be: the user can still try it.
void extension_unresolved(Diagnosis& d, const Examined& x, const std::string& script, const std::string& summary) {
  d.verdict = DoctorVerdict::maybe;
  d.summary = summary;
  d.advice = "try it: curlretry -v -- " + (script.empty() ? basename_of(x.interpreter) + " SCRIPT" : x.invocation) +
             " and look for curlretry: lines on stderr";
}

// An interpreter extension links `link`: what the diagnosis records about it.
void extension_libcurl(Diagnosis& d, const CurlLink& link, const std::string& via, const std::string& how) {
  d.libcurl = link.object->name;
  d.flavour = link.flavour;
  d.via = via;
  detail(d, "libcurl", describe_link(link));
  detail(d, "how", how);
}

}  // namespace

void diagnose_python(Diagnosis& d, const Examined& x, const std::string& script) {
  const auto out = run_probe({x.interpreter, "-c",
                              "import pycurl, sys; sys.stdout.write(pycurl.__file__ + '\\n' + pycurl.version + '\\n')"},
                             std::chrono::seconds(15));
  const std::string base = basename_of(x.interpreter);
  const bool uses = script.empty() || contains_word(read_text(script), "pycurl");
  if (!out) {
    if (!script.empty() && uses) {
      d.verdict = DoctorVerdict::nothing_to_do;
      d.summary = script + " mentions pycurl, but " + base + " cannot import it, so it does not use libcurl yet";
      d.advice = "install pycurl for this interpreter (Debian: apt-get install python3-pycurl), then run doctor again";
    } else {
      d.verdict = DoctorVerdict::nothing_to_do;
      d.summary = base + " has no pycurl: its HTTP (urllib, requests, httpx, aiohttp) does not go through libcurl";
      d.advice = kNothingToRetry;
    }
    detail(d, "pycurl", "not importable by " + x.interpreter);
    return;
  }
  const auto l = lines_of(*out);
  const std::string module = l.empty() ? "" : l[0];
  const std::string version = l.size() > 1 ? l[1] : "";
  detail(d, "pycurl", module + (version.empty() ? "" : " (" + version + ")"));
  std::string error;
  Closure closure;
  const std::optional<CurlLink> link = libcurl_loaded_by(module, closure, error);
  if (!link) {
    extension_unresolved(d, x, script, "pycurl is installed but curlretry could not tell which libcurl it loads");
    return;
  }
  extension_libcurl(d, *link, "pycurl",
                    "Python loads pycurl with RTLD_LOCAL; libcurlretry.so finds that libcurl among the loaded objects");
  if (!script.empty() && !uses) {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = script + " does not import pycurl: its HTTP does not go through libcurl (pycurl would: " +
                link->object->name + ", " + link->flavour + " flavour)";
    d.advice = "nothing for curlretry to do, unless a module it imports uses pycurl";
    return;
  }
  d.verdict = DoctorVerdict::works_through;
  const std::string loads = "loads libcurl dynamically (" + link->object->name + ", " + link->flavour + " flavour)";
  d.summary = script.empty() ? base + " has pycurl, which " + loads + ": Python programs that use pycurl are covered"
                             : script + " uses pycurl, which " + loads;
  d.advice = "curlretry -- " + (script.empty() ? base + " SCRIPT" : x.invocation) + " ...";
}

void diagnose_php(Diagnosis& d, const Examined& x, const std::string& script) {
  const auto out = run_probe({x.interpreter, "-r",
                              "echo ini_get('extension_dir'), \"\\n\", extension_loaded('curl') ? 'curl' : 'none', "
                              "\"\\n\";"},
                             std::chrono::seconds(15));
  const std::string base = basename_of(x.interpreter);
  const auto l = out ? lines_of(*out) : std::vector<std::string>{};
  if (l.size() < 2 || l[1] != "curl") {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = base + " has no curl extension: its HTTP (file_get_contents, streams) does not go through libcurl";
    d.advice = "nothing for curlretry to do here (Debian: apt-get install php-curl would add curl_* functions)";
    detail(d, "php-curl", out ? "not loaded" : "could not ask " + x.interpreter);
    return;
  }
  const std::string extension = l[0] + "/curl.so";
  std::string error;
  Closure closure;
  const std::optional<CurlLink> link = libcurl_loaded_by(extension, closure, error);
  detail(d, "php-curl", extension + (link ? "" : " (not readable: " + error + ")"));
  if (!link) {
    extension_unresolved(d, x, script,
                         base + " has the curl extension, but curlretry could not tell which libcurl it links");
    return;
  }
  extension_libcurl(d, *link, "php-curl",
                    "PHP loads extensions with RTLD_DEEPBIND; libcurlretry.so's dlopen wrapper drops that flag for "
                    "libraries that link libcurl, so curl_exec() reaches the retry logic");
  const bool uses = script.empty() || contains_word(read_text(script), "curl_exec") ||
                    contains_word(read_text(script), "curl_multi_exec") ||
                    contains_word(read_text(script), "curl_init");
  if (!uses) {
    d.verdict = DoctorVerdict::nothing_to_do;
    d.summary = script + " does not call curl_init/curl_exec: its HTTP does not go through libcurl";
    d.advice = "nothing for curlretry to do, unless code it includes uses the curl extension";
    return;
  }
  d.verdict = DoctorVerdict::works_through;
  const std::string loads = "links libcurl dynamically (" + link->object->name + ", " + link->flavour + " flavour)";
  d.summary = script.empty()
                  ? base + " has the curl extension, which " + loads + ": PHP programs that use curl_* are covered"
                  : script + " uses the curl extension, which " + loads;
  d.advice = "curlretry -- " + (script.empty() ? base + " SCRIPT" : x.invocation) + " ...";
}

}  // namespace curlretry::cli::doctor

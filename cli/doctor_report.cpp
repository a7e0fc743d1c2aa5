// `curlretry doctor`'s output: the verdict line and its reasons, or one JSON object.
#include <iostream>
#include <string>
#include <vector>

#include "cli/doctor.h"
#include "cli/launch_auto.h"
#include "cli/json.h"

namespace curlretry::cli {

int run_doctor(const DoctorOptions& options) {
  if (options.command.empty()) {
    std::cerr << "curlretry doctor: name a program (usage: curlretry doctor [--json] COMMAND|PATH [ARGS...])\n";
    return 2;
  }
  Diagnosis d = diagnose(options.command);
  // What the launcher does with it by itself, so the advice is the command that works as it is.
  // (not-reachable already says so, with what else would help.)
  if (d.verdict == DoctorVerdict::nothing_to_do && routed_by_default(d)) d.advice = kRoutedAdvice;
  if (options.json) {
    std::cout << "{\"verdict\":" << json_quote(to_string(d.verdict)) << ",\"program\":" << json_quote(d.program)
              << ",\"chain\":" << json_list(d.chain) << ",\"via\":" << json_quote(d.via)
              << ",\"libcurl\":" << json_quote(d.libcurl) << ",\"flavour\":" << json_quote(d.flavour)
              << ",\"summary\":" << json_quote(d.summary) << ",\"details\":" << json_list(d.details)
              << ",\"advice\":" << json_quote(d.advice) << "}\n";
  } else {
    std::ostream& out = d.verdict == DoctorVerdict::error ? std::cerr : std::cout;
    if (d.verdict == DoctorVerdict::error) {
      out << "curlretry doctor: " << d.summary << '\n';
      if (!d.advice.empty()) out << "  next: " << d.advice << '\n';
    } else {
      out << to_string(d.verdict) << ": " << d.summary << '\n';
      for (const auto& line : d.details) {
        const auto colon = line.find(": ");
        std::string label = line.substr(0, colon + 1);
        label.append(label.size() < 10 ? 10 - label.size() : 1, ' ');
        out << "  " << label << line.substr(colon + 2) << '\n';
      }
      out << "  next:     " << d.advice << '\n';
    }
  }
  return std::cout.good() ? exit_status(d.verdict) : 1;
}

}  // namespace curlretry::cli

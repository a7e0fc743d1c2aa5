// Python and PHP: whether the interpreter has pycurl / the curl extension, which libcurl that
// loads, and whether the script uses it.
#pragma once

#include <string>

#include "cli/doctor_steps.h"

namespace curlretry::cli::doctor {

// Python: is pycurl importable, and which libcurl does it load?
void diagnose_python(Diagnosis& d, const Examined& x, const std::string& script);

// PHP: is the curl extension loaded, and which libcurl does it link?
void diagnose_php(Diagnosis& d, const Examined& x, const std::string& script);

}  // namespace curlretry::cli::doctor

// The CLI's names for preload/library_path.h (the lookup the proxy shares).
#pragma once

#include "preload/library_path.h"

namespace curlretry::cli {

using preload::find_library;
using preload::library_candidates;
using preload::LibraryLookup;

}  // namespace curlretry::cli

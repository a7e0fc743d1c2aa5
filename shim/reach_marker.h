// Tells the launcher that curlretry reached this program's libcurl: the launcher names a file in
// CURLRETRY_REACHED and, once the command has exited, says so on stderr if nobody created it
// (cli/reach_watch.h). Called once, on the first intercepted call; nothing happens at load.
#pragma once

namespace curlretry::shim {

void mark_reached();

}  // namespace curlretry::shim

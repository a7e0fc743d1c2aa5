// `curlretry proxy ca [--json]`: creates the local CA once (proxy/local_ca.h) and prints the
// variables a program needs to trust it.
#pragma once

namespace curlretry::proxy {

// `argv[0]` is "ca". Returns the exit status: 0, 1 (the CA cannot be made or is refused), 2 (usage).
int run_ca_command(int argc, char** argv);

}  // namespace curlretry::proxy

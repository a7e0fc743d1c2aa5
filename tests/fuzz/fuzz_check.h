// FUZZ_CHECK: an invariant of a fuzz target. Unlike assert() it stays on in release builds, and
// a failure aborts so libFuzzer saves the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);  \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

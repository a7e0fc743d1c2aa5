/* ctor_host: links ctor_lib (whose constructor, atexit handler and destructor run transfers) and
 * runs one transfer from main and one from an atexit handler registered in main (which runs
 * before every handler registered earlier). See ctor_lib.c for the output.
 * EDGE_ONLY_AT_EXIT=1: main does neither, so (with EDGE_SKIP_CTOR=1) the shim is first used
 * from ctor_lib's exit handler, after the shim's static destructors have run.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

void edge_transfer(const char* where);

static void atexit_late(void) { edge_transfer("atexit-late"); }

int main(void) {
  alarm(60);
  if (getenv("EDGE_ONLY_AT_EXIT") != NULL) return 0;
  atexit(atexit_late);
  edge_transfer("main");
  return 0;
}

// PHP (and some plugin hosts) dlopen their extensions with RTLD_DEEPBIND, which makes the
// extension bind to its own libcurl before any preloaded library: no preload could reach it.
// For a library that links libcurl, and only for those, the flag is dropped.
//
// The wrapper must not become the "caller" of dlopen: glibc resolves $ORIGIN and DT_RUNPATH of
// bare names against the object that called dlopen. On x86_64 it is therefore a few lines of
// assembly that compute the mode and then jump (not call) into the real dlopen, leaving the
// host's return address in place.
#include <dlfcn.h>

#include "elf/dynamic.h"
#include "shim/log.h"

extern "C" {

__attribute__((visibility("hidden"))) void* curlretry_real_dlopen = nullptr;

__attribute__((visibility("hidden"))) int curlretry_dlopen_mode(const char* file, int mode) {
  if (__atomic_load_n(&curlretry_real_dlopen, __ATOMIC_ACQUIRE) == nullptr) {
    void* real = dlsym(RTLD_NEXT, "dlopen");
    if (real == nullptr) real = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
    if (real == nullptr) real = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
    __atomic_store_n(&curlretry_real_dlopen, real, __ATOMIC_RELEASE);
  }
  if ((mode & RTLD_DEEPBIND) != 0 && file != nullptr && curlretry::elf::file_needs(file, "libcurl")) {
    mode &= ~RTLD_DEEPBIND;
  }
  return mode;
}

}  // extern "C"

#if defined(__x86_64__)
asm(R"(
  .text
  .globl dlopen
  .type dlopen, @function
  .p2align 4
dlopen:
  .cfi_startproc
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  call curlretry_dlopen_mode
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  movl %eax, %esi
  jmp *curlretry_real_dlopen(%rip)
  .cfi_endproc
  .size dlopen, .-dlopen
)");
#else
// Elsewhere the host's $ORIGIN-relative bare names resolve against this library instead; the
// README says so.
extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  int adjusted = curlretry_dlopen_mode(file, mode);
  auto real = reinterpret_cast<void* (*)(const char*, int)>(curlretry_real_dlopen);
  return real ? real(file, adjusted) : nullptr;
}
#endif

/*
 * fp_env.c -- the floating-point environment around the JVM's start and each JNI attach.
 */
#include "jvm_internal.h"

/* A host may trap FP exceptions (feenableexcept, FE_INEXACT included) or keep its own rounding and
 * sticky flags. HotSpot's C++ code (JVM creation, a thread's JNI attach) runs on the FP environment
 * it finds: with FE_INEXACT trapped the host died by SIGFPE in JVM creation, and after an init the
 * calling thread's sticky inexact flag was set. The start thread (and so every JVM thread) begins
 * in the default environment, and the calling thread's whole environment (x87 control and status,
 * MXCSR) is put back after the start and after its attach. x86-64 only, without libm: fnstenv and
 * stmxcsr, then fldenv and ldmxcsr, as glibc's fegetenv/fesetenv do. Upcalls keep the caller's
 * MXCSR themselves (HotSpot's upcall stubs load the standard one and restore the caller's). The
 * struct, nccltjFpEnv, is in jvm_internal.h. */

HIDDEN void nccltjFpSave(nccltjFpEnv* e) {
#if defined(__x86_64__)
  __asm__ volatile("fnstenv %0\n\tfldenv %0\n\tstmxcsr %1" : "=m"(e->x87), "=m"(e->mxcsr));
#else
  (void)e;
#endif
}

HIDDEN void nccltjFpRestore(const nccltjFpEnv* e) {
#if defined(__x86_64__)
  __asm__ volatile("fldenv %0\n\tldmxcsr %1" : : "m"(e->x87), "m"(e->mxcsr));
#else
  (void)e;
#endif
}

HIDDEN void nccltjFpDefault(void) {
#if defined(__x86_64__)
  unsigned short cw = 0x37f;
  unsigned int mxcsr = 0x1f80;
  __asm__ volatile("fnclex\n\tfldcw %0\n\tldmxcsr %1" : : "m"(cw), "m"(mxcsr));
#endif
}

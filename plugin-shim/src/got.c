/*
 * got.c -- the runtime's libraries' calls into libc, redirected: a GOT slot of a loaded library
 * (libjvm, and the runtime's lib/libjava.so, libnet.so, libnio.so, libzip.so and libjimage.so,
 * loaded here by full path before the JVM is created) rewritten to point at the shim's hook, so
 * that what the runtime does through it stays inside the plugin (env_hide.c: getenv; cloexec.c:
 * open, fopen, socket, pipe and the other calls that make a descriptor; signals.c: sigaction and
 * signal; locale.c: setlocale).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm_internal.h"

typedef ElfW(Rela) elfRela; /* a name clang-format reads as a type, unlike ElfW(Rela) */

typedef struct {
  ElfW(Addr) base;
  ElfW(Addr) relroStart, relroEnd;
} relroSearch;

static int findRelro(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  relroSearch* r = data;
  if (info->dlpi_addr != r->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
      r->relroStart = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      r->relroEnd = r->relroStart + info->dlpi_phdr[i].p_memsz;
    }
  return 1;
}

/* Points every GOT slot of `handle` that binds `name` (JUMP_SLOT or GLOB_DAT) at `to`; the old
 * target goes to *from. Returns the number of slots rewritten. */
HIDDEN int nccltjRewriteGot(void* handle, const char* name, void* to, void** from) {
  struct link_map* lm = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_ld == NULL) return 0;
  ElfW(Addr) base = lm->l_addr;
  const ElfW(Sym)* symtab = NULL;
  const char* strtab = NULL;
  const elfRela* tables[2] = {NULL, NULL};
  size_t sizes[2] = {0, 0};
  size_t relativeCount = 0; /* DT_RELACOUNT: RELATIVE relocations first in DT_RELA, never a slot */
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; d++) {
    ElfW(Addr) v = d->d_un.d_ptr;
    ElfW(Addr) abs = v < base ? v + base : v; /* glibc relocates these in place on x86-64 */
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = (const ElfW(Sym)*)abs; break;
      case DT_STRTAB: strtab = (const char*)abs; break;
      case DT_JMPREL: tables[0] = (const elfRela*)abs; break;
      case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
      case DT_RELA: tables[1] = (const elfRela*)abs; break;
      case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
      case DT_RELACOUNT: relativeCount = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == NULL || strtab == NULL) return 0;
  relroSearch relro = {base, 0, 0};
  dl_iterate_phdr(findRelro, &relro);
  long page = sysconf(_SC_PAGESIZE);
  int rewritten = 0;
  for (int t = 0; t < 2; t++) {
    /* libjvm 25: 124,228 of its 124,659 DT_RELA entries are RELATIVE; skipped, a scan reads 431. */
    for (size_t i = t == 1 ? relativeCount : 0; tables[t] != NULL && i < sizes[t] / sizeof(elfRela); i++) {
      const elfRela* r = &tables[t][i];
      unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      size_t sym = ELF64_R_SYM(r->r_info);
      if (sym == 0 || strcmp(strtab + symtab[sym].st_name, name) != 0) continue;
      void** slot = (void**)(base + r->r_offset);
      int readOnly = (ElfW(Addr))slot >= relro.relroStart && (ElfW(Addr))slot < relro.relroEnd;
      void* pageStart = (void*)((uintptr_t)slot & ~(uintptr_t)(page - 1));
      if (readOnly && mprotect(pageStart, (size_t)page, PROT_READ | PROT_WRITE) != 0) continue;
      void* old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
      if (old != to) {
        if (*from == NULL) *from = old;
        __atomic_store_n(slot, to, __ATOMIC_RELEASE);
      }
      if (readOnly) mprotect(pageStart, (size_t)page, PROT_READ);
      rewritten++;
    }
  }
  return rewritten;
}

/* The runtime's libraries that call open, fopen, socket, sigaction, signal or setlocale, in the
 * order their dependencies need (libnet before libnio: each names the other by soname, found among
 * the loaded objects). HotSpot and the class libraries later load the same paths (os::dll_load, by
 * <home>/lib/<name>), and dlopen returns the object already loaded: the same handle and slots. A
 * library a runtime does not have (a jlinked image) is skipped. */
static const char* runtimeLibraries[] = {"libjava.so", "libnet.so", "libnio.so", "libzip.so", "libjimage.so", NULL};

HIDDEN void nccltjHookRuntime(void* libjvmHandle, const char* libjvm) {
  char real[4096], server[4096], lib[4096];
  nccltjHookLibrary(libjvmHandle);
  if (realpath(libjvm, real) == NULL) return;
  nccltjDirOf(real, server, sizeof server);
  nccltjDirOf(server, lib, sizeof lib);
  for (int i = 0; runtimeLibraries[i] != NULL; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", lib, runtimeLibraries[i]);
    if (!nccltjIsFile(path)) continue;
    /* RTLD_LAZY and local, as HotSpot's own os::dll_load: nothing of it joins the global scope. */
    void* h = dlopen(path, RTLD_LAZY);
    if (h != NULL) nccltjHookLibrary(h);
  }
}

/* Every hook of the shim in one library's slots. */
HIDDEN void nccltjHookLibrary(void* handle) {
  nccltjHookDescriptors(handle);
  nccltjHookSignals(handle);
  nccltjHookLocale(handle);
  nccltjHookOutput(handle);
}

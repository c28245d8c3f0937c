/*
 * signature.c -- the hardware signature of the process at a communicator's init: NCCL's version
 * and the current GPU's name and compute capability, found without link-time dependencies and
 * without loading anything new into the host:
 *   - NCCL's version from ncclGetVersion (nccl.h: ncclResult_t ncclGetVersion(int*), code
 *     major*10000 + minor*100 + patch since 2.9), looked up with dlsym(RTLD_DEFAULT) and, if the
 *     host did not export it globally, in an already loaded libnccl.so.2 (found among the loaded objects);
 *   - the GPU from the CUDA driver that NCCL has loaded (libcuda.so.1, RTLD_NOLOAD only):
 *     cuCtxGetDevice, else the CUDA runtime's cudaGetDevice (libcudart, RTLD_NOLOAD), then
 *     cuDeviceGetName and cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR 75 / MINOR 76, cuda.h).
 * NVML is not used: it needs nvmlInit, a side effect on the host. A field it cannot learn stays
 * -1 (or ""), and the engine never matches a profile that names such a field.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "shim_internal.h"

typedef int (*getVersion_fn)(int*);
typedef int (*ctxGetDevice_fn)(int*);
typedef int (*deviceGetName_fn)(char*, int, int);
typedef int (*deviceGetAttribute_fn)(int*, int, int);
typedef int (*cudaGetDevice_fn)(int*);

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

/* A handle on a library the process already has, found among the loaded objects by its file
 * name (`prefix`, then the end or a '.': "libcuda.so" finds libcuda.so.1 and libcuda.so.550.54);
 * NULL if none. dlopen(soname, RTLD_NOLOAD) would do as much but searches the library path on
 * disk first when the library is absent (a dozen failed opens per init, measured with strace). */
struct findLoaded {
  const char* prefix;
  char path[4096];
};

static int findLoadedObject(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct findLoaded* f = data;
  const char* p = info->dlpi_name;
  if (p == NULL || p[0] == '\0') return 0;
  const char* base = strrchr(p, '/');
  base = base != NULL ? base + 1 : p;
  size_t n = strlen(f->prefix);
  if (strncmp(base, f->prefix, n) != 0 || (base[n] != '\0' && base[n] != '.')) return 0;
  snprintf(f->path, sizeof f->path, "%s", p);
  return 1;
}

static void* loaded(const char* prefix) {
  struct findLoaded f = {prefix, ""};
  dl_iterate_phdr(findLoadedObject, &f);
  return f.path[0] != '\0' ? dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
}

static int ncclVersion(void) {
  int v = -1;
  getVersion_fn f = (getVersion_fn)dlsym(RTLD_DEFAULT, "ncclGetVersion");
  void* lib = NULL;
  if (f == NULL && (lib = loaded("libnccl.so")) != NULL) f = (getVersion_fn)dlsym(lib, "ncclGetVersion");
  if (f == NULL || f(&v) != 0 || v <= 0) v = -1;
  if (lib != NULL) dlclose(lib);
  return v;
}

static int currentDevice(void* cuda) {
  int dev = -1;
  ctxGetDevice_fn ctx = (ctxGetDevice_fn)dlsym(cuda, "cuCtxGetDevice");
  if (ctx != NULL && ctx(&dev) == 0 && dev >= 0) return dev;
  void* rt = loaded("libcudart.so");
  if (rt == NULL) return -1;
  cudaGetDevice_fn g = (cudaGetDevice_fn)dlsym(rt, "cudaGetDevice");
  int ok = g != NULL && g(&dev) == 0 && dev >= 0;
  dlclose(rt);
  return ok ? dev : -1;
}

HIDDEN void nccltjHardwareSignature(nccltj_hw_t* out) {
  memset(out, 0, sizeof *out);
  out->ncclVersion = ncclVersion();
  out->ccMajor = out->ccMinor = -1;
  void* cuda = loaded("libcuda.so");
  if (cuda == NULL) return;
  int dev = currentDevice(cuda);
  if (dev >= 0) {
    deviceGetName_fn name = (deviceGetName_fn)dlsym(cuda, "cuDeviceGetName");
    deviceGetAttribute_fn attr = (deviceGetAttribute_fn)dlsym(cuda, "cuDeviceGetAttribute");
    if (name == NULL || name(out->gpuName, (int)sizeof out->gpuName - 1, dev) != 0) out->gpuName[0] = '\0';
    out->gpuName[sizeof out->gpuName - 1] = '\0';
    int major = -1, minor = -1;
    if (attr != NULL && attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0 &&
        attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0 && major > 0) {
      out->ccMajor = major;
      out->ccMinor = minor;
    }
  }
  dlclose(cuda);
}

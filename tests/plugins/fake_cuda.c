/*
 * fake_cuda.c -- a stand-in for the CUDA driver (soname libcuda.so.1) for the hardware-signature
 * tests: LD_PRELOADed into the harness, it is "the CUDA driver the process has already loaded",
 * which the shim finds with dlopen("libcuda.so.1", RTLD_NOLOAD) (plugin-shim/src/signature.c).
 * It implements the three driver calls the shim makes, with the CUresult 0 = CUDA_SUCCESS and the
 * attribute ids 75/76 (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR) of cuda.h:
 *   FAKE_CUDA_NAME  the device name (default "NVIDIA H200")
 *   FAKE_CUDA_CC    "MAJOR.MINOR" (default "9.0")
 *   FAKE_CUDA_NO_CONTEXT  set: cuCtxGetDevice fails (no current context), as before cudaSetDevice
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuCtxGetDevice(int* device) {
  if (getenv("FAKE_CUDA_NO_CONTEXT")) return 201; /* CUDA_ERROR_INVALID_CONTEXT */
  *device = 0;
  return 0;
}

EXPORT int cuDeviceGetName(char* name, int len, int device) {
  const char* n = getenv("FAKE_CUDA_NAME");
  if (device != 0 || len <= 0) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  snprintf(name, (size_t)len, "%s", n ? n : "NVIDIA H200");
  return 0;
}

EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  const char* cc = getenv("FAKE_CUDA_CC");
  int major = 9, minor = 0;
  if (cc) sscanf(cc, "%d.%d", &major, &minor);
  if (device != 0) return 101;
  if (attribute == 75) {
    *value = major;
    return 0;
  }
  if (attribute == 76) {
    *value = minor;
    return 0;
  }
  return 1; /* CUDA_ERROR_INVALID_VALUE */
}

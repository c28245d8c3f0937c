/*
 * jvm_preload.so: LD_PRELOAD it into the host harness to stand for a host process that already
 * runs a JVM of its own (created before NCCL loads the tuner). Its constructor dlopens
 * $JAVA_HOME/lib/server/libjvm.so with RTLD_GLOBAL and creates a JVM with -Xrs; the plugin must then
 * join that JVM instead of creating one (a process can hold only one).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>

typedef jint (*create_vm_fn)(JavaVM**, void**, void*);

__attribute__((constructor)) static void createHostJvm(void) {
  const char* home = getenv("JAVA_HOME");
  char path[4096];
  snprintf(path, sizeof path, "%s/lib/server/libjvm.so", home ? home : "");
  void* h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (h == NULL) {
    fprintf(stderr, "jvm_preload: cannot load %s: %s\n", path, dlerror());
    return;
  }
  create_vm_fn create = (create_vm_fn)dlsym(h, "JNI_CreateJavaVM");
  JavaVMOption opts[] = {{.optionString = "-Xrs"},
                         {.optionString = "-XX:-UsePerfData"},
                         {.optionString = "--enable-native-access=ALL-UNNAMED"}};
  JavaVMInitArgs args = {.version = JNI_VERSION_10, .nOptions = 3, .options = opts, .ignoreUnrecognized = JNI_FALSE};
  JavaVM* vm;
  JNIEnv* env;
  if (create == NULL || create(&vm, (void**)&env, &args) != JNI_OK) {
    fprintf(stderr, "jvm_preload: JNI_CreateJavaVM failed\n");
    return;
  }
  (*vm)->DetachCurrentThread(vm);
  printf("jvm_preload: host JVM created\n");
  fflush(stdout);
}

/*
 * env_hide.c -- the environment the plugin's JVM sees: libjvm's own getenv and secure_getenv go
 * through the shim (their GOT slots in libjvm rewritten), which hides JAVA_TOOL_OPTIONS and
 * _JAVA_OPTIONS and gives HotSpot the shim's _JAVA_SR_SIGNUM; the host's environment itself is
 * never touched.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

#include "jvm_internal.h"

/* JAVA_TOOL_OPTIONS and _JAVA_OPTIONS are read by HotSpot itself during creation (arguments.cpp:
 * JAVA_TOOL_OPTIONS before the JavaVMInitArgs options, _JAVA_OPTIONS after them, so neither can
 * be overridden from here, and HotSpot prints "Picked up ..." to fd 2 before any hook is set).
 * They are meant for the job's other Java tools: the plugin's JVM does not take them. The host's
 * environment is not touched (the shim used to point `environ` at a copy during creation; a host
 * thread's setenv beside it crashed the process, 2 runs of 7, with 64 communicators starting):
 * instead libjvm's own calls to getenv and secure_getenv go through jvmGetenv, by rewriting
 * libjvm's GOT slots for them (libjvm is the plugin's, loaded by the shim, and it is linked with
 * full RELRO: the page is made writable for the one store and read-only again). jvmGetenv hides
 * the two variables and gives HotSpot the shim's _JAVA_SR_SIGNUM; every other name is the host's
 * live environment. */
static char* (*realGetenv)(const char*);
static char* (*realSecureGetenv)(const char*);
static char srValue[16]; /* the _JAVA_SR_SIGNUM value the JVM sees, "" for the host's */
static int envHooked;

static int hiddenName(const char* name) {
  return strcmp(name, "JAVA_TOOL_OPTIONS") == 0 || strcmp(name, "_JAVA_OPTIONS") == 0;
}

static char* jvmGetenv(const char* name) {
  if (name == NULL) return realGetenv(name);
  if (hiddenName(name)) return NULL;
  if (srValue[0] != '\0' && strcmp(name, "_JAVA_SR_SIGNUM") == 0) return srValue;
  return realGetenv(name);
}

static char* jvmSecureGetenv(const char* name) {
  if (name == NULL) return realSecureGetenv(name);
  if (hiddenName(name)) return NULL;
  if (srValue[0] != '\0' && strcmp(name, "_JAVA_SR_SIGNUM") == 0) return srValue;
  return realSecureGetenv(name);
}

/* Returns 0 after nccltjFailf() where the variables are set and cannot be hidden. */
HIDDEN int nccltjHideEnvironmentOptions(void* libjvmHandle) {
  static const char* hidden[] = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", NULL};
  char agents[512] = "", names[64] = "";
  int present[2] = {0, 0};
  for (int h = 0; hidden[h] != NULL; h++) {
    const char* value = getenv(hidden[h]);
    if (value == NULL || value[0] == '\0') continue;
    present[h] = 1;
    char* v = strdup(value);
    char* save = NULL;
    for (char* t = v ? strtok_r(v, " \t\n", &save) : NULL; t != NULL; t = strtok_r(NULL, " \t\n", &save)) {
      if (!nccltjIsAgentOption(t)) continue;
      size_t al = strlen(agents);
      snprintf(agents + al, sizeof agents - al, "%s'%s'", al ? ", " : "", t);
    }
    free(v);
  }
  snprintf(names, sizeof names, "%s%s%s", present[0] ? "JAVA_TOOL_OPTIONS" : "",
           present[0] && present[1] ? " and " : "", present[1] ? "_JAVA_OPTIONS" : "");
  const char* sr = getenv("_JAVA_SR_SIGNUM");
  if (nccltjSrSignal() > 0 && (sr == NULL || !nccltjSrValueValid(sr) || atoi(sr) != nccltjSrSignal()))
    snprintf(srValue, sizeof srValue, "%d", nccltjSrSignal());
  if (!envHooked) {
    void* g = NULL;
    void* sg = NULL;
    int n = nccltjRewriteGot(libjvmHandle, "getenv", (void*)jvmGetenv, &g);
    if (g != NULL) realGetenv = (char* (*)(const char*))g;
    int m = nccltjRewriteGot(libjvmHandle, "secure_getenv", (void*)jvmSecureGetenv, &sg);
    if (sg != NULL) realSecureGetenv = (char* (*)(const char*))sg;
    if (realGetenv == NULL) realGetenv = getenv;
    if (realSecureGetenv == NULL) realSecureGetenv = secure_getenv;
    envHooked = n > 0;
    (void)m;
  }
  if (!envHooked) {
    /* No getenv slot found in this libjvm: HotSpot reads the host's environment as it is. */
    srValue[0] = '\0';
    nccltjSetSrSignal(sr != NULL && nccltjSrValueValid(sr) ? atoi(sr) : SIGUSR2);
    if (names[0] != '\0') {
      nccltjFailf("%s set, and this libjvm's getenv could not be hooked to hide them from the plugin's JVM (they are "
                  "meant for other Java tools and would change it); the plugin changes nothing",
                  names);
      return 0;
    }
    return 1;
  }
  if (agents[0] != '\0') {
    char msg[800];
    snprintf(msg, sizeof msg,
             "%s hold the agent option(s) %s: refused, the plugin's JVM runs no agent or "
             "debugger (it would stop or end the process); the plugin works without them",
             names, agents);
    nccltjLog((void*)nccltjFirstLogger, NCCL_LOG_WARN, msg);
  } else if (names[0] != '\0') {
    nccltjNoticef("%s not applied to the plugin's JVM (meant for other Java tools; NCCL_TUNER_JAVA_OPTS "
                  "is the plugin's)",
                  names);
  }
  return 1;
}

/*
 * locale.c -- the locale around the JVM's start: the JVM's start calls setlocale(LC_ALL, "")
 * (libjava's java_props_md.c, for user.language, sun.jnu.encoding and native.encoding). The
 * runtime's setlocale is hooked (GOT slots of libjava and libjvm) to set a locale of the calling
 * thread only, so the process's locale is never changed; where a runtime has no such slot, the
 * host's locale is saved before and put back after, but only where the locale still holds what
 * the JVM set (a host thread may have set its own meanwhile).
 */
#define _GNU_SOURCE
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm_internal.h"

/* The process locale was the environment's for the whole start (setlocale(LC_ALL, "") on the
 * start thread, put back after it): another host thread's snprintf("%.1f", 0.5) printed "0,5"
 * under LANG=de_DE.UTF-8 meanwhile (found by a hostile host: 2360097 of 2600827 polls). The
 * runtime's setlocale comes here instead. A setting call makes a locale (newlocale, on the
 * thread's current one) and uses it on the calling thread only (uselocale); queries on that
 * thread name its categories, and nl_langinfo(CODESET) there reads it, so libjava's properties
 * come out as under the process-wide call (user.language, sun.jnu.encoding, native.encoding). A
 * locale that does not exist fails the call and changes nothing, as setlocale does. Other
 * threads, and the start thread's queries before any setting call, see the process's locale. */
typedef char* (*setlocaleFn)(int, const char*);
static setlocaleFn realSetlocale;
static int localeHooked;
static __thread locale_t threadLocale;
/* The calling thread's own locale before the runtime's first setting call on it (uselocale's
 * query: LC_GLOBAL_LOCALE, or a host's per-thread locale), put back at the start's end. */
static __thread locale_t hostThreadLocale;
/* A composite LC_ALL name; on the heap: the library's TLS block lives in static TLS (plugin.c's
 * initial-exec variables), where a second copy of the library finds little room. */
static __thread char* threadName;
#define THREAD_NAME_SIZE 1024

static const int categories[] = {LC_CTYPE, LC_NUMERIC, LC_TIME,    LC_COLLATE,   LC_MONETARY,    LC_MESSAGES,
                                 LC_PAPER, LC_NAME,    LC_ADDRESS, LC_TELEPHONE, LC_MEASUREMENT, LC_IDENTIFICATION};
static const char* categoryNames[] = {"LC_CTYPE",    "LC_NUMERIC",   "LC_TIME",        "LC_COLLATE",
                                      "LC_MONETARY", "LC_MESSAGES",  "LC_PAPER",       "LC_NAME",
                                      "LC_ADDRESS",  "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION"};
#define N_CATEGORIES (int)(sizeof categories / sizeof categories[0])

/* What setlocale(cat, NULL) would say of `l`: a category's name; for LC_ALL the one name where
 * all agree, else glibc's composite "LC_CTYPE=...;LC_NUMERIC=...;...". */
static char* localeName(locale_t l, int cat) {
  if (cat != LC_ALL) return nl_langinfo_l(_NL_LOCALE_NAME(cat), l);
  const char* first = nl_langinfo_l(_NL_LOCALE_NAME(LC_CTYPE), l);
  int same = 1;
  for (int i = 1; i < N_CATEGORIES; i++) same &= strcmp(first, nl_langinfo_l(_NL_LOCALE_NAME(categories[i]), l)) == 0;
  if (same) return (char*)first;
  if (threadName == NULL && (threadName = malloc(THREAD_NAME_SIZE)) == NULL) return (char*)first;
  size_t n = 0;
  threadName[0] = '\0';
  for (int i = 0; i < N_CATEGORIES && n < THREAD_NAME_SIZE; i++)
    n += (size_t)snprintf(threadName + n, THREAD_NAME_SIZE - n, "%s%s=%s", i ? ";" : "", categoryNames[i],
                          nl_langinfo_l(_NL_LOCALE_NAME(categories[i]), l));
  return threadName;
}

static int validCategory(int cat) {
  if (cat == LC_ALL) return 1;
  for (int i = 0; i < N_CATEGORIES; i++)
    if (categories[i] == cat) return 1;
  return 0;
}

static char* jvmSetlocale(int cat, const char* name) {
  if (!validCategory(cat)) return (realSetlocale != NULL ? realSetlocale : setlocale)(cat, name);
  if (name == NULL)
    return threadLocale != (locale_t)0 ? localeName(threadLocale, cat) :
                                         (realSetlocale != NULL ? realSetlocale : setlocale)(cat, NULL);
  locale_t base = duplocale(threadLocale != (locale_t)0 ? threadLocale : LC_GLOBAL_LOCALE);
  if (base == (locale_t)0) return NULL;
  locale_t l = newlocale(cat == LC_ALL ? LC_ALL_MASK : 1 << cat, name, base);
  if (l == (locale_t)0) {
    freelocale(base);
    return NULL;
  }
  locale_t before = uselocale(l);
  if (threadLocale == (locale_t)0) hostThreadLocale = before;
  if (threadLocale != (locale_t)0) freelocale(threadLocale);
  threadLocale = l;
  return localeName(l, cat);
}

HIDDEN void nccltjHookLocale(void* handle) {
  NCCLTJ_HOOK(handle, "setlocale", jvmSetlocale, realSetlocale);
  if (realSetlocale != NULL) localeHooked = 1;
}

HIDDEN void nccltjLocaleThreadEnd(void) {
  free(threadName);
  threadName = NULL;
  if (threadLocale == (locale_t)0) return;
  uselocale(hostThreadLocale != (locale_t)0 ? hostThreadLocale : LC_GLOBAL_LOCALE);
  hostThreadLocale = (locale_t)0;
  freelocale(threadLocale);
  threadLocale = (locale_t)0;
}

static char jvmLocale[512]; /* setlocale(LC_ALL, NULL) right after the JVM's start set it */

HIDDEN void nccltjNoteJvmLocale(void) {
  const char* l = setlocale(LC_ALL, NULL);
  snprintf(jvmLocale, sizeof jvmLocale, "%s", l != NULL ? l : "");
}

/* The locale the JVM's setlocale(LC_ALL, "") sets, from the environment as glibc reads it
 * (LC_ALL, else LC_<category>, else LANG, else C; POSIX reads as C), computed before the JVM is
 * created so that a host thread's setlocale after the JVM's is told apart from it. NULL where the
 * categories differ (the snapshot after creation is used then); the caller's value where that
 * locale does not exist (setlocale fails and changes nothing). */
static const char* environmentLocale(const char* current) {
  static char name[256];
  static const char* cats[] = {"LC_CTYPE",       "LC_NUMERIC",        "LC_TIME", "LC_COLLATE", "LC_MONETARY",
                               "LC_MESSAGES",    "LC_PAPER",          "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE",
                               "LC_MEASUREMENT", "LC_IDENTIFICATION", NULL};
  const char* all = getenv("LC_ALL");
  const char* lang = getenv("LANG");
  const char* first = NULL;
  for (int i = 0; cats[i] != NULL; i++) {
    const char* v = all != NULL && all[0] != '\0' ? all : getenv(cats[i]);
    if (v == NULL || v[0] == '\0') v = lang != NULL && lang[0] != '\0' ? lang : "C";
    if (strcmp(v, "POSIX") == 0) v = "C";
    if (first == NULL) first = v;
    else if (strcmp(first, v) != 0) return NULL;
  }
  locale_t l = newlocale(LC_ALL_MASK, first, (locale_t)0);
  if (l == (locale_t)0) return current;
  freelocale(l);
  snprintf(name, sizeof name, "%s", first);
  return name;
}

/* Everything the locale's restore needs, saved on the calling thread before the start. */
HIDDEN void nccltjLocaleSave(nccltjLocale* l) {
  char* locale = setlocale(LC_ALL, NULL);
  l->saved = locale != NULL ? strdup(locale) : NULL;
  const char* envLocale = l->saved != NULL ? environmentLocale(l->saved) : NULL;
  l->expected = envLocale != NULL ? strdup(envLocale) : NULL;
}

/* The JVM's start set the locale from the environment (setlocale(LC_ALL, "")): put back the
 * host's only if it still holds the value the JVM set (a host thread may have set its own). */
HIDDEN void nccltjLocaleRestore(nccltjLocale* l) {
  if (l->saved != NULL && localeHooked) { /* the runtime never set the process's locale */
    free(l->saved);
    free(l->expected);
  } else if (l->saved != NULL) {
    const char* now = setlocale(LC_ALL, NULL);
    const char* jvms = l->expected != NULL ? l->expected : jvmLocale;
    if (now != NULL && jvms[0] != '\0' && strcmp(now, jvms) == 0 && strcmp(now, l->saved) != 0)
      setlocale(LC_ALL, l->saved);
    free(l->saved);
    free(l->expected);
  }
}

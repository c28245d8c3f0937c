/*
 * locale.c -- the locale around the JVM's start: the JVM's start calls setlocale(LC_ALL, ""), so
 * the host's locale is saved before and put back after, but only where the locale still holds
 * what the JVM set (a host thread may have set its own meanwhile).
 */
#define _GNU_SOURCE
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm_internal.h"

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
  if (l->saved != NULL) {
    const char* now = setlocale(LC_ALL, NULL);
    const char* jvms = l->expected != NULL ? l->expected : jvmLocale;
    if (now != NULL && jvms[0] != '\0' && strcmp(now, jvms) == 0 && strcmp(now, l->saved) != 0)
      setlocale(LC_ALL, l->saved);
    free(l->saved);
    free(l->expected);
  }
}

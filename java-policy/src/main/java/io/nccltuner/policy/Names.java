package io.nccltuner.policy;

import java.util.Locale;

/** Case- and separator-insensitive enum lookup and "did you mean" suggestions. */
final class Names {
  private Names() {}

  static String fold(String s) {
    return s.replace("_", "").replace("-", "").replace(" ", "").toUpperCase(java.util.Locale.ROOT);
  }

  static <E extends Enum<E>> E lookup(E[] values, String name) {
    if (name == null) {
      return null;
    }
    String f = fold(name);
    for (E e : values) {
      if (fold(e.name()).equals(f)) {
        return e;
      }
    }
    return null;
  }

  /** The closest name by edit distance (at most 3 edits), or null. */
  static <E extends Enum<E>> String suggest(E[] values, String name) {
    String best = null;
    int bestD = 4;
    for (E e : values) {
      int d = distance(fold(e.name()), fold(name));
      if (d < bestD) {
        bestD = d;
        best = e.name();
      }
    }
    return best;
  }

  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int c = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + c);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}

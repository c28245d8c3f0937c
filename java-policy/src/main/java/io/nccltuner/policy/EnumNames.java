package io.nccltuner.policy;

/**
 * Case- and separator-insensitive name lookup and the one "did you mean" routine of the project:
 * the closest name within {@link #MAX_EDITS} edits, compared case- and separator-insensitively.
 */
final class EnumNames {
    private EnumNames() {}

    static String fold(String s) {
        return s.replace("_", "").replace("-", "").replace(" ", "").toUpperCase(java.util.Locale.ROOT);
    }

    /**
     * @param byId the constants in NCCL's id order
     * @param id an NCCL id
     * @param kind what the ids number ("algorithm"), for the message
     * @return the constant with that id
     * @throws IllegalArgumentException "no NCCL algorithm with id 9" if the id is out of range
     */
    static <E extends Enum<E>> E ofId(E[] byId, int id, String kind) {
        if (id < 0 || id >= byId.length) {
            throw new IllegalArgumentException("no NCCL " + kind + " with id " + id);
        }
        return byId[id];
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

    /** Most edits (insertions, deletions, substitutions) between a name and its suggestion. */
    static final int MAX_EDITS = 3;

    /** The closest enum constant's name, or null (see {@link #suggest(Iterable, String)}). */
    static <E extends Enum<E>> String suggest(E[] values, String name) {
        return suggest(java.util.Arrays.stream(values).map(Enum::name).toList(), name);
    }

    /**
     * @param names the names that are allowed
     * @param name what was written
     * @return the closest allowed name within {@link #MAX_EDITS} edits (first wins ties), or null
     */
    static String suggest(Iterable<String> names, String name) {
        String best = null;
        int bestD = MAX_EDITS + 1;
        for (String n : names) {
            int d = distance(fold(n), fold(name));
            if (d < bestD) {
                bestD = d;
                best = n;
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

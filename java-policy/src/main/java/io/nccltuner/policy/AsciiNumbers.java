package io.nccltuner.policy;

/**
 * Whole numbers of user input (policy files, NCCL example-tuner configs, traces, measurement files,
 * NCCL logs, command-line options) written in ASCII digits only.
 *
 * <p>{@link Long#parseLong}, {@link Integer#parseInt} and {@link Character#isDigit} accept every
 * Unicode decimal digit: {@code Long.parseLong("٦٤")} (Arabic-Indic) and {@code "６４"} (fullwidth)
 * are 64. nccl-tests, NCCL's {@code strtol} and the time columns ({@link Double#parseDouble}) read
 * only {@code 0}-{@code 9}, so a size written otherwise is no number here either: its row is mangled.
 */
public final class AsciiNumbers {
    private AsciiNumbers() {}

    /**
     * @param c a character
     * @return whether it is {@code 0}..{@code 9}
     */
    public static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /**
     * @param s text
     * @return whether it is an optional {@code +} or {@code -} and one or more ASCII digits
     */
    public static boolean isInteger(String s) {
        int i = !s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+') ? 1 : 0;
        if (i == s.length()) {
            return false;
        }
        for (; i < s.length(); i++) {
            if (!isDigit(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link Long#parseLong}, but of ASCII digits only.
     *
     * @param s an optional sign and ASCII digits
     * @return its value
     * @throws NumberFormatException for anything else, or a value outside the range of long
     */
    public static long parseLong(String s) {
        if (!isInteger(s)) {
            throw new NumberFormatException("not a whole number in ASCII digits: '" + s + "'");
        }
        return Long.parseLong(s);
    }

    /**
     * {@link Long#parseUnsignedLong}, but of ASCII digits only.
     *
     * @param s an optional {@code +} and ASCII digits
     * @return its value, 0 .. 2^64 - 1 as an unsigned long
     * @throws NumberFormatException for anything else (a {@code -} sign too), or a value above 2^64 - 1
     */
    public static long parseUnsignedLong(String s) {
        if (!isInteger(s) || s.charAt(0) == '-') {
            throw new NumberFormatException("not a whole number in ASCII digits: '" + s + "'");
        }
        return Long.parseUnsignedLong(s);
    }

    /**
     * {@link Integer#parseInt}, but of ASCII digits only.
     *
     * @param s an optional sign and ASCII digits
     * @return its value
     * @throws NumberFormatException for anything else, or a value outside the range of int
     */
    public static int parseInt(String s) {
        if (!isInteger(s)) {
            throw new NumberFormatException("not a whole number in ASCII digits: '" + s + "'");
        }
        return Integer.parseInt(s);
    }

    /**
     * What to add to a "not a number" message when the text holds digits of another script, which
     * look like numbers but are not read as such.
     *
     * @param s the refused text
     * @return {@code " (only ASCII digits 0-9 are read as numbers)"}, or "" when it holds none
     */
    public static String hint(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isDigit(c) && !isDigit(c)) {
                return " (only ASCII digits 0-9 are read as numbers)";
            }
        }
        return "";
    }
}

package io.nccltuner.policy;

import java.math.BigInteger;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes with IEC units: parsing ("4 KiB", "1.5MiB", "1048576", "64 B") and formatting.
 *
 * <p>Only binary units are accepted (B, KiB, MiB, GiB, TiB, PiB, EiB), and nccl-tests' one-letter
 * spelling of them ({@code -e 64M}: K, M, G, T, P, E, which nccl-tests reads as powers of 1024);
 * SI units such as "MB" are refused because tools in this field use them for both 10^6 and 2^20.
 */
public final class ByteSize {
    private static final Pattern SIZE = Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([A-Za-z]*)\\s*");
    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    private static final String[] QUARTERS = {"", ".25", ".5", ".75"};

    private ByteSize() {}

    /**
     * Parses a size.
     *
     * @param text an unsigned integer or a number followed by an IEC unit, case-insensitive in the
     *     unit ("4kib" is 4096), or by nccl-tests' one-letter unit ("64M" is 64 MiB)
     * @return the size in bytes, at most 2^63 - 1
     * @throws IllegalArgumentException naming what is wrong: an unknown or SI unit, a fraction that
     *     is not a whole number of bytes, or a value too large
     */
    public static long parse(String text) {
        Matcher m = SIZE.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a size; write bytes as an integer or with an IEC unit, e.g. 4 KiB");
        }
        String unit = m.group(2);
        int shift = -1;
        for (int i = 0; i < UNITS.length; i++) {
            if (UNITS[i].equalsIgnoreCase(unit)
                    || (i == 0 && unit.isEmpty())
                    || (i > 0 && unit.equalsIgnoreCase(UNITS[i].substring(0, 1)))) {
                shift = 10 * i;
            }
        }
        if (shift < 0) {
            String hint = unit.toUpperCase(Locale.ROOT).matches("[KMGTPE]B?")
                    ? "; SI units are ambiguous here, write "
                            + unit.toUpperCase(Locale.ROOT).charAt(0) + "iB"
                    : "; units are B, KiB, MiB, GiB, TiB";
            throw new IllegalArgumentException("unknown size unit '" + unit + "' in '" + text.trim() + "'" + hint);
        }
        // Exact arithmetic on integers (number * 10^decimals, then * 2^shift / 10^decimals), not
        // BigDecimal: its static initialiser alone takes 40-75 ms in the plugin's interpreted start.
        String number = m.group(1);
        int point = number.indexOf('.');
        String digits = point < 0 ? number : number.substring(0, point) + number.substring(point + 1);
        int decimals = point < 0 ? 0 : number.length() - point - 1;
        while (decimals > 0 && digits.charAt(digits.length() - 1) == '0') {
            digits = digits.substring(0, digits.length() - 1);
            decimals--;
        }
        BigInteger[] wholeAndRest =
                new BigInteger(digits).shiftLeft(shift).divideAndRemainder(BigInteger.TEN.pow(decimals));
        if (wholeAndRest[1].signum() != 0 || wholeAndRest[0].bitLength() > 63) {
            throw new IllegalArgumentException("'" + text.trim() + "' is not a whole number of bytes below 2^63");
        }
        return wholeAndRest[0].longValue();
    }

    /**
     * How the plugin and the tools spell a half-open range of sizes: the decision log's {@code
     * bucket} field, and wherever a command prints a bucket or a rule's range.
     *
     * @param fromBytes its first size, bytes
     * @param toBytes its end (exclusive), bytes; -1 for none
     * @return "[1 MiB, 1.25 MiB)"; the end "inf" when toBytes is -1
     */
    public static String range(long fromBytes, long toBytes) {
        return "[" + format(fromBytes) + ", " + (toBytes == -1L ? "inf" : format(toBytes)) + ")";
    }

    /**
     * Formats a size for humans and for policy files (the output parses back with {@link #parse}).
     *
     * <p>Sizes that are a multiple of a unit print in that unit ("24 MiB", "3 KiB"); sizes that are
     * a multiple of a quarter unit and at least one unit print with a fraction ("1.25 MiB"), which
     * covers every point of the {@link SizeGrid}; other sizes print in bytes.
     *
     * @param bytes size in bytes, unsigned; -1 prints as "unbounded"
     * @return the formatted size
     */
    public static String format(long bytes) {
        if (bytes == -1L) {
            return "unbounded";
        }
        if (bytes < 0) {
            return Long.toUnsignedString(bytes) + " B";
        }
        for (int i = UNITS.length - 1; i >= 1; i--) {
            long unit = 1L << (10 * i);
            if (bytes >= unit && bytes % (unit / 4) == 0) {
                long q = bytes / (unit / 4);
                String num = q / 4 + QUARTERS[(int) (q % 4)];
                return num + " " + UNITS[i];
            }
        }
        return bytes + " B";
    }

    /**
     * A size in a unit followed by its exact byte count, once: {@code sized} then {@code (65536 B)},
     * or {@code sized} alone where it already is the byte count ({@code 4 B}, {@code 1025 B}), so no
     * message prints {@code 4 B (4 B)} (issue 21).
     *
     * @param sized the size as printed ({@link #format} or {@link #readable} of {@code bytes})
     * @param bytes the same size in bytes, unsigned
     * @return {@code 64 KiB (65536 B)}, or {@code 4 B}
     */
    public static String withBytes(String sized, long bytes) {
        String exact = Long.toUnsignedString(bytes) + " B";
        return sized.equals(exact) ? exact : sized + " (" + exact + ")";
    }

    /**
     * A size for a table column: {@link #format} where that reads well (at most four digits before
     * the point: "512 KiB", "1.5 KiB", "1000 B"), else about three significant digits in the largest
     * unit, marked approximate ("~125.06 MiB" for 131136000 B, which {@link #format} writes
     * "128062.5 KiB"). Not for policy files: only {@link #format} parses back exactly.
     *
     * @param bytes size in bytes, unsigned; -1 prints as "unbounded"
     * @return the size
     */
    public static String readable(long bytes) {
        String exact = format(bytes);
        int space = exact.indexOf(' ');
        String num = space < 0 ? exact : exact.substring(0, space);
        int point = num.indexOf('.');
        if (bytes < 0 || (point < 0 ? num.length() : point) <= 4) {
            return exact;
        }
        int unit = Math.min(UNITS.length - 1, (63 - Long.numberOfLeadingZeros(bytes)) / 10);
        double v = bytes / Math.pow(1024, unit);
        String s = String.format(Locale.ROOT, "%.2f", v).replaceFirst("\\.?0+$", "");
        return (v * Math.pow(1024, unit) == bytes && s.indexOf('.') < 0 ? "" : "~") + s + " " + UNITS[unit];
    }
}

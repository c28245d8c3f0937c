package io.nccltuner.compile;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.AsciiNumbers;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads measurement CSV files in two formats, told apart by their header line.
 *
 * <p><b>Sweep format</b> ({@code ../shared/data/measurements}, one row per configuration, size
 * and replicate): {@code collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,
 * config,replicate,median_us,p95_us,busbw_gbps,wrong}. {@code algorithm}, {@code protocol} and
 * {@code max_channels} are NCCL_ALGO / NCCL_PROTO / NCCL_MAX_NCHANNELS values or {@code auto};
 * a row with all three {@code auto} measured NCCL's own pick. The time is {@code median_us}
 * (microseconds); each row is one replicate; {@code p95_us}, when present, is kept as the
 * measurement's P95. Rows are single calls, so rules get numPipeOps 1.
 *
 * <p><b>optimize_config.py format</b> (NCCL plugins/tuner/example/scripts/optimize_config.py):
 * {@code collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,
 * cost_metric,bandwidth_gbps,latency_us}. The time is {@code latency_us}, the metric that script
 * minimises by default; {@code channels}, {@code pipeOps} and {@code regBuff} use -1 for "any".
 * An {@code algorithm} of {@code auto} marks NCCL's own pick (the script has no such rows; it
 * never compares against NCCL's default). Rows with {@code regBuff} 1 are skipped with a warning:
 * a v3 tuner is not told whether a buffer is registered.
 *
 * <p>Columns are found by name, in any order; extra named columns are ignored. Lines starting with
 * {@code #} and blank lines are skipped. Quoted fields are not supported (neither format uses
 * them). A row with fewer or more fields than the header, a field that is not a number (busbw_gbps
 * included, though unused) or an unknown name is mangled: skipped with a warning naming file and
 * line, unless strict (compile --strict), which refuses the file there. Numbers are ASCII digits
 * only ({@link AsciiNumbers}: a size {@code ٦٤} is no number). A row with a {@code wrong} count
 * above 0 is refused (file:line recorded, never used). A file with its header and no rows is
 * refused, naming it.
 */
public final class MeasurementCsv {
    private static final List<String> SWEEP =
            List.of("collective", "size_bytes", "algorithm", "protocol", "max_channels", "ranks", "nodes", "median_us");
    private static final List<String> OPTIMIZE = List.of(
            "collective", "size_bytes", "algorithm", "protocol", "channels", "nodes", "ranks", "pipeOps", "latency_us");

    private MeasurementCsv() {}

    /**
     * Whether a file looks like one of the two CSV formats (its first non-comment line names
     * {@code size_bytes}).
     *
     * @param file a file
     * @return true for a measurement CSV
     * @throws IOException if the file cannot be read
     */
    public static boolean looksLike(Path file) throws IOException {
        try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .findFirst()
                    .map(l -> List.of(l.split("\\s*,\\s*")).contains("size_bytes"))
                    .orElse(false);
        }
    }

    /**
     * Parses a measurement CSV.
     *
     * @param file the CSV
     * @param into receives measurements, refused rows and warnings
     * @throws IOException if the file cannot be read
     * @throws InputException on a missing column, a short row, an unknown name or a bad number
     *     (naming file and line)
     */
    public static void parse(Path file, MeasurementSet into) throws IOException, InputException {
        parse(file, into, true);
    }

    /**
     * Parses a measurement CSV; unless {@code strict}, a mangled row (wrong number of fields, a
     * field that is not a number, an unknown name) is skipped with a warning naming file:line and
     * counted refused, and its size, where it can be read, is a hole no rule reaches over. A file
     * whose every row is mangled is refused at its first.
     *
     * @param file the CSV
     * @param into receives measurements, refused rows and warnings
     * @param strict refuse the file at its first mangled row
     * @throws IOException if the file cannot be read
     * @throws InputException on a bad header, a header with no rows (naming the file), or a mangled
     *     row when strict (naming file and line)
     */
    public static void parse(Path file, MeasurementSet into, boolean strict) throws IOException, InputException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, Integer> col = null;
        int headerFields = 0;
        boolean sweep = false;
        int regBuffSkipped = 0;
        int rows = 0;
        int dataLines = 0;
        int headerLine = 0;
        InputException firstMangled = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            String where = InputException.at(file, i + 1);
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = split(where, line);
            if (col == null) {
                col = new HashMap<>();
                headerFields = f.length;
                headerLine = i + 1;
                for (int c = 0; c < f.length; c++) {
                    col.put(f[c], c);
                }
                if (col.keySet().containsAll(SWEEP)) {
                    sweep = true;
                } else if (!col.keySet().containsAll(OPTIMIZE)) {
                    throw new InputException(
                            where,
                            "header names neither the sweep columns " + SWEEP + " nor optimize_config.py's "
                                    + OPTIMIZE);
                }
                continue;
            }
            dataLines++;
            try {
                if (row(where, f, col, headerFields, sweep, into)) {
                    rows++;
                } else if (!sweep
                        && col.containsKey("regBuff")
                        && f.length == headerFields
                        && f[col.get("regBuff")].equals("1")) {
                    regBuffSkipped++;
                }
            } catch (InputException e) {
                if (strict) {
                    throw e;
                }
                String prefix = where + ": ";
                String why =
                        e.getMessage().startsWith(prefix) ? e.getMessage().substring(prefix.length()) : e.getMessage();
                if (firstMangled == null) {
                    firstMangled = e;
                }
                // one entry, among the refused rows (compile lists them and counts them once)
                into.refuseMangled(where, why);
                hole(f, col, headerFields, into);
            }
        }
        if (col == null) {
            throw new InputException(file.toString(), "empty CSV (no header line)");
        }
        if (dataLines == 0) {
            throw new InputException(file.toString(), headerOnly(headerLine));
        }
        if (regBuffSkipped > 0) {
            into.warn(
                    file.toString(),
                    TextReport.count(regBuffSkipped, "row") + " with regBuff 1 skipped: a v3 tuner is not told whether "
                            + "the user buffer is registered");
        }
        if (rows == 0 && firstMangled != null) {
            throw firstMangled; // every row mangled: nothing to skip to
        }
        if (rows == 0) {
            into.warn(file.toString(), "no usable rows");
        }
    }

    /**
     * The refusal of a CSV with its header and no rows, as an interrupted sweep leaves it.
     *
     * @param headerLine the header's line, from 1
     * @return {@code the header (line 1) and no rows: ...}
     */
    static String headerOnly(int headerLine) {
        return "the header (line " + headerLine + ") and no rows: no measurements in this file (an interrupted "
                + "sweep or a cut copy leaves this; measure again or give the complete file)";
    }

    /** One data row: true when it adds a measurement, false when it is skipped (warned or counted by the caller). */
    private static boolean row(
            String where, String[] f, Map<String, Integer> col, int headerFields, boolean sweep, MeasurementSet into)
            throws InputException {
        if (f.length < headerFields) {
            throw new InputException(
                    where,
                    "row has " + TextReport.count(f.length, "field") + ", the header has " + headerFields
                            + "; the row looks truncated");
        }
        if (f.length > headerFields) {
            throw new InputException(
                    where,
                    "row has " + TextReport.count(f.length, "field") + ", the header has " + headerFields
                            + "; a stray comma, or a value the header does not name");
        }
        Row r = new Row(where, f, col);
        Collective coll = Collective.parse(r.get("collective"));
        if (coll == null) {
            throw new InputException(
                    where,
                    "unknown collective '" + r.get("collective")
                            + "'; use Broadcast, Reduce, AllGather, ReduceScatter or AllReduce");
        }
        long size = r.longValue("size_bytes", 0, Long.MAX_VALUE);
        String as = r.get("algorithm");
        String ps = r.get("protocol");
        Algorithm alg = null;
        if (!isAuto(as)) {
            alg = Algorithm.parse(as);
            if (alg == null) {
                throw new InputException(
                        where,
                        "unknown algorithm '" + as
                                + "'; use TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT or auto");
            }
        }
        Protocol proto = null;
        if (!isAuto(ps)) {
            proto = Protocol.parse(ps);
            if (proto == null) {
                throw new InputException(where, "unknown protocol '" + ps + "'; use LL, LL128, SIMPLE or auto");
            }
        }
        String chs = r.get(sweep ? "max_channels" : "channels");
        int channels = isAuto(chs) || chs.equals("-1")
                ? 0
                : (int) r.longValue(sweep ? "max_channels" : "channels", 1, PolicyLoader.MAX_CHANNELS);
        int nRanks = (int) r.longValue("ranks", 1, Integer.MAX_VALUE);
        int nNodes = (int) r.longValue("nodes", 1, Integer.MAX_VALUE);
        double time = r.time(sweep ? "median_us" : "latency_us", size);
        for (String bw : List.of("busbw_gbps", "algbw_gbps", "bandwidth_gbps")) { // not used, but not taken unread
            if (col.containsKey(bw) && !r.get(bw).isEmpty()) {
                r.doubleValue(bw);
            }
        }
        Range pipe = Range.exactly(1);
        if (!sweep) {
            long p = r.longValue("pipeOps", -1, Integer.MAX_VALUE);
            pipe = p == -1 ? Range.ANY : Range.exactly(p);
            if (col.containsKey("regBuff") && r.longValue("regBuff", -1, 1) == 1) {
                return false; // counted by the caller
            }
        }
        if (col.containsKey("wrong")) {
            double wrong = r.doubleValue("wrong");
            if (wrong > 0) {
                into.refuse(where, "wrong = " + r.get("wrong") + ": results were wrong; row never used");
                return false;
            }
        }
        if (size == 0) {
            return false;
        }
        RunConfig cfg = new RunConfig(alg, proto, channels);
        if (!cfg.isAuto() && !cfg.isCandidate()) {
            into.warn(
                    where,
                    cfg.label() + " forces only part of the configuration; a policy candidate needs both "
                            + "algorithm and protocol; row not used");
            return false;
        }
        into.add(new Measurement(where, coll, nRanks, nNodes, pipe, size, cfg, time, sweep ? p95(r, col) : Double.NaN));
        return true;
    }

    /** A mangled row's size, where collective, size and shape can still be read: a hole no rule reaches over. */
    private static void hole(String[] f, Map<String, Integer> col, int headerFields, MeasurementSet into) {
        if (f.length != headerFields) {
            return;
        }
        try {
            Collective c = Collective.parse(f[col.get("collective")]);
            long size = AsciiNumbers.parseLong(f[col.get("size_bytes")]);
            int nRanks = AsciiNumbers.parseInt(f[col.get("ranks")]);
            int nNodes = AsciiNumbers.parseInt(f[col.get("nodes")]);
            if (c != null && size > 0 && nRanks > 0 && nNodes > 0) {
                into.hole(c, nRanks, nNodes, col.containsKey("pipeOps") ? Range.ANY : Range.exactly(1), size);
            }
        } catch (NumberFormatException e) {
            // nothing to hold
        }
    }

    private static boolean isAuto(String s) {
        return s.equalsIgnoreCase("auto") || s.equalsIgnoreCase("default");
    }

    static String[] split(String where, String line) throws InputException {
        if (line.indexOf('"') >= 0) {
            throw new InputException(where, "quoted CSV fields are not supported; write plain comma-separated values");
        }
        String[] f = line.split(",", -1);
        for (int i = 0; i < f.length; i++) {
            f[i] = f[i].strip();
        }
        return f;
    }

    /**
     * The optional {@code p95_us} column: NaN when absent or empty; else a time as for median_us.
     * A P95 below the median is an error (it cannot be).
     */
    private static double p95(Row r, Map<String, Integer> col) throws InputException {
        Integer i = col.get("p95_us");
        if (i == null || r.f()[i].isEmpty()) {
            return Double.NaN;
        }
        double v = r.time("p95_us", 1);
        double med = r.time("median_us", 1);
        if (v < med) {
            throw new InputException(
                    r.where(), "p95_us " + r.get("p95_us") + " is below median_us " + r.get("median_us"));
        }
        return v;
    }

    private record Row(String where, String[] f, Map<String, Integer> col) {
        String get(String name) {
            return f[col.get(name)];
        }

        long longValue(String name, long min, long max) throws InputException {
            String s = get(name);
            try {
                long v = AsciiNumbers.parseLong(s);
                if (v >= min && v <= max) {
                    return v;
                }
            } catch (NumberFormatException e) {
                throw new InputException(where, name + " '" + s + "' is not a whole number" + AsciiNumbers.hint(s));
            }
            throw new InputException(where, name + " " + s + " is outside " + min + ".." + max);
        }

        /** A time in microseconds: finite and above 0 (rows of 0 bytes are skipped, so any time will do there). */
        double time(String name, long size) throws InputException {
            String s = get(name);
            try {
                double v = Double.parseDouble(s);
                if (Double.isFinite(v) && (v > 0 || (size == 0 && v >= 0))) {
                    return v;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new InputException(
                    where,
                    name + " '" + s + "' is not a time: times must be finite numbers > 0 us" + AsciiNumbers.hint(s));
        }

        double doubleValue(String name) throws InputException {
            String s = get(name);
            try {
                double v = Double.parseDouble(s);
                if (Double.isFinite(v) && v >= 0) {
                    return v;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new InputException(
                    where,
                    name + " '" + s + "' is not a non-negative number"
                            + (name.endsWith("_us") ? " of microseconds" : "")
                            + AsciiNumbers.hint(s));
        }
    }
}

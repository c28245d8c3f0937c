package io.nccltuner.compile;

import io.nccltuner.model.BusBandwidth;
import io.nccltuner.model.NodeCount;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.AsciiNumbers;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the text output of nccl-tests' all_reduce_perf, all_gather_perf, reduce_scatter_perf,
 * broadcast_perf and reduce_perf (any version since 2019) into {@link Measurement}s.
 *
 * <p>A file may hold several runs (one after another, as when a script appends them); each run
 * starts at its header ({@code # nccl-tests version}, {@code # Collective test starting:} or
 * {@code # nThread ...}) and ends at its footer ({@code # Avg bus bandwidth}). Per run:
 *
 * <ul>
 *   <li>The collective comes from {@code # Collective test starting: all_reduce_perf} (2.18+),
 *       else the {@code --collective} option, else a {@code *_perf} program name anywhere in the
 *       run's lines (a command line), else the file name.
 *   <li>nRanks comes from the option, else NCCL's {@code comm ... nRanks N nNodes M} INFO line,
 *       else the number of {@code # Rank N ...} device lines; nNodes from the option, else the
 *       INFO line (with a warning where the device lines count otherwise), else the nodes NCCL
 *       counts from the device lines ({@link NodeCount}: each rank's NCCL_HOSTID where NCCL's ENV
 *       lines or a command line say it, else its host name).
 *   <li>The forced configuration comes from NCCL's INFO lines ({@code NCCL_ALGO / NCCL_PROTO /
 *       NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS / NCCL_MIN_CTAS / NCCL_MAX_CTAS set by environment
 *       to ...}), else from the options; a run with neither measured NCCL's own pick. TUNING
 *       selection lines, when present, tell what NCCL actually ran at each size; they complete a
 *       partial forcing (only NCCL_PROTO set) and name NCCL's pick in unforced runs.
 *   <li>The size table layout is read from its column header line: with or without the
 *       {@code redop} and {@code root} columns, {@code time} or {@code cputime}, per-iteration
 *       columns ({@code i_min ... i_cv%}, 2.19+), a trailing timestamp, and the result check as
 *       {@code #wrong} (a count, or {@code N/A} without validation; 2.13+) or {@code error} (the
 *       largest deviation; before 2.13).
 * </ul>
 *
 * <p>A row whose check failed is refused (recorded with file:line, never used): {@code #wrong}
 * above 0, or an {@code error} above what nccl-tests itself counted as a failure before 2.13
 * ({@code DeltaMaxValue(type) * (nRanks - 1)}: 1e-2 for half and bfloat16, 1e-5 for float,
 * 1e-12 for double, any deviation for integers; nccl-tests src/common.cu at 51af557^). A row
 * with the wrong number of fields or a field that is not a number (a cut excerpt, an interrupted
 * print) is skipped with a warning naming the file and line and counted refused; with {@link
 * Options#strict} it refuses the file. A row with an NCCL line glued to it keeps its part before
 * that line (it is not read as an NCCL line), and where the next line is a whole row instead of the
 * rest of it, it is such a mangled row. A line that looks like a row where no table is open (before
 * the column header, after the footer) is not read, with a warning naming its line.
 */
public final class NcclTestsLog {
    /** Which half of each row to use: nccl-tests times each size out-of-place and in-place. */
    public enum Placement {
        /** the out-of-place columns (the default: NCCL's tuner does not know about in-place) */
        OUT_OF_PLACE,
        /** the in-place columns */
        IN_PLACE,
        /** both, as two replicates */
        BOTH
    }

    /**
     * What to assume where a log does not say. Fields left null or 0 are not assumed.
     *
     * @param collective the collective, when the log names none
     * @param algorithm forced algorithm (NCCL_ALGO) for runs whose log has no INFO line about it
     * @param protocol forced protocol (NCCL_PROTO), likewise
     * @param channels forced channel count (NCCL_MAX_NCHANNELS), likewise; 0 = not forced
     * @param nRanks ranks, overriding the device lines; 0 = from the log
     * @param nNodes nodes, overriding the device lines; 0 = from the log
     * @param placement which columns to use
     * @param poolRuns pool size tables without run headers of their own (pasted tables) that
     *     measure the same collective and shape as replicates, instead of refusing them
     * @param strict refuse the file at a mangled row (wrong number of fields, a field that is not a
     *     number) instead of skipping the row with a warning and counting it refused
     */
    public record Options(
            Collective collective,
            Algorithm algorithm,
            Protocol protocol,
            int channels,
            int nRanks,
            int nNodes,
            Placement placement,
            boolean poolRuns,
            boolean strict) {
        /** Nothing assumed; out-of-place columns. */
        public static final Options NONE = new Options(null, null, null, 0, 0, 0, Placement.OUT_OF_PLACE);

        /** The same, not strict: a mangled row is skipped with a warning. */
        public Options(
                Collective collective,
                Algorithm algorithm,
                Protocol protocol,
                int channels,
                int nRanks,
                int nNodes,
                Placement placement,
                boolean poolRuns) {
            this(collective, algorithm, protocol, channels, nRanks, nNodes, placement, poolRuns, false);
        }

        /** The same, with {@code poolRuns} false: header-less tables of one shape are an error. */
        public Options(
                Collective collective,
                Algorithm algorithm,
                Protocol protocol,
                int channels,
                int nRanks,
                int nNodes,
                Placement placement) {
            this(collective, algorithm, protocol, channels, nRanks, nNodes, placement, false, false);
        }
    }

    private static final Pattern PROGRAM = Pattern.compile(
            "\\b(all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|alltoallv|sendrecv|gather|scatter|hypercube)_perf");
    private static final Pattern AGG = Pattern.compile("agg iters:\\s*(\\d+)");
    /**
     * The tuner plugin's line at destroy in force mode when the forced candidate applied to none of
     * the calls (io.nccltuner.engine.Engine#forcedNone): NCCL's own pick ran, not the candidate.
     */
    private static final Pattern FORCED_NONE =
            Pattern.compile("NCCL INFO TUNER/Java: force (\\S+) applied to none of the \\d+ calls");
    /** The end of NCCL's comm INIT line on a multi-node NVLink system, {@code ... localRank 0 MNNVL 1} (2.20+). */
    private static final Pattern MNNVL = Pattern.compile("\\bMNNVL [1-9]");
    /** NCCL's INFO line {@code NCCL version 2.28.9+cuda13.0}. */
    private static final Pattern NCCL_VERSION = Pattern.compile("NCCL INFO NCCL version (\\d+\\.\\d+\\.\\d+)");
    /** nccl-tests' header {@code nccl-library=22809} (NCCL_VERSION_CODE, 2.9 and later). */
    private static final Pattern LIBRARY = Pattern.compile("nccl-library=(\\d{5})\\b");

    private static final Set<String> CHANNEL_ENV =
            Set.of("NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS");

    private final Path file;
    private final Options options;
    private final MeasurementSet into;

    private NcclTestsLog(Path file, Options options, MeasurementSet into) {
        this.file = file;
        this.options = options;
        this.into = into;
    }

    /**
     * Parses one nccl-tests output file.
     *
     * @param file the text output (stdout, optionally with NCCL_DEBUG=INFO lines mixed in)
     * @param options what to assume where the log does not say
     * @param into receives measurements, NCCL's selections from unforced runs, refused rows and
     *     warnings
     * @throws IOException if the file cannot be read
     * @throws InputException on a truncated row, a field that is not a number, a run whose
     *     collective, nRanks or nNodes cannot be told, or options that contradict the log
     */
    public static void parse(Path file, Options options, MeasurementSet into) throws IOException, InputException {
        new NcclTestsLog(file, options, into).run();
    }

    private String at(int line) {
        return InputException.at(file, line);
    }

    /** @return the place of several tables of this file, {@code FILE:22,78,134} */
    private String at(List<Integer> lines) {
        return file + ":" + lines.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(","));
    }

    /** {@code srun -l}: {@code 0: } or right-aligned {@code   12: } before every line. */
    private static final Pattern SRUN_PREFIX = io.nccltuner.model.LauncherPrefix.SRUN;
    /**
     * Ray's prefix of a worker's output: {@code (RayTrainWorker pid=3808)}, {@code (head, rank=0,
     * pid=3808, ip=10.0.0.1)}; an mpirun or srun prefix may follow it.
     */
    private static final Pattern RAY_PREFIX = io.nccltuner.model.LauncherPrefix.RAY;
    /** nccl-tests' own lines, wherever they start: to tell a prefix this parser does not strip. */
    private static final Pattern TESTS_LINE =
            Pattern.compile("#\\s*(?:nccl-tests version|nThread \\d|\\s*size\\s+count\\s)");
    /** {@code mpirun --tag-output} (Open MPI): {@code [1,0]<stdout>:} before every line. */
    private static final Pattern MPIRUN_PREFIX = io.nccltuner.model.LauncherPrefix.MPIRUN;
    /**
     * Where an NCCL line starts: {@code host:pid:tid [dev] NCCL INFO ...} (src/debug.cc), optionally
     * after a {@code [timestamp]} (2.29+ WARN lines) and with a {@code file:line} before {@code NCCL
     * WARN}.
     */
    private static final Pattern NCCL_AT_START =
            Pattern.compile("^(?:\\[[^\\]]*\\]\\s*)?([^\\s:\\[]+:\\d+:)\\d+ \\[\\d+\\] (?:\\S+ )?NCCL (?:INFO|WARN)");
    /** An NCCL line glued to the end of a partial nccl-tests row, when the host names are not known. */
    private static final Pattern NCCL_GLUED =
            Pattern.compile("(?<=[\\d.A])([A-Za-z][\\w.-]*:\\d+:)\\d+ \\[\\d+\\] (?:\\S+ )?NCCL (?:INFO|WARN)");
    /** The setting a command line, {@code set -x} echo or environment dump shows. */
    private static final Pattern ECHOED_ENV = Pattern.compile(
            "\\b(NCCL_ALGO|NCCL_PROTO|NCCL_MIN_NCHANNELS|NCCL_MAX_NCHANNELS|NCCL_MIN_CTAS|NCCL_MAX_CTAS)="
                    + "(\"[^\"]*\"|'[^']*'|[^\\s)\"']*)");
    /** A collective named in a file name or path on a line (superbench's {@code nccl_allreduce.log}). */
    private static final Pattern NAMED = Pattern.compile(
            "(?i)(?<![a-z])(all[_-]?reduce|all[_-]?gather|reduce[_-]?scatter|broadcast|reduce|all[_-]?to[_-]?allv?"
                    + "|send[_-]?recv|gather|scatter)(?![a-z])");

    /** A line with its launcher prefix removed and split where an NCCL line was glued onto a row. */
    private record Split(String text, String nccl, boolean warnNext) {}

    private List<Split> split(List<String> lines) {
        List<String> plain = new ArrayList<>(lines.size());
        int prefixed = 0;
        int unknownPrefix = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            boolean was = false;
            Matcher ray = RAY_PREFIX.matcher(line);
            if (ray.find()) {
                line = line.substring(ray.end());
                was = true;
                launcherKinds[2] = true;
            }
            Matcher m = MPIRUN_PREFIX.matcher(line);
            if (!m.find()) {
                m = SRUN_PREFIX.matcher(line);
                if (!m.find()) {
                    m = null;
                }
            }
            if (m != null) {
                was = true;
                launcherKinds[m.pattern() == SRUN_PREFIX ? 0 : 1] = true;
                line = line.substring(m.end());
            }
            if (was) {
                prefixed++;
            }
            Matcher t = TESTS_LINE.matcher(line);
            if (t.find() && t.start() > 0 && !line.substring(0, t.start()).isBlank()) {
                if (unknownPrefix++ == 0) {
                    into.warn(
                            at(i + 1),
                            "nccl-tests output behind a prefix this parser does not know ('"
                                    + line.substring(0, t.start()).strip()
                                    + "'): such lines are not read; strip the prefix "
                                    + "(sed 's/^.*\\(# \\)/\\1/') or report its format");
                }
            }
            plain.add(line);
        }
        this.launcherPrefixed = prefixed;
        // host:pid: of the NCCL lines that start a line: where a glued one starts
        Set<String> procs = new HashSet<>();
        for (String line : plain) {
            Matcher m = NCCL_AT_START.matcher(line);
            if (m.find()) {
                procs.add(m.group(1));
            }
        }
        List<Split> out = new ArrayList<>(plain.size());
        for (int i = 0; i < plain.size(); i++) {
            String line = plain.get(i);
            String text = line;
            String nccl = null;
            if (line.contains("NCCL INFO") || line.contains("NCCL WARN")) {
                if (NCCL_AT_START.matcher(line).find()) {
                    text = "";
                    nccl = line;
                } else {
                    int at = -1;
                    for (String p : procs) {
                        int k = line.indexOf(p);
                        if (k > 0 && (at < 0 || k < at)) {
                            at = k;
                        }
                    }
                    if (at < 0) {
                        Matcher g = NCCL_GLUED.matcher(line);
                        if (g.find()) {
                            at = g.start();
                        }
                    }
                    if (at < 0 && startsWithSize(line)) {
                        at = rowGlue(line); // a row with an NCCL line glued after a space: keep the row
                    }
                    if (at > 0) {
                        text = line.substring(0, at);
                        nccl = line.substring(at);
                    } else if (!line.strip().startsWith("#")) {
                        text = "";
                        nccl = line;
                    }
                }
            }
            boolean warnNext = false;
            for (int j = i + 1; j < plain.size(); j++) {
                String n = plain.get(j);
                if (!n.isBlank()) {
                    warnNext =
                            n.contains("NCCL WARN") && NCCL_AT_START.matcher(n).find();
                    break;
                }
            }
            out.add(new Split(text, nccl, warnNext));
        }
        return out;
    }

    /** An NCCL line's prefix anywhere in a line ({@code host:pid:tid [dev] NCCL INFO}), after a space or not. */
    private static final Pattern NCCL_ANYWHERE =
            Pattern.compile("([^\\s:\\[]+:\\d+:)\\d+ \\[-?\\d+\\] (?:\\S+ )?NCCL (?:INFO|WARN)");

    /**
     * What starts a size-table row: its size column, or what stands there in a mangled row (a sign, or
     * digits of another script, {@code -1048576} or {@code ١٠٤٨٥٧٦}), so that such a row is read and
     * refused as mangled ({@link #parseRow}) rather than passed over as another line.
     */
    private static final Pattern ROW_START = Pattern.compile("^[+-]?\\p{Nd}");

    /**
     * @param line a line
     * @return whether it starts as a size-table row starts, with its size column ({@link #ROW_START})
     */
    static boolean startsWithSize(String line) {
        return ROW_START.matcher(line.strip()).find();
    }

    /**
     * Where the NCCL line glued onto a row starts when neither a known process nor a digit before it
     * tells ({@code ...   33.91 host:123:456 [0] NCCL INFO ...}): at its {@code host:pid:tid} prefix,
     * else at the {@code NCCL INFO}/{@code NCCL WARN} itself, so that the row's part is kept (and
     * refused as mangled when its fields do not fit) instead of being read as an NCCL line.
     *
     * @param line a line starting with a size column and holding {@code NCCL INFO} or {@code NCCL WARN}
     * @return the index where the NCCL part starts, above 0
     */
    private static int rowGlue(String line) {
        Matcher m = NCCL_ANYWHERE.matcher(line);
        if (m.find() && m.start() > 0) {
            return m.start();
        }
        int info = line.indexOf("NCCL INFO");
        int warn = line.indexOf("NCCL WARN");
        int at = info < 0 ? warn : warn < 0 ? info : Math.min(info, warn);
        return Math.max(at, 1);
    }

    /**
     * Whether a line that stands outside any size table looks like one of its rows: a size, a count,
     * a type name and at least three more fields, the rest numbers or {@code N/A} ({@code 1048576
     * 262144 float sum -1 34.12 ...}).
     *
     * @param t the line, stripped
     * @return true for such a line
     */
    static boolean looksLikeRow(String t) {
        String[] tok = t.split("\\s+");
        if (tok.length < 6
                || !tok[0].matches("\\d+")
                || !tok[1].matches("\\d+")
                || !tok[2].matches("[a-z][a-z0-9_]*")) {
            return false;
        }
        int numbers = 0;
        for (int i = 3; i < tok.length; i++) {
            if (tok[i].matches("-?[0-9.eE+-]+|N/A")) {
                numbers++;
            }
        }
        return numbers >= 3;
    }

    private int launcherPrefixed;
    /** Which launcher prefixes the file's lines carry: srun -l, mpirun --tag-output, Ray (as {@link #LAUNCHERS}). */
    private final boolean[] launcherKinds = new boolean[3];
    /** The launcher prefixes {@link #split} removes, each with an example, in {@link #launcherKinds}' order. */
    private static final String[] LAUNCHERS = {
        "srun -l '0: '", "mpirun --tag-output '[1,0]<stdout>:'", "Ray '(head, rank=0, pid=3808)'"
    };
    /** The first mangled row's error: thrown when the file gives nothing else. */
    private InputException firstMangled;

    private void run() throws IOException, InputException {
        int measuredBefore = into.measurements().size();
        List<Segment> segments = segments(split(Files.readAllLines(file, StandardCharsets.UTF_8)));
        if (launcherPrefixed > 0) {
            into.warn(
                    file.toString(),
                    TextReport.count(launcherPrefixed, "line") + (launcherPrefixed == 1 ? " carries" : " carry")
                            + " a launcher prefix ("
                            + java.util.stream.IntStream.range(0, LAUNCHERS.length)
                                    .filter(k -> launcherKinds[k])
                                    .mapToObj(k -> LAUNCHERS[k])
                                    .collect(java.util.stream.Collectors.joining(", "))
                            + "); read without it");
        }
        resolveAll(segments, measuredBefore);
    }

    /** A line that starts a run: {@code # nccl-tests version}, {@code # Collective test starting}, {@code # nThread}. */
    private static boolean isRunHeader(String t) {
        return t.startsWith("# nccl-tests version")
                || t.startsWith("# Collective test starting")
                || t.startsWith("# nThread");
    }

    /** A line that may follow a size table within its run: a bare {@code #} or one of nccl-tests' closing lines. */
    private static boolean isFooter(String t) {
        return t.equals("#")
                || t.startsWith("# Collective test concluded")
                || t.startsWith("# Out of bounds")
                || t.startsWith("# Avg bus bandwidth");
    }

    /** Cuts the lines into runs, each with at most one size table; the first may be empty. */
    private List<Segment> segments(List<Split> split) throws InputException {
        List<Segment> segments = new ArrayList<>();
        Segment cur = new Segment();
        segments.add(cur);
        for (int i = 0; i < split.size(); i++) {
            int ln = i + 1;
            Split sp = split.get(i);
            String t = sp.text().strip();
            if (cur.endsBefore(t)) {
                cur.finishRow(ln);
                cur = new Segment();
                segments.add(cur);
            }
            if (isRunHeader(t)) {
                cur.runHeader = true;
            }
            cur.read(ln, sp);
        }
        cur.finishRow(-1);
        return segments;
    }

    /**
     * Resolves each run's table into measurements, then refuses a file none of whose tables gives any
     * (naming why), and warns about skipped runs and runs nothing says were forced.
     *
     * @param measuredBefore how many measurements {@link #into} held before this file
     */
    private void resolveAll(List<Segment> segments, int measuredBefore) throws InputException {
        int used = 0;
        int tables = 0;
        List<String> skipped = new ArrayList<>();
        List<Unforced> unknown = new ArrayList<>();
        for (Segment s : segments) {
            if (!s.rows.isEmpty()) {
                tables++;
                int before = into.measurements().size();
                Unforced u;
                try {
                    u = resolve(s, skipped);
                } catch (InputException e) { // said with the file's other problems
                    problem(e);
                    continue;
                }
                if (u != null) {
                    unknown.add(u);
                }
                if (into.measurements().size() > before) {
                    used++;
                }
            } else if (s.layout != null) {
                into.warn(at(s.layoutLine), "size table without rows");
            }
        }
        int stray = 0;
        int strayFirst = 0;
        for (Segment s : segments) {
            stray += s.strayRows;
            strayFirst = strayFirst == 0 ? s.strayFirst : strayFirst;
        }
        if (tables == 0) {
            throw new InputException(
                    file.toString(),
                    NO_TABLE + " (a '#  size  count  type ...' header followed by rows)"
                            + (stray > 0
                                    ? "; " + strayText(stray, strayFirst) + ": paste the table's column header line "
                                            + "above them"
                                    : "; is this nccl-tests output?"));
        }
        if (stray > 0) {
            into.warn(at(strayFirst), strayText(stray, strayFirst) + ": not read");
        }
        if (!options.poolRuns()) {
            unpooledTables(unknown);
        }
        if (!problems.isEmpty()) {
            throw refusal();
        }
        warnPerTableAll();
        if (used == 0 && !skipped.isEmpty() && skipped.size() == tables) {
            throw new InputException(
                    skipped.getFirst().substring(0, skipped.getFirst().indexOf(": ")),
                    skipped.getFirst()
                                    .substring(skipped.getFirst().indexOf(": ") + 2)
                                    .replace("; run skipped", "")
                            + (tables == 2
                                    ? " (and the file's other run likewise)"
                                    : tables > 2 ? " (and the file's other " + (tables - 1) + " runs likewise)" : "")
                            + ": nothing in this file can become a rule");
        }
        if (firstMangled != null && into.measurements().size() == measuredBefore) {
            throw firstMangled; // every row mangled (or the rest refused): nothing to skip to
        }
        for (String w : skipped) {
            int k = w.indexOf(": ");
            into.warn(w.substring(0, k), w.substring(k + 2));
        }
        warnUnknownForcing(unknown);
    }

    /** The start of the error for a file without a size table. */
    public static final String NO_TABLE = "no nccl-tests size table found";

    /** @return {@code 3 lines (from line 12) look like size-table rows but stand where no table is open ...} */
    private static String strayText(int n, int first) {
        return (n == 1 ? "1 line looks" : n + " lines (from line " + first + ") look")
                + " like a size-table row (size, count, type, ...) but stand"
                + (n == 1 ? "s" : "")
                + " where no table is open (before a '#  size  count  type ...' column header, or after the "
                + "table's '# Out of bounds' / '# Avg bus bandwidth' footer)";
    }

    private static boolean isContinuation(String t) {
        char c = t.charAt(0);
        return Character.isDigit(c) || c == '-' || c == '.' || t.startsWith("N/A");
    }

    /** A row's text as printed, possibly in parts split by NCCL lines; parsed once its run is known. */
    private static final class RawRow {
        final int line;
        final Layout layout;
        final List<String> tokens = new ArrayList<>();
        final List<Integer> parts = new ArrayList<>();
        int interruptedAt;
        /** whether the line that interrupts it is a row of its own (the rest of this one never came) */
        boolean cutByRow;

        RawRow(int line, Layout layout) {
            this.line = line;
            this.layout = layout;
        }

        void add(int ln, String t) {
            parts.add(ln);
            for (String x : t.strip().split("\\s+")) {
                tokens.add(x);
            }
        }

        /** @param lineEnds whether the row's last part ended its line (nothing glued after it) */
        boolean complete(boolean lineEnds) {
            int n = tokens.size();
            int full = layout.nCols();
            if (layout.timestamp()) {
                return n >= full + 2 || (lineEnds && n >= full) || lineEnds;
            }
            return n >= full || lineEnds;
        }

        String joined() {
            return String.join(" ", tokens);
        }

        /**
         * @param t a line that would continue this row
         * @return whether the row would then have more fields than any row of its table: the line is a
         *     row of its own, and this one was cut short (by an NCCL line glued to it)
         */
        boolean overflowsWith(String t) {
            int max = layout.nCols() + (layout.timestamp() ? 2 : 0);
            return tokens.size() + t.strip().split("\\s+").length > max;
        }
    }

    /**
     * A run counted as NCCL's own pick only because nothing says it was forced.
     *
     * @param collective null where the file does not tell it (then {@code nRanks} is 0 too)
     * @param nNodes 0 where the file does not tell it
     */
    private record Unforced(
            int line, Collective collective, int nRanks, int nNodes, boolean runHeader, List<Row> rows) {}

    /**
     * The same collective and shape: one group for the pooling of header-less tables (an untold
     * collective, nRanks or nNodes, null or 0, groups with the other untold ones: one {@code
     * --collective} or {@code --nodes} gives them one).
     */
    private static Map<List<Object>, List<Unforced>> byShape(List<Unforced> unknown) {
        Map<List<Object>, List<Unforced>> byShape = new LinkedHashMap<>();
        for (Unforced u : unknown) {
            byShape.computeIfAbsent(
                            java.util.Arrays.asList(u.collective(), u.nRanks(), u.nNodes()), k -> new ArrayList<>())
                    .add(u);
        }
        return byShape;
    }

    /**
     * Tables pasted without their run headers that measure one collective and shape with nothing
     * forced: other machines or settings, not replicates, unless {@code --pool-runs} says so; each
     * such group is a problem of the file, its advice {@code split the file} alone where their times
     * at the sizes both measure disagree (a median coefficient of variation above {@link
     * Compiler#MAX_POOLED_CV}, as compile refuses tables pooled by {@code --pool-runs}). Tables whose
     * nNodes is untold (0) group with each other: one {@code --nodes N} gives them one shape.
     */
    private void unpooledTables(List<Unforced> unknown) {
        for (List<Unforced> same : byShape(unknown).values()) {
            if (same.size() > 1 && same.stream().anyMatch(u -> !u.runHeader())) {
                Unforced second = same.get(1);
                double[] cv = timesCv(same);
                boolean disagree = cv[1] > 0 && cv[0] > Compiler.MAX_POOLED_CV;
                problems.add(new Problem(
                        second.line(),
                        "this size table and the one at line "
                                + same.getFirst().line()
                                + " both measure "
                                + (second.collective() == null
                                        ? "a collective the file does not tell (untold for both: one --collective NAME gives them one)"
                                        : second.collective() + " at nRanks " + second.nRanks())
                                + (second.collective() == null
                                        ? ""
                                        : second.nNodes() > 0
                                                ? ", nNodes " + second.nNodes()
                                                : " (nNodes untold for both: one --nodes N gives them one shape)")
                                + " with nothing forced, and at least one has no run header of its own "
                                + "('# nThread ...'): separate tables are separate runs (other machines or settings?), not "
                                + "replicates"
                                + (disagree
                                        ? String.format(
                                                java.util.Locale.ROOT,
                                                "; their times disagree (a median coefficient of variation of %.1f%% "
                                                        + "over the %s both measure, above %.0f%%)",
                                                100 * cv[0],
                                                TextReport.count((int) cv[1], "size"),
                                                100 * Compiler.MAX_POOLED_CV)
                                        : ""),
                        disagree
                                ? "split the file before line " + second.line() + ", one file per size table "
                                        + "(--pool-runs would pool them as replicates, but their times disagree)"
                                : "split the file, or pass --pool-runs to pool them as replicates",
                        disagree));
            }
        }
    }

    /**
     * @return {the median, over the sizes two or more of the tables measure, of the coefficient of
     *     variation of their out-of-place times there; how many such sizes}
     */
    private static double[] timesCv(List<Unforced> tables) {
        Map<Long, List<Double>> bySize = new LinkedHashMap<>();
        for (Unforced u : tables) {
            for (Row r : u.rows()) {
                bySize.computeIfAbsent(r.size(), k -> new ArrayList<>()).add(r.time()[0]);
            }
        }
        List<Double> cvs = bySize.values().stream()
                .filter(t -> t.size() > 1)
                .map(Compiler::cv)
                .toList();
        return new double[] {cvs.isEmpty() ? 0 : Compiler.median(cvs), cvs.size()};
    }

    /**
     * A problem of the file, said with its others once every table is read ({@link #refusal}).
     *
     * @param line the table's line
     * @param why what is wrong there, without the location
     * @param remedy what to do ({@code pass --nodes}), or null
     * @param splits whether the remedy cuts the file into parts ({@code split the file before line
     *     N}): the per-file options the other problems ask for ({@code pass --nodes}) are then each
     *     part's, said once as {@code pass --collective --nodes for each part}
     */
    private record Problem(int line, String why, String remedy, boolean splits) {
        Problem(int line, String why, String remedy) {
            this(line, why, remedy, false);
        }
    }

    /** A remedy that is one per-file option ({@code pass --nodes}): its option. */
    private static final Pattern PER_FILE_REMEDY = Pattern.compile("pass (--[a-z][a-z-]*)");

    /** The file's problems, in the order of its tables. */
    private final List<Problem> problems = new ArrayList<>();

    /** Records a table's refusal as a problem of the file: its advice ({@code ; pass --nodes}) apart. */
    private void problem(InputException e) {
        String m = e.getMessage();
        String prefix = file + ":";
        int colon = m.indexOf(": ", prefix.length());
        String where = m.startsWith(prefix) && colon > 0 ? m.substring(prefix.length(), colon) : "";
        if (!where.matches("\\d+")) { // not a line of this file: kept whole
            problems.add(new Problem(0, m, null));
            return;
        }
        String rest = m.substring(colon + 2);
        int pass = rest.lastIndexOf("; pass --");
        problems.add(new Problem(
                Integer.parseInt(where),
                pass < 0 ? rest : rest.substring(0, pass),
                pass < 0 ? null : rest.substring(pass + 2)));
    }

    /**
     * The file's refusal: one problem (or one said of several tables) as one line, {@code
     * FILE:5,11: why; what to do}; several as a line each ({@code FILE:LINE[,LINE]: why}), then
     * {@code FILE: 2 problems (each on its line above), nothing read from this file: } and every
     * problem's advice, split first; after a split, the per-file options the others ask for said once,
     * for each part ({@code split the file before line 25, ...; then pass --collective --nodes for each
     * part}).
     */
    private InputException refusal() {
        // one problem of several tables, the same words but for their numbers: one line, each number's range
        Map<List<String>, List<Problem>> folded = new LinkedHashMap<>();
        for (Problem p : problems) {
            folded.computeIfAbsent(
                            java.util.Arrays.asList(
                                    p.line() == 0
                                            ? p.why()
                                            : NUMBER.matcher(p.why()).replaceAll("#"),
                                    p.remedy()),
                            k -> new ArrayList<>())
                    .add(p);
        }
        List<String> lines = new ArrayList<>();
        java.util.Set<String> remedies = new java.util.LinkedHashSet<>();
        boolean splits = problems.stream().anyMatch(Problem::splits);
        java.util.Set<String> eachPart = new java.util.LinkedHashSet<>(); // per-file options, after a split
        folded.forEach((k, same) -> {
            String where = same.getFirst().line() == 0
                    ? ""
                    : at(same.stream().map(Problem::line).toList()) + ": ";
            lines.add(where + numberRanges(same) + (folded.size() == 1 && k.get(1) != null ? "; " + k.get(1) : ""));
            Matcher option = k.get(1) == null ? null : PER_FILE_REMEDY.matcher(k.get(1));
            if (splits && option != null && option.matches()) {
                eachPart.add(option.group(1));
            } else if (k.get(1) != null) {
                remedies.add(k.get(1));
            }
        });
        if (!eachPart.isEmpty()) {
            remedies.add("pass " + String.join(" ", eachPart) + " for each part");
        }
        if (folded.size() == 1) {
            List<Problem> one = folded.values().iterator().next();
            String text = lines.getFirst();
            return one.getFirst().line() == 0
                    ? new InputException(text)
                    : new InputException(
                            text.substring(0, text.indexOf(": ", file.toString().length())),
                            text.substring(text.indexOf(": ", file.toString().length()) + 2));
        }
        List<String> advice = new ArrayList<>(remedies);
        advice.sort(java.util.Comparator.comparing(r -> !r.startsWith("split")));
        lines.add(file + ": " + TextReport.count(folded.size(), "problem")
                + " (each on its line above), nothing read from this file"
                + (advice.isEmpty() ? "" : ": " + String.join("; then ", advice)));
        return new InputException(String.join("\n", lines));
    }

    /** A number in a problem's words: what may differ between the tables one problem is folded from. */
    private static final Pattern NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");

    /**
     * @param same problems whose words are one but for their numbers
     * @return the first's words, each number that differs between them written {@code low..high}
     *     (as its text, {@code 1.8743..1.8750})
     */
    private static String numberRanges(List<Problem> same) {
        List<List<String>> numbers = new ArrayList<>();
        for (Problem p : same) {
            numbers.add(
                    NUMBER.matcher(p.why()).results().map(MatchResult::group).toList());
        }
        Matcher m = NUMBER.matcher(same.getFirst().why());
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (m.find()) {
            final int at = i++;
            List<String> values = numbers.stream()
                    .map(n -> n.get(at))
                    .distinct()
                    .sorted(java.util.Comparator.comparingDouble(Double::parseDouble))
                    .toList();
            m.appendReplacement(
                    b,
                    Matcher.quoteReplacement(
                            values.size() == 1 ? values.getFirst() : values.getFirst() + ".." + values.getLast()));
        }
        m.appendTail(b);
        return b.toString();
    }

    private void warnUnknownForcing(List<Unforced> unknown) throws InputException {
        if (unknown.isEmpty()) {
            return;
        }
        Map<List<Object>, List<Unforced>> byShape = byShape(unknown);
        String lines = unknown.stream()
                .map(u -> Integer.toString(u.line()))
                .collect(java.util.stream.Collectors.joining(", "));
        into.warn(
                file.toString(),
                (unknown.size() == 1
                                ? "the run (table at line " + lines + ") names"
                                : unknown.size() + " runs (tables at lines " + lines + ") name")
                        + " " + UNFORCED_RUN + "; if NCCL_ALGO/NCCL_PROTO were set, say so with --in " + file
                        + " --algo X --proto Y");
        if (options.poolRuns()) { // header-less tables pooled on the user's word: the compiler checks they agree
            for (List<Unforced> g : byShape.values()) {
                if (g.size() > 1 && g.stream().anyMatch(u -> !u.runHeader())) {
                    into.pooledTables(
                            file.toString(), g.stream().map(Unforced::line).toList());
                }
            }
        }
        for (var e : byShape.entrySet()) {
            if (e.getValue().size() > 1) {
                into.warn(
                        file.toString(),
                        e.getValue().size() + " runs of " + e.getKey().get(0) + " at nRanks "
                                + e.getKey().get(1) + ", nNodes " + e.getKey().get(2) + " (tables at lines "
                                + e.getValue().stream()
                                        .map(u -> String.valueOf(u.line()))
                                        .collect(java.util.stream.Collectors.joining(", "))
                                + ") cannot be told apart: pooled as replicates of NCCL's own pick; if they were forced differently, "
                                + "split the file and pass each with --in FILE --algo X --proto Y");
            }
        }
    }

    // ---- table layout and rows ------------------------------------------------------------------

    /** Column positions of one size table, read from its header line. */
    record Layout(
            int nCols,
            boolean timestamp,
            int type,
            int[] time,
            int[] check,
            boolean errorColumn,
            String header,
            int algbw,
            int busbw) {}

    static Layout layout(String header) {
        String[] tok = header.substring(1).strip().split("\\s+");
        if (tok.length < 5 || !tok[0].equals("size")) {
            return null;
        }
        List<Integer> times = new ArrayList<>();
        List<Integer> checks = new ArrayList<>();
        int type = -1;
        int algbw = -1;
        int busbw = -1;
        boolean error = false;
        boolean ts = tok[tok.length - 1].equals("timestamp");
        for (int i = 0; i < tok.length; i++) {
            switch (tok[i]) {
                case "time", "cputime" -> times.add(i);
                case "#wrong" -> checks.add(i);
                case "error" -> {
                    checks.add(i);
                    error = true;
                }
                case "type" -> type = i;
                case "algbw" -> algbw = algbw < 0 ? i : algbw;
                case "busbw" -> busbw = busbw < 0 ? i : busbw;
                default -> {}
            }
        }
        if (times.isEmpty() || times.size() > 2 || checks.size() != times.size()) {
            return null;
        }
        return new Layout(
                ts ? tok.length - 1 : tok.length,
                ts,
                type,
                times.stream().mapToInt(Integer::intValue).toArray(),
                checks.stream().mapToInt(Integer::intValue).toArray(),
                error,
                String.join(" ", tok),
                algbw,
                busbw);
    }

    /** One row of a size table; time and check per placement (index 0 out-of-place, 1 in-place). */
    record Row(
            int line,
            long size,
            String type,
            double[] time,
            double[] check,
            boolean errorColumn,
            double algbw,
            double busbw) {}

    private Row parseRow(RawRow raw) throws InputException {
        int ln = raw.line;
        Layout l = raw.layout;
        String[] tok = raw.tokens.toArray(String[]::new);
        boolean ok = tok.length == l.nCols() || (l.timestamp() && tok.length == l.nCols() + 2);
        if (!ok) {
            String parts = raw.cutByRow
                    ? " (an NCCL line glued to it on line " + raw.parts.getLast() + " cuts it short, and line "
                            + raw.interruptedAt + " is the next row)"
                    : raw.interruptedAt == 0
                            ? ""
                            : " (its parts, between NCCL lines, are on line"
                                    + (raw.parts.size() == 1 ? " " : "s ")
                                    + raw.parts.stream()
                                            .map(String::valueOf)
                                            .collect(java.util.stream.Collectors.joining(", "))
                                    + (raw.interruptedAt > 0
                                            ? "; line " + raw.interruptedAt + " interrupts it"
                                            : "; the file ends first")
                                    + ")";
            throw new InputException(
                    at(ln),
                    "row has " + TextReport.count(tok.length, "field") + " but the column header names "
                            + l.nCols() + (l.timestamp() ? " (+2 for the timestamp)" : "") + " (" + l.header()
                            + "); the row looks truncated or mangled" + parts);
        }
        long size;
        try {
            size = AsciiNumbers.parseLong(tok[0]);
        } catch (NumberFormatException e) {
            throw new InputException(
                    at(ln), "size '" + tok[0] + "' is not a whole number of bytes" + AsciiNumbers.hint(tok[0]));
        }
        if (!AsciiNumbers.isDigit(tok[0].charAt(0))) { // -1048576, or +1048576: nccl-tests prints no sign
            throw new InputException(
                    at(ln), "size '" + tok[0] + "' is not a size: nccl-tests prints whole numbers of bytes, 0 or more");
        }
        int n = l.time().length;
        double[] time = new double[n];
        double[] check = new double[n];
        for (int p = 0; p < n; p++) {
            String half = n == 1 ? "" : (p == 0 ? " (out-of-place)" : " (in-place)");
            time[p] = number(ln, tok[l.time()[p]], "time" + half);
            if (!(time[p] > 0) && size != 0) {
                throw new InputException(
                        at(ln), "time" + half + " '" + tok[l.time()[p]] + "' is not a time: times must be > 0 us");
            }
            String c = tok[l.check()[p]];
            check[p] = c.equals("N/A") ? Double.NaN : number(ln, c, (l.errorColumn() ? "error" : "#wrong") + half);
        }
        return new Row(
                ln,
                size,
                l.type() >= 0 ? tok[l.type()] : null,
                time,
                check,
                l.errorColumn(),
                bandwidth(ln, size, tok, l.algbw(), "algbw"),
                bandwidth(ln, size, tok, l.busbw(), "busbw"));
    }

    /**
     * A bandwidth column: a number, or NaN where the table has none; a row of 0 bytes may print
     * inf or nan there. Anything else makes the row mangled (it is not accepted silently).
     */
    private double bandwidth(int ln, long size, String[] tok, int i, String what) throws InputException {
        if (i < 0 || i >= tok.length) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(tok[i]);
        } catch (NumberFormatException e) {
            if (size == 0 || tok[i].equals("N/A")) {
                return Double.NaN;
            }
            throw new InputException(at(ln), what + " '" + tok[i] + "' is not a number");
        }
    }

    private double number(int ln, String s, String what) throws InputException {
        try {
            double v = Double.parseDouble(s);
            if (Double.isFinite(v)) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new InputException(at(ln), what + " '" + s + "' is not a number" + AsciiNumbers.hint(s));
    }

    /**
     * nccl-tests' pass/fail bound on the {@code error} column before 2.13:
     * {@code DeltaMaxValue(type) * (nranks - 1)} (src/common.cu at 51af557^).
     */
    static double errorBound(String type, int nRanks) {
        double delta = switch (type == null ? "" : type) {
            case "half", "bfloat16" -> 1e-2;
            case "float" -> 1e-5;
            case "double" -> 1e-12;
            default -> 0; // integer types: any deviation is an error (1e-200)
        };
        return delta * Math.max(1, nRanks - 1);
    }

    // ---- one run ----------------------------------------------------------------------------------

    private final class Segment {
        String startedProgram;
        int startedLine;
        String program;
        int programLine;
        String named;
        int namedLine;
        boolean nThread;
        boolean runHeader;
        int aggIters = 1;
        final List<NodeCount.Rank> ranks = new ArrayList<>(); // the '# Rank' device lines
        final Map<String, String> hostIds = new LinkedHashMap<>(); // host:pid -> its NCCL_HOSTID (NCCL INFO)
        String hostIdWhere; // the first such line
        final Set<String> echoedHostIds = new java.util.LinkedHashSet<>(); // NCCL_HOSTID=... before the table
        String echoedHostIdWhere; // the first line that sets one
        final Map<String, String[]> env = new LinkedHashMap<>(); // name -> {value, where}
        final Map<String, String[]> echoed = new LinkedHashMap<>(); // name -> {value, where}
        int commRanks;
        int commNodes;
        boolean commMnnvl; // the comm line's "MNNVL 1"
        String commWhere;
        String ncclVersion; // NCCL's "NCCL version 2.28.9+cuda12.9" INFO line
        String libraryVersion; // nccl-tests' "nccl-library=22809"
        String[] forcedNone; // the plugin's "force RING/LL128/8 applied to none of ..." line: {candidate, where}
        final List<NcclRunLog.RawSelection> selections = new ArrayList<>();
        Layout layout;
        int layoutLine;
        boolean closed;
        RawRow pending;
        final List<RawRow> rows = new ArrayList<>();
        /** lines that look like size-table rows but stand where no table is open */
        int strayRows;
        /** the first such line */
        int strayFirst;

        boolean started() {
            return nThread || !rows.isEmpty() || closed;
        }

        void finishRow(int interruptedAt) {
            if (pending != null) {
                pending.interruptedAt = interruptedAt;
                rows.add(pending);
                pending = null;
            }
        }

        /**
         * Whether a line belongs to the next run rather than this one: a run header once this one has
         * started, anything but a footer after this one's footer, or a second table header.
         */
        boolean endsBefore(String t) {
            Layout header = t.startsWith("#") ? layout(t) : null;
            boolean newTable = header != null && layout != null && (!rows.isEmpty() || closed);
            return (isRunHeader(t) && started()) || (closed && !t.isEmpty() && !isFooter(t)) || newTable;
        }

        /** Reads one line of this run: a comment, (part of) a row, another line, and the NCCL line glued to it. */
        void read(int ln, Split sp) throws InputException {
            String line = sp.text();
            String t = line.strip();
            if (!t.isEmpty()) {
                if (pending != null && isContinuation(t) && !t.startsWith("#") && pending.overflowsWith(t)) {
                    pending.cutByRow = true; // a whole row where the rest of this one should be
                    finishRow(ln);
                } else if (pending != null && !(isContinuation(t) && !t.startsWith("#"))) {
                    finishRow(ln);
                }
                if (t.startsWith("#")) {
                    comment(ln, t);
                } else if (pending != null) {
                    pending.add(ln, t);
                } else if (layout != null && !closed && startsWithSize(t)) {
                    pending = new RawRow(ln, layout);
                    pending.add(ln, t);
                } else {
                    if (looksLikeRow(t)) { // a row where no table is open: before its header, after its footer
                        strayRows++;
                        strayFirst = strayFirst == 0 ? ln : strayFirst;
                    }
                    other(ln, line);
                }
                if (pending != null) {
                    // a row ends at a real line end; an NCCL line glued after it (or an NCCL WARN, which
                    // starts with a newline of its own) means nccl-tests has not finished printing it
                    boolean more = sp.nccl() != null || sp.warnNext();
                    if (pending.complete(!more)) {
                        rows.add(pending);
                        pending = null;
                    }
                }
            }
            if (sp.nccl() != null && sp.nccl().contains("NCCL INFO")) {
                info(ln, sp.nccl());
            }
        }

        void info(int ln, String line) throws InputException {
            Matcher f = FORCED_NONE.matcher(line);
            if (f.find()) {
                forcedNone = forcedNone == null ? new String[] {f.group(1), at(ln)} : forcedNone;
                return;
            }
            Matcher v = NCCL_VERSION.matcher(line);
            if (v.find()) {
                ncclVersion = ncclVersion == null ? v.group(1) : ncclVersion;
                return;
            }
            Matcher m = NcclRunLog.ENV.matcher(line);
            if (m.find()) {
                env.put(m.group(1), new String[] {m.group(2).strip(), at(ln)});
                Matcher h = NodeCount.HOSTID_INFO.matcher(line);
                String process = NodeCount.process(line);
                if (h.find() && process != null) {
                    hostIds.putIfAbsent(process, h.group(1));
                    hostIdWhere = hostIdWhere == null ? at(ln) : hostIdWhere;
                }
                return;
            }
            m = NcclRunLog.COMM.matcher(line);
            if (m.find()) {
                int r = Integer.parseInt(m.group(2));
                int n = Integer.parseInt(m.group(3));
                if (commWhere != null && (r != commRanks || n != commNodes)) {
                    throw new InputException(
                            at(ln),
                            "this run's log shows communicators of " + commRanks + " and " + r
                                    + " ranks; nccl-tests runs one communicator shape per run");
                }
                commRanks = r;
                commNodes = n;
                commMnnvl = MNNVL.matcher(line).find();
                commWhere = at(ln);
                return;
            }
            NcclRunLog.RawSelection s = NcclRunLog.selection(at(ln), line);
            if (s != null) {
                selections.add(s);
            }
        }

        /** A line that is not a row, not NCCL's and not one nccl-tests' own comments: hints. */
        void other(int ln, String line) {
            if (program == null) {
                Matcher m = PROGRAM.matcher(line);
                if (m.find()) {
                    program = m.group(1);
                    programLine = ln;
                }
            }
            if (layout != null) {
                return;
            }
            Set<String> ids = NodeCount.echoed(line);
            if (!ids.isEmpty()) {
                echoedHostIds.addAll(ids);
                echoedHostIdWhere = echoedHostIdWhere == null ? at(ln) : echoedHostIdWhere;
            }
            Matcher e = ECHOED_ENV.matcher(line);
            Map<String, String> here = new LinkedHashMap<>();
            Set<String> conflicting = new HashSet<>();
            while (e.find()) {
                String v = e.group(2);
                if (v.length() >= 2 && (v.startsWith("\"") || v.startsWith("'"))) {
                    v = v.substring(1, v.length() - 1);
                }
                v = v.strip().replaceAll("[.,;:]+$", "");
                if (!v.isEmpty()
                        && here.containsKey(e.group(1))
                        && !here.get(e.group(1)).equals(v)) {
                    conflicting.add(e.group(1)); // prose listing several runs' settings, not one setting
                }
                here.putIfAbsent(e.group(1), v);
            }
            for (var x : here.entrySet()) {
                if (conflicting.contains(x.getKey())) {
                    continue;
                }
                if (x.getValue().isEmpty()) {
                    echoed.remove(x.getKey()); // NCCL_PROTO= : unset
                } else {
                    echoed.put(x.getKey(), new String[] {x.getValue(), at(ln)});
                }
            }
            Matcher n = NAMED.matcher(line);
            Set<Collective> seen = new HashSet<>();
            String first = null;
            boolean other = false;
            while (n.find()) {
                String w = n.group(1).toLowerCase(Locale.ROOT).replaceAll("[_-]", "");
                Collective c = collectiveOfName(w);
                if (c == null) {
                    other = true;
                    first = first == null ? w : first;
                } else {
                    seen.add(c);
                    first = first == null ? w : first;
                }
            }
            if (first != null && (seen.size() + (other ? 1 : 0)) == 1) {
                named = first;
                namedLine = ln;
            }
        }

        void comment(int ln, String t) {
            Matcher lib = LIBRARY.matcher(t);
            if (t.startsWith("# nccl-tests version") && lib.find()) {
                libraryVersion = io.nccltuner.policy.Signature.versionString(Integer.parseInt(lib.group(1)));
            }
            if (t.startsWith("# Collective test starting")) {
                String rest = t.substring(t.indexOf(':') + 1).strip();
                Matcher m = PROGRAM.matcher(rest);
                startedProgram = m.find() ? m.group(1) : rest;
                startedLine = ln;
            } else if (t.startsWith("# nThread")) {
                nThread = true;
                Matcher m = AGG.matcher(t);
                if (m.find()) {
                    aggIters = Integer.parseInt(m.group(1));
                }
            } else if (t.startsWith("# Out of bounds values") || t.startsWith("# Avg bus bandwidth")) {
                closed = layout != null;
            } else {
                NodeCount.Rank r = NodeCount.Rank.parse(t);
                if (r != null) {
                    ranks.add(r);
                    return;
                }
                if (layout == null) {
                    Layout l = layout(t);
                    if (l != null) {
                        layout = l;
                        layoutLine = ln;
                        return;
                    }
                    if (!t.startsWith("# nccl-tests version")) {
                        other(ln, t);
                    }
                }
            }
        }
    }

    /**
     * The collective an nccl-tests program measures (nccl-tests src/*.cu: all_reduce_perf is
     * ncclAllReduce, all_gather_perf ncclAllGather, reduce_scatter_perf ncclReduceScatter,
     * broadcast_perf ncclBroadcast, reduce_perf ncclReduce).
     *
     * @param program the program's name without {@code _perf} ({@code all_reduce})
     * @return the collective, or null for a program whose calls never reach a tuner (alltoall,
     *     sendrecv, gather, scatter, hypercube) or an unknown name
     */
    public static Collective collectiveOfProgram(String program) {
        return switch (program) {
            case "all_reduce" -> Collective.AllReduce;
            case "all_gather" -> Collective.AllGather;
            case "reduce_scatter" -> Collective.ReduceScatter;
            case "broadcast" -> Collective.Broadcast;
            case "reduce" -> Collective.Reduce;
            default -> null;
        };
    }

    /** @return the collective a {@link #NAMED} word (lower case, no '_' or '-': {@code allreduce}) names, or null */
    private static Collective collectiveOfName(String word) {
        return collectiveOfProgram(
                switch (word) {
                    case "allreduce" -> "all_reduce";
                    case "allgather" -> "all_gather";
                    case "reducescatter" -> "reduce_scatter";
                    default -> word;
                });
    }

    /** @return alltoall, sendrecv, gather, scatter or hypercube when the file name says so, else null */
    private static String otherOfFileName(String name) {
        Matcher m = Pattern.compile("(?i)(all[_-]?to[_-]?allv?|send[_-]?recv|hypercube|gather|scatter)")
                .matcher(name);
        return m.find() ? m.group(1).toLowerCase(Locale.ROOT).replaceAll("[_-]", "") : null;
    }

    private static Collective collectiveOfFileName(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace("-", "_");
        if (n.contains("all_reduce") || n.contains("allreduce")) {
            return Collective.AllReduce;
        }
        if (n.contains("reduce_scatter") || n.contains("reducescatter")) {
            return Collective.ReduceScatter;
        }
        if (n.contains("all_gather") || n.contains("allgather")) {
            return Collective.AllGather;
        }
        if (n.contains("broadcast")) {
            return Collective.Broadcast;
        }
        if (n.contains("reduce")) {
            return Collective.Reduce;
        }
        return null;
    }

    /** A forced value read from NCCL_ALGO or NCCL_PROTO: one value, none, or not one value. */
    private record Forced<T>(T value, String text, String where) {
        boolean ambiguous() {
            return value == null && text != null;
        }
    }

    private static <T> Forced<T> forced(
            String[] env, Collective coll, Function<String, T> parse, String var, String kinds) throws InputException {
        if (env == null) {
            return new Forced<>(null, null, null);
        }
        String v = env[0];
        String where = env[1];
        if (v.contains(":")) {
            // NCCL 2.24+ per-collective syntax: "allreduce:tree,ring;broadcast:ring"
            String found = null;
            for (String part : v.split(";")) {
                int c = part.indexOf(':');
                if (c > 0 && Collective.parse(part.substring(0, c).strip()) == coll) {
                    found = part.substring(c + 1).strip();
                }
            }
            if (found == null) {
                return new Forced<>(null, null, null);
            }
            v = found;
        }
        if (v.startsWith("^") || v.contains(",")) {
            return new Forced<>(null, v, where);
        }
        T t = parse.apply(v);
        if (t == null) {
            throw new InputException(where, var + " is '" + v + "', not one of " + kinds);
        }
        return new Forced<>(t, v, where);
    }

    /** Why a named program or collective is not one NCCL asks a tuner about. */
    static String notAsked(String name) {
        return name + " is not a collective NCCL asks a tuner about: NCCL calls getCollInfo only for "
                + "Broadcast, Reduce, AllGather, ReduceScatter and AllReduce (alltoall, sendrecv, gather and scatter "
                + "run as point-to-point sends and receives, which never reach a tuner)";
    }

    /**
     * The rank counts a table's busbw/algbw ratio allows, given that nccl-tests prints both with two
     * decimals (rows with algbw of at least 1 GB/s are used, where the rounding matters least).
     *
     * @return {lo, hi} of the allowed ratio, or null when no row tells
     */
    static double[] ratioBounds(List<Row> rows) {
        double lo = Double.NEGATIVE_INFINITY;
        double hi = Double.POSITIVE_INFINITY;
        boolean any = false;
        for (Row r : rows) {
            double a = r.algbw();
            double b = r.busbw();
            if (!(a >= 1.0) || !(b >= 0) || r.size() == 0) {
                continue;
            }
            lo = Math.max(lo, (b - 0.005) / (a + 0.005));
            hi = Math.min(hi, (b + 0.005) / (a - 0.005));
            any = true;
        }
        return any ? new double[] {lo, hi} : null;
    }

    /** @return the rank counts 1..65536 whose bus factor lies within the bounds (at most 3 listed, plus a count) */
    static List<Integer> ranksFitting(Collective c, double[] bounds) {
        List<Integer> fit = new ArrayList<>();
        if (bounds == null || bounds[0] > bounds[1] || c == Collective.Broadcast || c == Collective.Reduce) {
            return fit;
        }
        for (int n = 1; n <= 65536; n++) {
            double f = BusBandwidth.factor(c, n);
            if (f >= bounds[0] && f <= bounds[1]) {
                fit.add(n);
            }
        }
        return fit;
    }

    private static String ratio(double[] b) {
        return String.format(Locale.ROOT, "%.4f", (b[0] + b[1]) / 2);
    }

    private static String ranksText(List<Integer> fit) {
        if (fit.size() <= 3) {
            return fit.toString();
        }
        return fit.getFirst() + ".." + fit.getLast();
    }

    private Collective collectiveOf(Segment s, List<String> skipped) throws InputException {
        String where = at(s.layoutLine);
        if (s.startedProgram != null) {
            Collective coll = collectiveOfProgram(s.startedProgram);
            if (coll == null) {
                skipped.add(at(s.startedLine) + ": " + notAsked(s.startedProgram + "_perf") + "; run skipped");
                return null;
            }
            if (options.collective() != null && options.collective() != coll) {
                throw new InputException(
                        at(s.startedLine),
                        "the log says " + s.startedProgram + "_perf but --collective says " + options.collective());
            }
            return coll;
        }
        if (options.collective() != null) {
            return options.collective();
        }
        if (s.program != null) {
            Collective coll = collectiveOfProgram(s.program);
            if (coll == null) {
                skipped.add(at(s.programLine) + ": " + notAsked(s.program + "_perf") + "; run skipped");
            }
            return coll;
        }
        if (s.named != null) {
            Collective coll = collectiveOfName(s.named);
            if (coll == null) {
                skipped.add(at(s.namedLine) + ": line " + s.namedLine + " names " + s.named + " for this table; "
                        + notAsked(s.named) + "; run skipped");
                return null;
            }
            warnPerTable(
                    s.layoutLine,
                    "collective " + coll + " read from line " + s.namedLine + " (it names " + s.named
                            + "), the only collective named before this table; pass --collective if that is wrong",
                    "each table's collective read from the one collective named before it: " + EACH
                            + "; pass --collective if that is wrong",
                    "line " + s.namedLine + " (" + coll + ")");
            return coll;
        }
        String fileName = file.getFileName().toString();
        Collective coll = collectiveOfFileName(fileName);
        if (coll == null) {
            String other = otherOfFileName(fileName);
            if (other != null) {
                skipped.add(where + ": the file name says " + other + "; " + notAsked(other) + "; run skipped");
                return null;
            }
            throw new InputException(
                    where,
                    "cannot tell which collective this table measured (no '# Collective test "
                            + "starting' line, no *_perf program name, nothing in the file name); pass --collective");
        }
        return coll;
    }

    /** The communicator and call shape a run measured, and the machine it ran on. */
    private record Shape(Collective collective, int nRanks, int nNodes, Range pipeOps, Measurement.Hardware hardware) {}

    /** @return the run when it counts as NCCL's own pick only because nothing says otherwise, else null */
    private Unforced resolve(Segment s, List<String> skipped) throws InputException {
        String where = at(s.layoutLine);
        Collective coll;
        try {
            coll = collectiveOf(s, skipped);
        } catch (InputException e) { // said with what else the table lacks, which needs no collective
            problem(e);
            if (options.nNodes() == 0 && s.commWhere == null && s.ranks.isEmpty()) {
                problems.add(new Problem(s.layoutLine, NO_NODE_LINES, "pass --nodes"));
            }
            // its times still tell whether it and another such table are one run's replicates
            boolean saysNothing = s.env.isEmpty()
                    && s.echoed.isEmpty()
                    && options.algorithm() == null
                    && options.protocol() == null
                    && options.channels() == 0;
            return saysNothing ? new Unforced(s.layoutLine, null, 0, 0, s.runHeader, parseRows(s)) : null;
        }
        if (coll == null) {
            return null;
        }
        List<Row> rows = parseRows(s);
        RankCount ranks = nRanksOf(s, where, coll, rows);
        int nNodes;
        try {
            nNodes = nNodesOf(s, where, ranks, rows);
        } catch (InputException e) { // said with the file's other problems; the table is read on for them
            problem(e);
            nNodes = 0;
        }
        Range pipeOps = s.aggIters <= 1 ? Range.exactly(1) : new Range(2, Long.MAX_VALUE);
        String gpu = s.ranks.isEmpty() || s.ranks.getFirst().device().isBlank()
                ? null
                : s.ranks.getFirst().device();
        Measurement.Hardware hardware =
                Measurement.Hardware.of(gpu, s.ncclVersion != null ? s.ncclVersion : s.libraryVersion);
        if (s.aggIters > 1) {
            into.warn(
                    where,
                    "agg iters " + s.aggIters + ": NCCL saw grouped calls, so the rules get numPipeOps >= 2 "
                            + "(the exact numPipeOps NCCL passed is not in the log)");
        }
        Map<String, String[]> env = forcingEnv(s, where);
        Forcing f = forcing(env, coll, where);
        if (nNodes > 0) {
            Tally t = addRows(s, new Shape(coll, ranks.n(), nNodes, pipeOps, hardware), f, rows);
            warnUnused(s, where, f, t);
        }
        boolean saysNothing =
                env.isEmpty() && options.algorithm() == null && options.protocol() == null && options.channels() == 0;
        return f.auto() && saysNothing ? new Unforced(s.layoutLine, coll, ranks.n(), nNodes, s.runHeader, rows) : null;
    }

    /** The run's rows; a mangled one is refused and skipped with a warning ({@code --strict}: refuses the file). */
    private List<Row> parseRows(Segment s) throws InputException {
        List<Row> rows = new ArrayList<>();
        for (RawRow r : s.rows) {
            try {
                rows.add(parseRow(r));
            } catch (InputException e) {
                if (options.strict()) {
                    throw e;
                }
                // a cut excerpt or an interrupted print: this row, not the file (--strict refuses the file)
                String msg = e.getMessage();
                String prefix = at(r.line) + ": ";
                String why = msg.startsWith(prefix) ? msg.substring(prefix.length()) : msg;
                if (firstMangled == null) {
                    firstMangled = e;
                }
                // one entry, among the refused rows (compile lists them and counts them once)
                into.refuseMangled(at(r.line), why);
            }
        }
        return rows;
    }

    /**
     * A run's nRanks, and whether its '# Rank' lines are missing some ranks (then their host names do
     * not count the nodes).
     */
    private record RankCount(int n, boolean missingLines) {}

    /** nRanks: {@code --ranks}, else NCCL's comm line, else the '# Rank' lines, else busbw/algbw. */
    private RankCount nRanksOf(Segment s, String where, Collective coll, List<Row> rows) throws InputException {
        int nRanks = options.nRanks();
        if (nRanks > 0 && s.commWhere != null && s.commRanks != nRanks) {
            throw new InputException(s.commWhere, "NCCL says nRanks " + s.commRanks + " but --ranks says " + nRanks);
        }
        double[] bounds = ratioBounds(rows);
        List<Integer> fit = ranksFitting(coll, bounds);
        if (nRanks > 0) {
            return new RankCount(nRanks, false);
        }
        if (s.commWhere != null) {
            return new RankCount(s.commRanks, false);
        }
        if (!s.ranks.isEmpty()) {
            return nRanksOfRankLines(s, where, coll, bounds, fit);
        }
        if (fit.size() == 1) {
            into.warn(
                    where,
                    "nRanks " + fit.getFirst() + " inferred from busbw/algbw " + ratio(bounds) + " of " + coll
                            + " (no '# Rank' lines, no NCCL 'comm ... nRanks' line); pass --ranks if that is wrong");
            return new RankCount(fit.getFirst(), false);
        }
        throw new InputException(
                where,
                "cannot tell nRanks: no '# Rank N ...' device lines and no NCCL "
                        + "'comm ... nRanks' line before this table"
                        + (fit.isEmpty()
                                ? ""
                                : ", and busbw/algbw " + ratio(bounds) + " of " + coll + " fits nRanks "
                                        + ranksText(fit))
                        + "; pass --ranks");
    }

    /**
     * nRanks from the '# Rank' lines: their count when their indices run 0..n-1, else the highest
     * index + 1 or the one rank count busbw/algbw allows above it (said in a warning).
     */
    private RankCount nRanksOfRankLines(Segment s, String where, Collective coll, double[] bounds, List<Integer> fit)
            throws InputException {
        int count = (int) s.ranks.stream().map(NodeCount.Rank::index).distinct().count();
        int max = s.ranks.stream().mapToInt(NodeCount.Rank::index).max().orElse(0);
        if (max + 1 == count) {
            return new RankCount(count, false);
        }
        if (fit.isEmpty() || fit.contains(max + 1)) {
            into.warn(
                    where,
                    "nRanks " + (max + 1) + " inferred from the highest rank index (Rank " + max + ") of "
                            + count + " '# Rank' line" + (count == 1 ? "" : "s")
                            + (fit.isEmpty() ? "" : ", consistent with busbw/algbw " + ratio(bounds) + " of " + coll));
            return new RankCount(max + 1, true);
        }
        if (fit.getFirst() > max + 1 && fit.size() == 1) {
            into.warn(
                    where,
                    "nRanks " + fit.getFirst() + " inferred from busbw/algbw " + ratio(bounds) + " of " + coll
                            + " (the '# Rank' lines go up to Rank " + max + ")");
            return new RankCount(fit.getFirst(), true);
        }
        throw new InputException(
                where,
                "cannot tell nRanks: " + count + " '# Rank' line" + (count == 1 ? "" : "s")
                        + " up to Rank " + max + ", and busbw/algbw " + ratio(bounds) + " of " + coll
                        + " fits nRanks "
                        + ranksText(fit) + "; pass --ranks");
    }

    /**
     * nNodes: {@code --nodes}, else NCCL's comm line, else the nodes NCCL counts from the complete
     * '# Rank' lines ({@link NodeCount}: their host names, or their processes' NCCL_HOSTID where the
     * log shows it). Where NCCL's line and the device lines disagree NCCL's wins, with a warning
     * naming both; where {@code --nodes} and the device lines disagree (no NCCL line), {@code --nodes}
     * wins, with a warning naming both.
     */
    private int nNodesOf(Segment s, String where, RankCount ranks, List<Row> rows) throws InputException {
        int nNodes = options.nNodes();
        if (nNodes > 0 && s.commWhere != null && s.commNodes != nNodes) {
            throw new InputException(s.commWhere, "NCCL says nNodes " + s.commNodes + " but --nodes says " + nNodes);
        }
        NodeCount.Count count =
                ranks.missingLines() || s.ranks.isEmpty() ? null : NodeCount.of(s.ranks, s.hostIds, s.echoedHostIds);
        if (nNodes > 0) { // the user's word wins, but not silently where the file's hosts count otherwise
            if (s.commWhere == null && count != null && count.nNodes() > 0 && count.nNodes() != nNodes) {
                String text = "--nodes says nNodes " + nNodes + " but " + told(s, count) + " count "
                        + count.nNodes() + ": used --nodes " + nNodes + " (right if "
                        + whyNodesDiffer(nNodes, count, false) + "); if not, leave --nodes out for this file";
                warnPerTable(s.layoutLine, text, text);
            }
            return nNodes;
        }
        if (s.commWhere != null) {
            if (count != null && count.nNodes() > 0 && count.nNodes() != s.commNodes) {
                into.warn(
                        s.commWhere,
                        "NCCL says nNodes " + s.commNodes + " but " + told(s, count) + " count " + count.nNodes()
                                + ": used NCCL's (" + whyNodesDiffer(s.commNodes, count, s.commMnnvl) + ")");
            }
            return s.commNodes;
        }
        if (ranks.missingLines()) {
            throw new InputException(
                    where,
                    "cannot tell nNodes: the '# Rank' lines name only " + s.ranks.size()
                            + " of " + ranks.n()
                            + " ranks, so their host names do not count the nodes, and there is no NCCL 'comm ... "
                            + "nNodes' line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT); pass --nodes");
        }
        if (count == null) {
            throw new InputException(
                    where,
                    NO_NODE_LINES
                            + (options.nRanks() == 0
                                    ? " (nRanks " + ranks.n() + " is inferred from busbw/algbw "
                                            + ratio(ratioBounds(rows)) + ")"
                                    : "")
                            + "; pass --nodes");
        }
        return switch (count.source()) {
            case HOST_NAMES -> nNodesOfHosts(s, count);
            case HOSTID_LINES, HOSTID_ECHO -> nNodesOfHostIds(s, count);
            case UNKNOWN -> throw unknownNodes(s, where, ranks, count);
        };
    }

    /**
     * Why NCCL may count other nodes than the device lines do (NCCL src/misc/utils.cc
     * getHostHash: a rank's node is its NCCL_HOSTID, else its host name; MNNVL makes one NVLink
     * domain one node).
     *
     * @param nNodes the nodes NCCL's comm line or --nodes says
     * @param count the nodes the device lines count
     * @param mnnvl whether NCCL's comm line says MNNVL 1
     */
    private static String whyNodesDiffer(int nNodes, NodeCount.Count count, boolean mnnvl) {
        return count.nNodes() < nNodes
                ? "one host is several nodes to NCCL where its ranks set different NCCL_HOSTIDs"
                : mnnvl
                        ? "MNNVL 1: the hosts of one NVLink domain are one node to NCCL"
                        : "several hosts are one node to NCCL where their ranks set one NCCL_HOSTID, or share one "
                                + "NVLink domain (MNNVL)";
    }

    /** Why a table's nNodes is untold where nothing before it names hosts or nodes. */
    private static final String NO_NODE_LINES =
            "cannot tell nNodes: no '# Rank N ... on HOST' device lines and no NCCL "
                    + "'comm ... nNodes' line before this table";

    /** Why NCCL_HOSTID leaves nNodes untold: which processes the INFO lines name, or echoes not one per rank. */
    private InputException unknownNodes(Segment s, String where, RankCount ranks, NodeCount.Count count) {
        // where the INFO lines name no rank's process, the NCCL_HOSTIDs they name (not an empty list)
        String ids = names(
                count.hostIds().isEmpty()
                        ? s.hostIds.values().stream().distinct().toList()
                        : count.hostIds());
        long named =
                s.ranks.stream().filter(r -> s.hostIds.containsKey(r.process())).count();
        return new InputException(
                where,
                "cannot tell nNodes: "
                        + (s.hostIdWhere != null
                                ? "NCCL's 'NCCL_HOSTID set by environment' lines (from line " + lineOf(s.hostIdWhere)
                                        + ": " + ids + ") name the NCCL_HOSTID of the processes of " + named
                                        + " of the " + TextReport.count(ranks.n(), "rank")
                                : "the NCCL_HOSTID values set from line " + lineOf(s.echoedHostIdWhere) + " (" + ids
                                        + ") are not one per rank (" + TextReport.count(ranks.n(), "rank") + ")")
                        + ", so the host names of the '# Rank' lines (" + names(count.hosts())
                        + ") do not count the nodes NCCL sees (a rank's NCCL_HOSTID is its host to NCCL), and there "
                        + "is no NCCL 'comm ... nNodes' line (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT); pass --nodes");
    }

    /** @return what told a count, for messages: {@code the host names of the '# Rank' lines (host0)} */
    private String told(Segment s, NodeCount.Count count) {
        String ids = names(count.hostIds());
        return switch (count.source()) {
            case HOSTID_LINES ->
                "the NCCL_HOSTIDs of the ranks' processes (" + ids + ", NCCL's 'NCCL_HOSTID set by "
                        + "environment' lines from line " + lineOf(s.hostIdWhere) + ")";
            case HOSTID_ECHO ->
                "the " + count.hostIds().size() + " NCCL_HOSTID values set from line " + lineOf(s.echoedHostIdWhere)
                        + " (" + ids + "), one per rank";
            default -> "the host names of the '# Rank' lines (" + names(count.hosts()) + ")";
        };
    }

    /** @return the line number of a {@code file:line} this file's {@link #at} wrote */
    private String lineOf(String where) {
        return where.substring(file.toString().length() + 1);
    }

    /** @return the first three names, then ", ..." when there are more */
    private static String names(List<String> names) {
        return String.join(", ", names.subList(0, Math.min(3, names.size()))) + (names.size() > 3 ? ", ..." : "");
    }

    /** The nodes NCCL_HOSTID makes, with a warning where the host names count otherwise. */
    private int nNodesOfHostIds(Segment s, NodeCount.Count count) {
        if (count.nNodes() != count.hosts().size()) {
            String rest = ", not " + count.hosts().size()
                    + " from the host names of the '# Rank' lines (" + names(count.hosts())
                    + "): a rank's NCCL_HOSTID is its host to NCCL (src/misc/utils.cc getHostHash); NCCL's "
                    + "'comm ... nNodes' INFO line (NCCL_DEBUG_SUBSYS=INIT) would say so; pass --nodes if that "
                    + "is wrong";
            warnPerTable(
                    s.layoutLine,
                    "nNodes " + count.nNodes() + " counted from " + told(s, count) + rest,
                    "nNodes " + count.nNodes() + " counted from "
                            + (count.source() == NodeCount.Source.HOSTID_LINES
                                    ? "the NCCL_HOSTIDs of the ranks' processes (NCCL's 'NCCL_HOSTID set by "
                                            + "environment' lines before each table)"
                                    : "the NCCL_HOSTID values set before each table, one per rank")
                            + rest);
        }
        return count.nNodes();
    }

    /** A table's warning and the same for several tables: its lines, then what they share. */
    private final Map<String, List<Object[]>> perTable = new LinkedHashMap<>();

    /** Where {@link #warnPerTable}'s shared warning puts each table's own values. */
    private static final String EACH = "\u0000each";

    /**
     * A warning each table of a file may draw, the same but for that table's values (its lines, its
     * NCCL_HOSTIDs): printed by {@link #warnPerTableAll} once the file is read, as it is where one
     * table draws it, else as one line naming every table's line ({@code FILE:22,78,134: ...}).
     *
     * @param line the table's line
     * @param text the warning for this table alone
     * @param shared the warning for several tables, without this table's values
     */
    private void warnPerTable(int line, String text, String shared) {
        warnPerTable(line, text, shared, "");
    }

    /**
     * {@link #warnPerTable(int, String, String)} where the warning for several tables lists each
     * table's own value: {@code shared} has {@link #EACH} where they go, joined by ", ".
     *
     * @param line the table's line
     * @param text the warning for this table alone
     * @param shared the warning for several tables, {@link #EACH} where their values go
     * @param own this table's value, e.g. {@code 2 (AllReduce)}
     */
    private void warnPerTable(int line, String text, String shared, String own) {
        perTable.computeIfAbsent(shared, k -> new ArrayList<>()).add(new Object[] {line, text, own});
    }

    /** Prints the {@link #warnPerTable} warnings, one line each. */
    private void warnPerTableAll() {
        perTable.forEach((shared, tables) -> {
            if (tables.size() == 1) {
                into.warn(at((Integer) tables.getFirst()[0]), (String) tables.getFirst()[1]);
            } else {
                into.warn(
                        at(tables.stream().map(t -> (Integer) t[0]).toList()),
                        shared.replace(
                                EACH,
                                tables.stream()
                                        .map(t -> (String) t[2])
                                        .collect(java.util.stream.Collectors.joining(", "))));
            }
        });
        perTable.clear();
    }

    /** The distinct host names of the '# Rank' lines, with a warning about MNNVL when several. */
    private int nNodesOfHosts(Segment s, NodeCount.Count count) {
        List<String> distinct = count.hosts();
        if (distinct.size() > 1) {
            boolean mnnvl = s.ranks.stream()
                    .anyMatch(r -> r.device().matches("(?i).*\\b(GB200|GB300|GB10\\d|Graphics Device)\\b.*"));
            String text = "nNodes " + distinct.size() + " counted from the host names of the '# Rank' lines ("
                    + names(distinct)
                    + "); hosts that share one NVLink domain (MNNVL"
                    + (mnnvl ? ", as these " + s.ranks.getFirst().device() + " GPUs may" : ": GB200/GB300 NVL72")
                    + ") are one node to NCCL, which then says 'nNodes 1 ... "
                    + "MNNVL 1' in its 'comm ... nRanks' INFO line (NCCL_DEBUG_SUBSYS=INIT); pass --nodes if so";
            warnPerTable(s.layoutLine, text, text);
        }
        return distinct.size();
    }

    /**
     * The forcing variables of a run: NCCL's 'set by environment' INFO lines, else what a command line
     * or environment echo before the table set (said in a warning; where both name one, NCCL's wins,
     * with a warning when they differ).
     *
     * @return variable name to {value, file:line}
     */
    private Map<String, String[]> forcingEnv(Segment s, String where) {
        Map<String, String[]> env = new LinkedHashMap<>(s.env);
        List<String> fromEcho = new ArrayList<>();
        for (var e : s.echoed.entrySet()) {
            String[] info = env.get(e.getKey());
            String echoLine = lineOf(e.getValue()[1]);
            if (info == null) {
                env.put(e.getKey(), e.getValue());
                fromEcho.add(e.getKey() + "=" + e.getValue()[0] + " (line " + echoLine + ")");
            } else if (!info[0].equalsIgnoreCase(e.getValue()[0])) {
                into.warn(
                        info[1],
                        "NCCL says " + e.getKey() + " " + info[0] + " but line " + echoLine + " sets " + e.getValue()[0]
                                + "; NCCL's line wins");
            }
        }
        if (!fromEcho.isEmpty()) {
            into.warn(
                    where,
                    "forced " + String.join(", ", fromEcho) + ", read from a command line or environment echo "
                            + "before this table (no NCCL 'set by environment' INFO line says so)");
        }
        return env;
    }

    /**
     * What a run forced.
     *
     * @param algo NCCL_ALGO, or null when not forced to one algorithm
     * @param proto NCCL_PROTO, or null when not forced to one protocol
     * @param channels the forced channel count (NCCL's maximum), 0 when not forced
     * @param channelsAmbiguous whether the channel variables name no single count
     * @param fa NCCL_ALGO as the log gave it
     * @param fp NCCL_PROTO as the log gave it
     */
    private record Forcing(
            Algorithm algo,
            Protocol proto,
            int channels,
            boolean channelsAmbiguous,
            Forced<Algorithm> fa,
            Forced<Protocol> fp) {
        /** @return whether the run measured NCCL's own pick: nothing forced, not even ambiguously */
        boolean auto() {
            return algo == null
                    && proto == null
                    && channels == 0
                    && !fa.ambiguous()
                    && !fp.ambiguous()
                    && !channelsAmbiguous;
        }

        String label() {
            return new RunConfig(algo, proto, channels).label();
        }
    }

    /**
     * The warning's words for a table whose run names no forced configuration; compile takes such
     * warnings out of its report and says them in one note for all files (or, where its first line
     * says that no input forced any candidate, not at all).
     */
    public static final String UNFORCED_RUN = "no forced configuration (no NCCL INFO 'set by environment' lines, no "
            + "--algo/--proto): counted as NCCL's own choice";

    /** The forced configuration: the log's variables, else the options; an option contradicting the log is an error. */
    private Forcing forcing(Map<String, String[]> env, Collective c, String where) throws InputException {
        Forced<Algorithm> fa = forced(
                env.get("NCCL_ALGO"),
                c,
                Algorithm::parse,
                "NCCL_ALGO",
                "TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT");
        Forced<Protocol> fp = forced(env.get("NCCL_PROTO"), c, Protocol::parse, "NCCL_PROTO", "LL, LL128, SIMPLE");
        Algorithm algo = fa.value();
        Protocol proto = fp.value();
        if (fa.text() == null && options.algorithm() != null) {
            algo = options.algorithm();
        } else if (algo != null && options.algorithm() != null && algo != options.algorithm()) {
            throw new InputException(
                    fa.where(), "the log says NCCL_ALGO " + algo + " but --algo says " + options.algorithm());
        }
        if (fp.text() == null && options.protocol() != null) {
            proto = options.protocol();
        } else if (proto != null && options.protocol() != null && proto != options.protocol()) {
            throw new InputException(
                    fp.where(), "the log says NCCL_PROTO " + proto + " but --proto says " + options.protocol());
        }
        if (algo == null && proto != null && !fa.ambiguous() && (c == Collective.Broadcast || c == Collective.Reduce)) {
            // NCCL runs Broadcast and Reduce only with RING (src/graph/tuning.cc, ncclTopoTuneModel:
            // "if ((coll == ncclFuncBroadcast || coll == ncclFuncReduce) && a != NCCL_ALGO_RING) continue;")
            algo = Algorithm.RING;
        }
        if (env.keySet().stream().noneMatch(CHANNEL_ENV::contains)) {
            return new Forcing(algo, proto, options.channels(), false, fa, fp);
        }
        int[] ch = channels(env);
        boolean ambiguous = ch == null;
        int channels = ambiguous ? 0 : ch[0];
        if (options.channels() > 0 && options.channels() != channels) {
            throw new InputException(
                    where,
                    "the log's NCCL_*NCHANNELS/NCCL_*_CTAS lines say "
                            + (ambiguous ? "no single channel count" : TextReport.count(channels, "channel"))
                            + " but --channels says " + options.channels());
        }
        return new Forcing(algo, proto, channels, ambiguous, fa, fp);
    }

    /**
     * The channel count NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS force: the smallest maximum.
     *
     * @return {count}, or null when they name no single count a policy can set (no maximum, min above
     *     max, outside 1..{@link io.nccltuner.policy.PolicyLoader#MAX_CHANNELS})
     * @throws InputException when a value is not a number
     */
    private static int[] channels(Map<String, String[]> env) throws InputException {
        int max = Integer.MAX_VALUE;
        int min = 0;
        for (String k : CHANNEL_ENV) {
            String[] e = env.get(k);
            if (e == null) {
                continue;
            }
            int v;
            try {
                v = AsciiNumbers.parseInt(e[0]);
            } catch (NumberFormatException ex) {
                throw new InputException(e[1], k + " is '" + e[0] + "', not a channel count" + AsciiNumbers.hint(e[0]));
            }
            if (k.startsWith("NCCL_MAX")) {
                max = Math.min(max, v);
            } else {
                min = Math.max(min, v);
            }
        }
        if (max == Integer.MAX_VALUE || min > max || max < 1 || max > io.nccltuner.policy.PolicyLoader.MAX_CHANNELS) {
            return null;
        }
        return new int[] {max};
    }

    /** What happened to a run's rows that did not become measurements. */
    private static final class Tally {
        int incomplete;
        int forcedNoneRows;
        int contradicted;
        int zero;
        final Set<RunConfig> warnedRan = new java.util.LinkedHashSet<>(); // in row order: the same message every run
    }

    /** Adds each usable row's times as measurements (and NCCL's pick, where logged, in unforced runs). */
    private Tally addRows(Segment s, Shape sh, Forcing f, List<Row> rows) {
        Map<Long, Set<RunConfig>> ran = new HashMap<>(); // what NCCL ran, per size
        for (NcclRunLog.RawSelection r : s.selections) {
            if (r.collective() == null || r.collective() == sh.collective()) {
                RunSelection sel = r.resolve(sh.nRanks(), sh.nNodes());
                ran.computeIfAbsent(sel.nBytes(), k -> new HashSet<>()).add(sel.config());
            }
        }
        Tally t = new Tally();
        for (Row row : rows) {
            if (row.size() == 0) {
                t.zero++;
                continue;
            }
            if (refused(row, sh.nRanks())) {
                into.hole(sh.collective(), sh.nRanks(), sh.nNodes(), sh.pipeOps(), row.size());
                continue;
            }
            Set<RunConfig> atSize = ran.get(row.size());
            RunConfig actual =
                    atSize != null && atSize.size() == 1 ? atSize.iterator().next() : null;
            RunConfig cfg;
            if (f.auto()) {
                cfg = RunConfig.AUTO;
                if (actual != null) {
                    into.add(new RunSelection(
                            at(row.line()),
                            sh.collective(),
                            sh.nRanks(),
                            sh.nNodes(),
                            row.size(),
                            actual.algorithm(),
                            actual.protocol(),
                            sh.hardware()));
                }
            } else {
                cfg = forcedConfig(s, f, actual, t);
            }
            if (cfg != null) {
                addTimes(row, sh, cfg);
            }
        }
        return t;
    }

    /**
     * The configuration a forced run's row measured: the forcing, completed or corrected by what NCCL's
     * selection line says ran at its size; null (counted in the tally) when that is not known.
     */
    private static RunConfig forcedConfig(Segment s, Forcing f, RunConfig actual, Tally t) {
        Algorithm a = f.algo();
        Protocol p = f.proto();
        if (actual != null) {
            if ((a != null && a != actual.algorithm()) || (p != null && p != actual.protocol())) {
                t.contradicted++;
                t.warnedRan.add(actual);
            }
            a = actual.algorithm();
            p = actual.protocol();
        }
        if (s.forcedNone != null && actual == null) {
            t.forcedNoneRows++;
            return null;
        }
        if (a == null || p == null || f.channelsAmbiguous()) {
            t.incomplete++;
            return null;
        }
        return new RunConfig(a, p, f.channels());
    }

    /** One measurement per half of the row that {@link Options#placement} uses. */
    private void addTimes(Row row, Shape sh, RunConfig cfg) {
        Placement pl = options.placement();
        for (int half = 0; half < row.time().length; half++) {
            boolean use = row.time().length == 1
                    || pl == Placement.BOTH
                    || (half == 0 ? pl == Placement.OUT_OF_PLACE : pl == Placement.IN_PLACE);
            if (use) {
                into.add(new Measurement(
                        at(row.line()),
                        sh.collective(),
                        sh.nRanks(),
                        sh.nNodes(),
                        sh.pipeOps(),
                        row.size(),
                        cfg,
                        row.time()[half],
                        Double.NaN,
                        sh.hardware()));
            }
        }
    }

    /** Warns about the rows of a run that were not used, and why. */
    private void warnUnused(Segment s, String where, Forcing f, Tally t) {
        if (s.forcedNone != null && !f.auto()) {
            into.warn(
                    s.forcedNone[1],
                    "the tuner plugin says its NCCL_TUNER_JAVA_FORCE=" + s.forcedNone[0]
                            + " applied to none of the calls (NCCL never offered it): this run measured NCCL's own pick, not "
                            + s.forcedNone[0] + "; "
                            + (t.forcedNoneRows > 0
                                    ? TextReport.count(t.forcedNoneRows, "row") + " not used (log with "
                                            + "NCCL_DEBUG_SUBSYS=TUNING to use them as what NCCL ran)"
                                    : "used what NCCL's selection lines say ran"));
        }
        if (t.incomplete > 0) {
            into.warn(
                    where,
                    TextReport.count(t.incomplete, "row") + " not used: the run forced " + f.label()
                            + (f.fa().ambiguous() ? " (NCCL_ALGO=" + f.fa().text() + ")" : "")
                            + (f.fp().ambiguous() ? " (NCCL_PROTO=" + f.fp().text() + ")" : "")
                            + (f.channelsAmbiguous()
                                    ? " (no single channel count: a policy can only set NCCL's maximum)"
                                    : "")
                            + " and no TUNING selection line tells the rest; force NCCL_ALGO and NCCL_PROTO, or log with "
                            + "NCCL_DEBUG_SUBSYS=TUNING");
        }
        if (t.contradicted > 0) {
            into.warn(
                    where,
                    TextReport.count(t.contradicted, "row") + " ran " + t.warnedRan
                            + " per NCCL's selection lines, not the forced "
                            + f.label() + "; used what NCCL ran");
        }
        if (t.zero > 0) {
            into.warn(
                    where,
                    TextReport.count(t.zero, "row")
                            + " of 0 bytes skipped (NCCL does not call the tuner for empty collectives)");
        }
    }

    private boolean refused(Row row, int nRanks) {
        boolean error = row.errorColumn();
        for (int half = 0; half < row.check().length; half++) {
            double v = row.check()[half];
            if (Double.isNaN(v)) {
                continue;
            }
            String name = row.check().length == 1 ? "" : (half == 0 ? " (out-of-place)" : " (in-place)");
            if (error) {
                double bound = errorBound(row.type(), nRanks);
                if (v > bound) {
                    into.refuse(
                            at(row.line()),
                            "error " + String.format(Locale.ROOT, "%.0e", v) + name
                                    + " is above nccl-tests' bound " + String.format(Locale.ROOT, "%.2g", bound)
                                    + " for "
                                    + row.type() + " with " + TextReport.count(nRanks, "rank")
                                    + ": results were wrong; row never used");
                    return true;
                }
            } else if (v > 0) {
                into.refuse(at(row.line()), "#wrong = " + fmt(v) + name + ": results were wrong; row never used");
                return true;
            }
        }
        return false;
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}

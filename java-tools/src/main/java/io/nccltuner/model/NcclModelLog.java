package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An NCCL INFO log, read for the cost model: the communicators whose latency/bandwidth tables it
 * holds and the selection lines of each.
 *
 * <p>Lines are {@code [timestamp] host:pid:tid [dev] NCCL INFO message} (src/debug.cc; the
 * timestamp is optional, 2.23+). What is read:
 *
 * <ul>
 *   <li>{@code NCCL version 2.28.9+cuda13.0}: the release of that process;
 *   <li>{@code comm 0x.. rank R nRanks N nNodes M localRanks L localRank l MNNVL x} (2.20+) and
 *       {@code ... comm 0x.. rank R nranks N ... - Init START}: the communicator the printing
 *       thread is initializing;
 *   <li>{@code N coll channels, ...}: its nChannels;
 *   <li>the table (src/graph/tuning.cc): blocks of an {@code Algorithm} row naming up to three
 *       algorithms (two blocks of three in 2.18 .. 2.22, three blocks with PAT from 2.23), a
 *       {@code Protocol} row, a {@code Max NThreads} row and one {@code lat/bw} row per
 *       collective; up to 2.17 one block whose single header row {@code Latency/AlgBw} names
 *       {@code Algo/Proto} pairs;
 *   <li>selection lines of the three {@link SelectionFormat}s, parsed by {@link SelectionLine}.
 * </ul>
 *
 * Several communicators stay apart: a table is assembled from the lines of the thread that prints
 * it (other threads' lines may interleave), belongs to the communicator that thread last announced,
 * and selection lines go to the latest table of the same host and process. A line that looks like a
 * table row or selection line but does not parse is reported as a {@link LogProblem}, never guessed.
 *
 * @param source file name, for messages
 * @param communicators communicators with a table, in log order
 * @param problems lines that could not be read or placed
 * @param lines number of lines read
 */
public record NcclModelLog(String source, List<Communicator> communicators, List<LogProblem> problems, int lines) {
    public NcclModelLog {
        communicators = List.copyOf(communicators);
        problems = List.copyOf(problems);
    }

    /**
     * Reads a log file.
     *
     * @param file the log
     * @return what it holds
     * @throws IOException if it cannot be read
     */
    public static NcclModelLog read(Path file) throws IOException {
        return parse(file.toString(), Files.readAllLines(file, StandardCharsets.ISO_8859_1));
    }

    /**
     * Parses log lines.
     *
     * @param source name for messages
     * @param lines the log's lines
     * @return what they hold
     */
    public static NcclModelLog parse(String source, List<String> lines) {
        Parser p = new Parser();
        for (int i = 0; i < lines.size(); i++) {
            p.line(i + 1, lines.get(i));
        }
        p.finish();
        return new NcclModelLog(source, p.done, p.problems, lines.size());
    }

    // ---- parser ----------------------------------------------------------------------------

    /** {@link LogProblem#text()} of a problem that sums up skipped lines rather than quoting one. */
    public static final String SKIPPED = "(skipped)";

    private static final Pattern PREFIX =
            Pattern.compile("^\\s*(?:\\[[^\\]]*\\]\\s*)?([^\\s:]+):(\\d+):(\\d+) \\[(-?\\d+)\\] NCCL INFO ?(.*)$");
    private static final Pattern EMBEDDED_PREFIX =
            Pattern.compile("([^\\s:]+):(\\d+):(\\d+) \\[(-?\\d+)\\] NCCL INFO ?(.*)$");
    private static final Pattern VERSION = Pattern.compile("^NCCL version (\\S+)");
    private static final Pattern COMM_SHAPE = Pattern.compile(
            "^comm (\\S+) rank (\\d+) nRanks (\\d+) nNodes (\\d+) localRanks (\\d+) localRank (\\d+)(?: MNNVL (\\d+))?");
    private static final Pattern INIT_START =
            Pattern.compile("\\bcomm (\\S+) rank (\\d+) nranks (\\d+) .*- Init START");
    private static final Pattern CHANNELS = Pattern.compile("^(\\d+) coll channels,");
    private static final Pattern ALGORITHM_ROW = Pattern.compile("^\\s*Algorithm\\s*\\|(.*)$");
    private static final Pattern LATENCY_ALGBW_ROW = Pattern.compile("^\\s*Latency/AlgBw\\s*\\|(.*)$");
    private static final Pattern PROTOCOL_ROW = Pattern.compile("^\\s*Protocol\\s*\\|(.*)$");
    private static final Pattern THREADS_ROW = Pattern.compile("^\\s*Max NThreads\\s*\\|(.*)$");
    private static final Pattern COLL_ROW = Pattern.compile("^\\s*([A-Za-z]+)\\s*\\|(.*)$");
    private static final Pattern ENTRY = Pattern.compile("^\\s*(\\S+)\\s*/\\s*(\\S+)\\s*$");
    private static final Pattern NUMBER = Pattern.compile("^-?\\d+(\\.\\d+)?$");

    /** State of one communicator being read. */
    private static final class CommState {
        final String host;
        final long pid;
        long tid; // the thread that printed its table, once it has one
        String commId;
        int rank = -1;
        int nRanks;
        int nNodes;
        boolean mnnvl;
        int nChannels;
        CostTable table;
        int tableLine;
        final List<LoggedSelection> selections = new ArrayList<>();
        Communicator built;

        /** A communicator first seen on this process and thread. */
        CommState(String host, long pid, long tid) {
            this.host = host;
            this.pid = pid;
            this.tid = tid;
        }
    }

    /** A table being assembled from one thread's lines. */
    private static final class TableState {
        final int firstLine;
        final List<Algorithm> algorithms = new ArrayList<>();
        final List<String[][]> rows = new ArrayList<>(); // per block: [collective][entries]
        final List<int[]> threads = new ArrayList<>();
        List<Algorithm> block;
        String[][] blockRows;
        int[] blockThreads;
        boolean protocolRowSeen;

        TableState(int firstLine) {
            this.firstLine = firstLine;
        }
    }

    private static final class Parser {
        final List<Communicator> done = new ArrayList<>();
        final List<LogProblem> problems = new ArrayList<>();
        final Map<String, NcclVersion> versionByProcess = new HashMap<>();
        NcclVersion lastVersion;
        final Map<String, CommState> commByThread = new HashMap<>();
        final Map<String, CommState> commById = new HashMap<>();
        final Map<String, TableState> tableByThread = new HashMap<>();
        final Map<String, CommState> lastTableByProcess = new HashMap<>();
        final List<CommState> withTables = new ArrayList<>();
        /** Threads whose table was abandoned at a problem: the rest of it is skipped with one line. */
        final Map<String, Skip> skipping = new HashMap<>();
        /** Per process without a table: its first selection line, and how many more were skipped. */
        final Map<String, int[]> orphanSelections = new java.util.LinkedHashMap<>();

        /** The rest of a table after its first problem. */
        static final class Skip {
            final int problemLine;
            int first;
            int last;
            int count;

            Skip(int problemLine) {
                this.problemLine = problemLine;
            }

            void skip(int no) {
                if (count++ == 0) {
                    first = no;
                }
                last = no;
            }
        }

        /** Reports a table line that does not parse and drops the table; its later lines are skipped. */
        void abandon(int no, String text, String reason, String thread) {
            problems.add(new LogProblem(no, text, reason + "; the rest of this table is skipped"));
            tableByThread.remove(thread);
            endSkip(thread);
            skipping.put(thread, new Skip(no));
        }

        /** Whether a table row came with no table open on its thread (then reported: "{@code row} outside a table"). */
        boolean outsideTable(TableState t, int no, String text, String row, String thread) {
            if (t != null && t.block != null) {
                return false;
            }
            outside(no, text, row + " outside a table", thread);
            return true;
        }

        void outside(int no, String text, String reason, String thread) {
            Skip sk = skipping.get(thread);
            if (sk != null) {
                sk.skip(no);
            } else {
                problems.add(new LogProblem(no, text, reason));
            }
        }

        void endSkip(String thread) {
            Skip sk = skipping.remove(thread);
            if (sk != null && sk.count > 0) {
                problems.add(new LogProblem(
                        sk.first,
                        SKIPPED,
                        sk.count + " more lines of the table abandoned at line " + sk.problemLine + " skipped (lines "
                                + sk.first + ".." + sk.last + ")"));
            }
        }

        void line(int no, String text) {
            Matcher m = PREFIX.matcher(text);
            if (!m.matches()) { // srun -l, mpirun --tag-output, Ray: as compile reads them
                m = PREFIX.matcher(LauncherPrefix.strip(text));
            }
            if (!m.matches()) {
                Matcher e = EMBEDDED_PREFIX.matcher(text);
                if (e.find() && looksLikeModelLine(e.group(5))) {
                    problems.add(new LogProblem(no, text, "NCCL line runs into other output; not used"));
                }
                return;
            }
            String host = m.group(1);
            long pid = Long.parseLong(m.group(2));
            long tid = Long.parseLong(m.group(3));
            String msg = m.group(5);
            String process = host + ":" + pid;
            String thread = process + ":" + tid;

            if (tableRow(no, text, msg, thread, host, pid, tid)) {
                return;
            }
            // Any other line of this thread ends a table it was printing, or one it was skipping.
            endSkip(thread);
            TableState open = tableByThread.remove(thread);
            if (open != null) {
                closeTable(open, thread, host, pid, tid);
            }

            Matcher v = VERSION.matcher(msg);
            if (v.find()) {
                try {
                    NcclVersion ver = NcclVersion.parse(v.group(1));
                    versionByProcess.put(process, ver);
                    lastVersion = ver;
                } catch (IllegalArgumentException ex) {
                    problems.add(new LogProblem(no, text, "unreadable NCCL version"));
                }
                return;
            }
            Matcher c = COMM_SHAPE.matcher(msg);
            if (c.find()) {
                CommState s = commRank(c, process, thread, host, pid, tid);
                s.nNodes = Integer.parseInt(c.group(4));
                s.mnnvl = c.group(7) != null && !c.group(7).equals("0");
                return;
            }
            Matcher st = INIT_START.matcher(msg);
            if (st.find()) {
                commRank(st, process, thread, host, pid, tid);
                return;
            }
            Matcher ch = CHANNELS.matcher(msg);
            if (ch.find()) {
                CommState s = commByThread.get(thread);
                if (s != null) {
                    s.nChannels = Integer.parseInt(ch.group(1));
                }
                return;
            }
            if (msg.contains(SelectionLine.MARKER)) {
                selection(no, text, msg, process);
            }
        }

        /** The communicator a COMM_SHAPE or INIT_START line names (group 1), with its rank and nRanks (groups 2, 3). */
        CommState commRank(Matcher m, String process, String thread, String host, long pid, long tid) {
            CommState s = comm(process, thread, m.group(1), host, pid, tid);
            s.rank = Integer.parseInt(m.group(2));
            s.nRanks = Integer.parseInt(m.group(3));
            return s;
        }

        CommState comm(String process, String thread, String id, String host, long pid, long tid) {
            String key = process + ":" + id;
            CommState s = commById.get(key);
            if (s == null || s.table != null) {
                s = new CommState(host, pid, tid);
                s.commId = id;
                commById.put(key, s);
            }
            commByThread.put(thread, s);
            return s;
        }

        /** A table line's number and text, and the thread that printed it. */
        record At(int no, String text, String thread, String host, long pid, long tid) {}

        void abandon(At at, String reason) {
            abandon(at.no(), at.text(), reason, at.thread());
        }

        /** Reads a line of a cost table (one of its row kinds) on its thread; false when it is none. */
        boolean tableRow(int no, String text, String msg, String thread, String host, long pid, long tid) {
            At at = new At(no, text, thread, host, pid, tid);
            Matcher m;
            if ((m = LATENCY_ALGBW_ROW.matcher(msg)).matches()) {
                latencyAlgBwRow(at, cells(m.group(1)));
            } else if ((m = ALGORITHM_ROW.matcher(msg)).matches()) {
                algorithmRow(at, m.group(1));
            } else if ((m = PROTOCOL_ROW.matcher(msg)).matches()) {
                protocolRow(at, cells(m.group(1)));
            } else if ((m = THREADS_ROW.matcher(msg)).matches()) {
                threadsRow(at, cells(m.group(1)));
            } else if ((m = COLL_ROW.matcher(msg)).matches()
                    && Collective.parse(m.group(1)) != null
                    && m.group(2).contains("/")) {
                collectiveRow(at, Collective.parse(m.group(1)), cells(m.group(2)));
            } else {
                return false;
            }
            return true;
        }

        /** Up to 2.17: one header row of "Algo/Proto" cells, all algorithms in one block; starts a table. */
        void latencyAlgBwRow(At at, String[] cells) {
            List<Algorithm> algos = new ArrayList<>();
            for (int i = 0; i < cells.length; i++) {
                String[] ap = cells[i].split("/");
                Algorithm alg = ap.length == 2 ? Algorithm.parse(ap[0].trim()) : null;
                Protocol pro = ap.length == 2 ? Protocol.parse(ap[1].trim()) : null;
                if (alg == null || pro != Protocol.ofId(i % 3) || alg.id() != i / 3) {
                    abandon(at, "unexpected column '" + cells[i] + "' in table header");
                    return;
                }
                if (i % 3 == 0) {
                    algos.add(alg);
                }
            }
            if (cells.length == 0 || cells.length % 3 != 0) {
                abandon(at, "table header has " + cells.length + " columns");
                return;
            }
            TableState prev = tableByThread.remove(at.thread());
            if (prev != null) {
                closeTable(prev, at.thread(), at.host(), at.pid(), at.tid());
            }
            endSkip(at.thread());
            TableState t = new TableState(at.no());
            tableByThread.put(at.thread(), t);
            t.algorithms.addAll(algos);
            t.block = algos;
            t.blockRows = new String[Collective.COUNT][];
            t.protocolRowSeen = true;
            t.rows.add(t.blockRows);
        }

        /**
         * An {@code Algorithm} row: starts a table when it names algorithm 0 (closing the thread's open
         * one), else the next block of the open table, which must continue its algorithms.
         */
        void algorithmRow(At at, String names) {
            String thread = at.thread();
            List<Algorithm> algos = new ArrayList<>();
            for (String name : names.split("\\|")) {
                if (name.isBlank()) {
                    continue;
                }
                Algorithm alg = Algorithm.parse(name.trim());
                if (alg == null) {
                    abandon(at, "unknown algorithm '" + name.trim() + "' in table header");
                    return;
                }
                algos.add(alg);
            }
            TableState t = tableByThread.get(thread);
            if (t != null && (algos.isEmpty() || algos.get(0).id() == 0)) {
                closeTable(tableByThread.remove(thread), thread, at.host(), at.pid(), at.tid());
                t = null;
            }
            if (t == null) {
                if (!algos.isEmpty() && algos.get(0).id() == 0) {
                    endSkip(thread); // a new table
                }
                t = new TableState(at.no());
                tableByThread.put(thread, t);
            } else if (!blockDone(t)) {
                abandon(at, "table block started before the previous one was complete");
                return;
            }
            if (algos.isEmpty() || algos.get(0).id() != t.algorithms.size()) {
                if (t.algorithms.isEmpty() && skipping.containsKey(thread)) {
                    tableByThread.remove(thread);
                    skipping.get(thread).skip(at.no()); // a later block of the table abandoned before
                    return;
                }
                abandon(
                        at,
                        "table header does not continue the algorithms " + t.algorithms
                                + " of the table started at line " + t.firstLine);
                return;
            }
            t.algorithms.addAll(algos);
            t.block = algos;
            t.blockRows = new String[Collective.COUNT][];
            t.blockThreads = null;
            t.protocolRowSeen = false;
            t.rows.add(t.blockRows);
        }

        /** A {@code Protocol} row: LL, LL128, Simple for each algorithm of the block. */
        void protocolRow(At at, String[] names) {
            TableState t = tableByThread.get(at.thread());
            if (outsideTable(t, at.no(), at.text(), "Protocol row", at.thread())) {
                return;
            }
            for (int i = 0; i < names.length; i++) {
                if (Protocol.parse(names[i]) != Protocol.ofId(i % 3)) {
                    abandon(at, "unexpected protocol '" + names[i] + "' in column " + (i + 1));
                    return;
                }
            }
            if (names.length < 3 * t.block.size()) {
                abandon(at, "Protocol row has " + names.length + " columns for " + t.block.size() + " algorithms");
                return;
            }
            t.protocolRowSeen = true;
        }

        /** A {@code Max NThreads} row: one integer per algorithm and protocol of the block. */
        void threadsRow(At at, String[] cells) {
            TableState t = tableByThread.get(at.thread());
            if (outsideTable(t, at.no(), at.text(), "Max NThreads row", at.thread())
                    || !fillsBlock(at, t, cells, "Max NThreads row", "values")) {
                return;
            }
            int[] v = new int[cells.length];
            for (int i = 0; i < cells.length; i++) {
                if (!cells[i].matches("-?\\d+")) {
                    abandon(at, "Max NThreads value '" + cells[i] + "' is not an integer");
                    return;
                }
                v[i] = Integer.parseInt(cells[i]);
            }
            t.blockThreads = v;
            t.threads.add(v);
        }

        /** A collective's row: {@code latency/bandwidth} per algorithm and protocol of the block, once per block. */
        void collectiveRow(At at, Collective coll, String[] cells) {
            TableState t = tableByThread.get(at.thread());
            if (outsideTable(t, at.no(), at.text(), "latency/bandwidth row", at.thread())
                    || !fillsBlock(at, t, cells, coll + " row", "entries")) {
                return;
            }
            for (String cell : cells) {
                Matcher e = ENTRY.matcher(cell);
                if (!e.matches()
                        || !NUMBER.matcher(e.group(1)).matches()
                        || !NUMBER.matcher(e.group(2)).matches()) {
                    abandon(at, "entry '" + cell.trim() + "' is not latency/bandwidth");
                    return;
                }
            }
            if (t.blockRows[coll.id()] != null) {
                abandon(at, coll + " row appears twice in one table block");
                return;
            }
            t.blockRows[coll.id()] = cells;
        }

        /**
         * Whether a row has one cell per protocol (3) of each algorithm of its block; a row that does not
         * abandons the table: "{@code row} has N {@code unit} for M algorithms".
         */
        boolean fillsBlock(At at, TableState t, String[] cells, String row, String unit) {
            if (cells.length == 3 * t.block.size()) {
                return true;
            }
            abandon(at, row + " has " + cells.length + " " + unit + " for " + t.block.size() + " algorithms");
            return false;
        }

        static boolean blockDone(TableState t) {
            if (t.blockRows == null) {
                return false;
            }
            for (String[] r : t.blockRows) {
                if (r == null) {
                    return false;
                }
            }
            return true;
        }

        static String[] cells(String s) {
            List<String> out = new ArrayList<>();
            for (String c : s.split("\\|")) {
                if (!c.isBlank()) {
                    out.add(c.trim());
                }
            }
            return out.toArray(new String[0]);
        }

        void closeTable(TableState t, String thread, String host, long pid, long tid) {
            if (!blockDone(t)) {
                problems.add(new LogProblem(
                        t.firstLine, "(table)", "table ends before every collective row of its last block"));
                return;
            }
            CostTable.Builder b = CostTable.builder(t.algorithms.size());
            int base = 0;
            for (int blk = 0; blk < t.rows.size(); blk++) {
                String[][] rows = t.rows.get(blk);
                int nAlgo = rows[0].length / 3;
                for (Collective c : Collective.values()) {
                    for (int k = 0; k < rows[c.id()].length; k++) {
                        Matcher e = ENTRY.matcher(rows[c.id()][k]);
                        e.matches();
                        AlgoProto ap = new AlgoProto(Algorithm.ofId(base + k / 3), Protocol.ofId(k % 3));
                        b.entry(c, ap, e.group(1), e.group(2));
                    }
                }
                base += nAlgo;
            }
            int a0 = 0;
            for (int[] th : t.threads) {
                for (int k = 0; k < th.length; k++) {
                    b.maxThreads(new AlgoProto(Algorithm.ofId(a0 + k / 3), Protocol.ofId(k % 3)), th[k]);
                }
                a0 += th.length / 3;
            }
            CommState s = commByThread.get(thread);
            if (s == null || s.table != null) {
                s = new CommState(host, pid, tid);
                commByThread.put(thread, s);
            }
            s.table = b.build();
            s.tableLine = t.firstLine;
            s.tid = tid;
            withTables.add(s);
            lastTableByProcess.put(host + ":" + pid, s);
        }

        void selection(int no, String text, String msg, String process) {
            LoggedSelection sel;
            try {
                sel = SelectionLine.parse(msg, no).orElseThrow();
            } catch (IllegalArgumentException e) {
                problems.add(new LogProblem(no, text, e.getMessage()));
                return;
            }
            CommState s = lastTableByProcess.get(process);
            if (s == null) {
                int[] o = orphanSelections.get(process);
                if (o == null) {
                    problems.add(new LogProblem(no, text, "selection line before any table of process " + process));
                    orphanSelections.put(process, new int[] {0, 0, 0}); // more, first more, last more
                } else if (o[0]++ == 0) {
                    o[1] = no;
                    o[2] = no;
                } else {
                    o[2] = no;
                }
                return;
            }
            s.selections.add(sel);
        }

        static boolean looksLikeModelLine(String msg) {
            return msg.contains(SelectionLine.MARKER)
                    || ALGORITHM_ROW.matcher(msg).matches()
                    || PROTOCOL_ROW.matcher(msg).matches()
                    || THREADS_ROW.matcher(msg).matches()
                    || (COLL_ROW.matcher(msg).matches() && msg.contains("/"));
        }

        void finish() {
            for (String thread : new ArrayList<>(skipping.keySet())) {
                endSkip(thread);
            }
            for (var e : orphanSelections.entrySet()) {
                int[] o = e.getValue();
                if (o[0] > 0) {
                    problems.add(new LogProblem(
                            o[1],
                            SKIPPED,
                            o[0] + " more selection lines of process " + e.getKey()
                                    + " before any of its tables skipped (lines " + o[1] + ".." + o[2] + ")"));
                }
            }
            problems.sort(java.util.Comparator.comparingInt(LogProblem::line));
            for (Map.Entry<String, TableState> e : new ArrayList<>(tableByThread.entrySet())) {
                TableState t = e.getValue();
                String[] k = e.getKey().split(":");
                int n = k.length;
                closeTable(
                        t,
                        e.getKey(),
                        String.join(":", java.util.Arrays.copyOf(k, n - 2)),
                        Long.parseLong(k[n - 2]),
                        Long.parseLong(k[n - 1]));
            }
            tableByThread.clear();
            int index = 1;
            for (CommState s : withTables) {
                NcclVersion v = versionByProcess.get(s.host + ":" + s.pid);
                if (v == null && new java.util.HashSet<>(versionByProcess.values()).size() == 1) {
                    v = lastVersion; // one release in the whole log
                }
                done.add(new Communicator(
                        index++,
                        s.host,
                        s.pid,
                        s.tid,
                        s.commId,
                        s.rank,
                        s.nRanks,
                        s.nNodes,
                        s.mnnvl,
                        s.nChannels,
                        v,
                        s.table,
                        s.tableLine,
                        s.selections));
            }
        }
    }
}

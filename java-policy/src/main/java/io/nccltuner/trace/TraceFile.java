package io.nccltuner.trace;

import io.nccltuner.policy.Collective;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A captured tuner trace in the project's CSV format (written by the logging-only tuner under
 * gpu/, described in data/traces/README.md):
 *
 * <pre>
 * init,&lt;comm&gt;,&lt;nRanks&gt;,&lt;nNodes&gt;
 * get,&lt;comm&gt;,&lt;nRanks&gt;,&lt;nNodes&gt;,&lt;collType&gt;,&lt;nBytes&gt;,&lt;numPipeOps&gt;,&lt;numAlgo&gt;,&lt;numProto&gt;,&lt;nChannelsIn&gt;,&lt;numAlgo*numProto costs&gt;
 * destroy,&lt;comm&gt;
 * </pre>
 *
 * Lines starting with '#' and blank lines are skipped. Costs are microseconds, algorithm-major,
 * -1 for unavailable.
 *
 * @param source the file read, or null
 * @param events every row in file order (init, get, destroy)
 */
public record TraceFile(Path source, List<Event> events) {
    public TraceFile {
        events = List.copyOf(events);
    }

    /** One row of a trace. */
    public sealed interface Event permits Init, Get, Destroy {
        /** @return line number in the file (1-based) */
        int line();
    }

    /**
     * {@code init,<comm>,<nRanks>,<nNodes>}: NCCL called the tuner's init.
     *
     * @param line line number
     * @param comm the trace's communicator number
     * @param nRanks ranks
     * @param nNodes nodes
     */
    public record Init(int line, int comm, int nRanks, int nNodes) implements Event {}

    /**
     * A {@code get} row: NCCL called getCollInfo.
     *
     * @param call the call
     */
    public record Get(TraceCall call) implements Event {
        @Override
        public int line() {
            return call.line();
        }
    }

    /**
     * {@code destroy,<comm>}: NCCL called the tuner's destroy.
     *
     * @param line line number
     * @param comm the trace's communicator number
     */
    public record Destroy(int line, int comm) implements Event {}

    /** @return the getCollInfo calls in file order */
    public List<TraceCall> calls() {
        List<TraceCall> out = new ArrayList<>();
        for (Event e : events) {
            if (e instanceof Get g) {
                out.add(g.call());
            }
        }
        return out;
    }

    /**
     * Reads a trace.
     *
     * @param file the CSV file
     * @return the calls
     * @throws IOException if the file cannot be read
     * @throws IllegalArgumentException naming {@code file:line} for a row that does not parse, and
     *     {@code file:line:column} for a byte that is not UTF-8
     */
    public static TraceFile read(Path file) throws IOException {
        String text;
        try { // strict UTF-8, a stray byte named by file:line:column
            text = io.nccltuner.policy.PolicyText.decode(file.toString(), Files.readAllBytes(file));
        } catch (io.nccltuner.policy.InputException e) {
            throw new BadRow(
                    e.where(),
                    new IllegalArgumentException(
                            e.getMessage().substring(e.where().length() + 2)));
        }
        return parse(file, text.lines().toList());
    }

    /**
     * Whether a line is one of a trace's, so that a command handed a trace where it reads another
     * format can say so: the header comment ({@code # event,comm,nRanks,...}) or a row whose event
     * is init, get or destroy and whose communicator is a whole number.
     *
     * @param line one line of a file
     * @return whether it reads as a trace line
     */
    public static boolean looksLike(String line) {
        String t = line.trim();
        if (t.startsWith("#")) {
            return t.substring(1).strip().startsWith("event,comm,");
        }
        String[] f = t.split(",", -1);
        return f.length >= 2 && List.of("init", "get", "destroy").contains(f[0]) && f[1].matches("[0-9]+");
    }

    /**
     * Parses trace lines.
     *
     * @param source file name used in error messages, may be null
     * @param lines the file's lines
     * @return the calls
     * @throws BadRow naming {@code file:line} for a row that does not parse
     */
    public static TraceFile parse(Path source, List<String> lines) {
        List<Event> events = new ArrayList<>();
        String name = source == null ? "trace" : source.toString();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split(",", -1);
            try {
                switch (f[0]) {
                    case "init" -> {
                        expectFields(f, 4);
                        events.add(new Init(
                                i + 1, integer(f, 1, "comm"), integer(f, 2, "nRanks"), integer(f, 3, "nNodes")));
                    }
                    case "destroy" -> {
                        expectFields(f, 2);
                        events.add(new Destroy(i + 1, integer(f, 1, "comm")));
                    }
                    case "get" -> events.add(new Get(parseGet(i + 1, f)));
                    default -> throw new IllegalArgumentException("unknown event '" + f[0] + "'");
                }
            } catch (RuntimeException e) {
                throw new BadRow(io.nccltuner.policy.InputException.at(name, i + 1), e);
            }
        }
        return new TraceFile(source, events);
    }

    /** A row that does not parse: the message is {@code file:line: what is wrong}. */
    public static final class BadRow extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final String where;
        private final String reason;

        BadRow(String where, RuntimeException cause) {
            super(where + ": " + cause.getMessage(), cause);
            this.where = where;
            this.reason = cause.getMessage();
        }

        /** @return {@code file:line} of the row */
        public String where() {
            return where;
        }

        /** @return what is wrong with it, without the place */
        public String reason() {
            return reason;
        }
    }

    private static void expectFields(String[] f, int n) {
        if (f.length != n) {
            throw new IllegalArgumentException("a " + f[0] + " row has " + n + " fields, this one " + f.length);
        }
    }

    /** Field {@code i} (0-based) as an int, or an exception naming the field and what it expects. */
    private static int integer(String[] f, int i, String name) {
        String s = f[i].trim();
        try {
            return io.nccltuner.policy.AsciiNumbers.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "field " + (i + 1) + " (" + name + ") '" + s + "' is not a whole number");
        }
    }

    private static TraceCall parseGet(int lineNo, String[] f) {
        if (f.length < 10) {
            throw new IllegalArgumentException("a get row has at least 10 fields, this one " + f.length);
        }
        int collType = integer(f, 4, "collType");
        Collective coll = Collective.ofId(collType);
        if (coll == null) {
            throw new IllegalArgumentException("collType " + collType + " is not a collective");
        }
        int numAlgo = integer(f, 7, "numAlgo");
        int numProto = integer(f, 8, "numProto");
        if (numAlgo < 1 || numAlgo > 7 || numProto < 1 || numProto > 3) {
            throw new IllegalArgumentException("numAlgo " + numAlgo + " / numProto " + numProto + " out of range");
        }
        int n = numAlgo * numProto;
        if (f.length != 10 + n) {
            throw new IllegalArgumentException("expected " + n + " costs, found " + (f.length - 10));
        }
        float[] costs = new float[n];
        double[] tol = new double[n];
        for (int k = 0; k < n; k++) {
            String s = f[10 + k].trim();
            BigDecimal d;
            try {
                if (s.chars().anyMatch(c -> c > 0x7f)) { // BigDecimal reads any script's digits
                    throw new NumberFormatException(s);
                }
                d = new BigDecimal(s); // also refuses NaN, Infinity and Java's float suffixes
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "field " + (11 + k) + " (cost of " + io.nccltuner.policy.Algorithm.ofId(k / numProto)
                                + "/" + io.nccltuner.policy.Protocol.ofId(k % numProto) + ") '" + s
                                + "' is not a number; costs are microseconds, -1 where NCCL does not offer the entry");
            }
            costs[k] = Float.parseFloat(s);
            if (!Float.isFinite(costs[k])) { // 1e400, 1e39: beyond a float, NCCL's cost table's type
                throw new IllegalArgumentException("field " + (11 + k) + " (cost of "
                        + io.nccltuner.policy.Algorithm.ofId(k / numProto) + "/"
                        + io.nccltuner.policy.Protocol.ofId(k % numProto) + ") '" + s
                        + "' is beyond a float (NCCL's cost table holds floats, microseconds; -1 where NCCL"
                        + " does not offer the entry)");
            }
            tol[k] = Math.pow(10, -d.scale()) / 2;
        }
        long nBytes;
        try {
            nBytes = io.nccltuner.policy.AsciiNumbers.parseUnsignedLong(f[5].trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("field 6 (nBytes) '" + f[5].trim() + "' is not a whole number of bytes");
        }
        return new TraceCall(
                lineNo,
                integer(f, 1, "comm"),
                integer(f, 2, "nRanks"),
                integer(f, 3, "nNodes"),
                coll,
                nBytes,
                integer(f, 6, "numPipeOps"),
                numAlgo,
                numProto,
                integer(f, 9, "nChannelsIn"),
                costs,
                tol);
    }
}

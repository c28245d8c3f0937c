package io.nccltuner.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nccltuner.compile.RunConfig;
import io.nccltuner.engine.LogField;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.SizeGrid;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One process's decision log ({@code NCCL_TUNER_JAVA_LOG}, JSON lines), as the engine writes it:
 * {@code "type":"comm"} lines (one per communicator, at destroy or exit: host, pid, policy,
 * profile, sha256, mode, nRanks, nNodes, calls, ruleHits, applied, unaggregated, at, commScope),
 * {@code "type":"aggregate"} lines (rule hits per collective, size-grid bucket, NCCL's pick and the
 * policy's pick, {@code io.nccltuner.engine.ShadowAggregate}) and, with
 * {@code NCCL_TUNER_JAVA_LOG_CALLS=1}, per-call records (no {@code type}). Per-call records are
 * counted into aggregates of their own only for communicators without aggregate lines (a log of an
 * older plugin), so no call counts twice. Lines of other types ({@code measured}, {@code profiled}:
 * the canary's, docs/canary.md) go to a {@link LineSink} as they are read ({@link CanaryReport}), so
 * one pass over the file serves both reports and nothing per line is kept here.
 *
 * @param file the file
 * @param host host name from its comm lines ("?" without any)
 * @param pid process id from its comm lines (0 without any)
 * @param comms one per communicator
 * @param aggregates rule hits by communicator, collective, bucket and picks
 */
public record DecisionLogFile(Path file, String host, long pid, List<Comm> comms, List<Aggregate> aggregates) {
    /**
     * A communicator's comm line.
     *
     * @param comm the engine's handle (unique within one process)
     * @param policy policy name
     * @param profile profile name
     * @param sha256 compiled table digest
     * @param mode enforce, shadow or off
     * @param nRanks ranks
     * @param nNodes nodes
     * @param calls getCollInfo calls
     * @param ruleHits calls a rule covered
     * @param applied decisions written to NCCL's table
     * @param unaggregated rule hits not broken down (the aggregate table was full)
     * @param at "destroy" or "exit"
     * @param commScope "job" when {@code comm} is NCCL's commId (tuner v5+, the same on every rank of
     *     the communicator), "process" when it is the engine's handle (tuner v3/v4), null when the
     *     line does not say (an older plugin)
     */
    public record Comm(
            long comm,
            String policy,
            String profile,
            String sha256,
            String mode,
            long nRanks,
            long nNodes,
            long calls,
            long ruleHits,
            long applied,
            long unaggregated,
            String at,
            String commScope) {
        /** @return whether {@link #comm} names the communicator across ranks (NCCL's commId) */
        public boolean jobWide() {
            return "job".equals(commScope);
        }
    }

    /**
     * Rule hits of one combination.
     *
     * @param comm the communicator handle
     * @param collective the collective
     * @param fromBytes the bucket's first size
     * @param toBytes its end (exclusive), -1 for none
     * @param ncclPick NCCL's pick ("RING/LL"), or "none"
     * @param policyPick the policy's pick ("TREE/SIMPLE")
     * @param channels channels the policy sets (0 = NCCL decides)
     * @param count rule hits
     */
    public record Aggregate(
            long comm,
            Collective collective,
            long fromBytes,
            long toBytes,
            String ncclPick,
            String policyPick,
            int channels,
            long count) {
        /** @return the policy's pick with its channels, "TREE/SIMPLE" or "RING/LL/8ch" ({@link #pickLabel}) */
        public String policyLabel() {
            return pickLabel(policyPick, channels);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Receives the lines this class does not keep, as they are read. */
    @FunctionalInterface
    public interface LineSink {
        /**
         * One line.
         *
         * @param type its {@code type} ("measured", "profiled", or a later type)
         * @param line the parsed object
         * @param where "file:line", for messages
         * @throws InputException when the line is malformed for its type
         */
        void line(String type, JsonNode line, String where) throws InputException;
    }

    /** @return "host:pid" (or the file name when the log has no comm lines) */
    public String rank() {
        return pid == 0 ? file.getFileName().toString() : host + ":" + pid;
    }

    /**
     * Reads one decision log.
     *
     * @param file the JSON-lines file
     * @return what it says
     * @throws IOException if it cannot be read
     * @throws InputException for a line that is not a JSON object, or an unknown collective
     */
    public static DecisionLogFile read(Path file) throws IOException, InputException {
        return read(file, null);
    }

    /**
     * Reads one decision log, handing the lines of other types to a sink.
     *
     * @param file the JSON-lines file
     * @param sink receives every line whose type is neither comm nor aggregate nor a per-call record
     *     (null: they are ignored)
     * @return what it says
     * @throws IOException if it cannot be read
     * @throws InputException for a line that is not a JSON object, an unknown collective, or what the
     *     sink refuses
     */
    public static DecisionLogFile read(Path file, LineSink sink) throws IOException, InputException {
        return read(file, sink, w -> {});
    }

    /** The line types the reports read ({@code measured} and {@code profiled} through the sink). */
    static final Set<String> KNOWN_TYPES =
            Set.of(LogField.TYPE_COMM, LogField.TYPE_AGGREGATE, LogField.TYPE_MEASURED, LogField.TYPE_PROFILED);

    /**
     * Reads one decision log, handing the lines of other types to a sink and saying once, with
     * their count and the first one's {@code file:line}, that lines of a type no report reads were
     * skipped ({@code warning: t.jsonl:7: 3 lines of an unknown type ('foo' first) skipped; ...}).
     *
     * @param file the JSON-lines file
     * @param sink receives every line whose type is neither comm nor aggregate nor a per-call record
     *     (null: they are ignored)
     * @param warnings receives the warning, at most once per file
     * @return what it says
     * @throws IOException if it cannot be read
     * @throws InputException for a line that is not a JSON object, an unknown collective, a size or
     *     count that is not a whole number in range ({@code file:line: nBytes -1 is not ...}), or what
     *     the sink refuses
     */
    public static DecisionLogFile read(Path file, LineSink sink, java.util.function.Consumer<String> warnings)
            throws IOException, InputException {
        long unknown = 0;
        String firstUnknown = null;
        List<Comm> comms = new ArrayList<>();
        List<Aggregate> aggs = new ArrayList<>();
        Map<PerCall, long[]> perCall = new LinkedHashMap<>();
        String host = "?";
        long pid = 0;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode j = object(line, file, n);
                String type = j.path(LogField.TYPE).asText("");
                switch (type) {
                    case LogField.TYPE_COMM -> {
                        host = j.path(LogField.HOST).asText(host);
                        pid = j.path(LogField.PID).asLong(pid);
                        comms.add(comm(j, InputException.at(file, n)));
                    }
                    case LogField.TYPE_AGGREGATE -> aggs.add(aggregate(j, file, n));
                    case "" -> {
                        if (j.has(LogField.POLICY_PICK)) { // else some other JSON line (a workload log); not a decision
                            perCall.computeIfAbsent(perCall(j, file, n), k -> new long[1])[0]++;
                        }
                    }
                    default -> {
                        if (!KNOWN_TYPES.contains(type) && unknown++ == 0) {
                            firstUnknown = InputException.at(file, n) + ": " + "'" + type + "'";
                        }
                        if (sink != null) {
                            sink.line(type, j, InputException.at(file, n));
                        }
                    }
                }
            }
        }
        if (unknown > 0) {
            int c = firstUnknown.indexOf(": '");
            warnings.accept("warning: " + firstUnknown.substring(0, c) + ": " + unknown + " line"
                    + (unknown == 1 ? "" : "s") + " of an unknown type (" + firstUnknown.substring(c + 2)
                    + " first) skipped; the reports read the types "
                    + String.join(", ", new java.util.TreeSet<>(KNOWN_TYPES))
                    + " and per-call records (a newer plugin's log?)");
        }
        aggs.addAll(perCallAggregates(perCall, aggs));
        return new DecisionLogFile(file, host, pid, List.copyOf(comms), List.copyOf(aggs));
    }

    /** What a tuner trace handed as a decision log is told (after its {@code file:line}). */
    public static final String TRACE_NOT_LOG =
            "a tuner trace (init/get/destroy rows), not a decision log: replay --trace"
                    + " and try --trace read it; report reads the decision logs a job writes (NCCL_TUNER_JAVA_LOG) or"
                    + " try --keep-logs DIR keeps";

    /**
     * A line parsed; an InputException at file:line unless it is a JSON object ({@link #TRACE_NOT_LOG}
     * for a tuner trace's line).
     */
    private static JsonNode object(String line, Path file, int n) throws InputException {
        JsonNode j;
        try {
            j = JSON.readTree(line);
        } catch (IOException e) {
            j = null;
        }
        if (j == null || !j.isObject()) {
            if (io.nccltuner.trace.TraceFile.looksLike(line)) {
                throw new InputException(InputException.at(file, n), TRACE_NOT_LOG);
            }
            throw new InputException(InputException.at(file, n), "not a JSON object (a decision log has one per line)");
        }
        return j;
    }

    private static Comm comm(JsonNode j, String where) throws InputException {
        return new Comm(
                j.path(LogField.COMM).asLong(),
                j.path(LogField.POLICY).asText(null),
                j.path(LogField.PROFILE).asText(null),
                j.path(LogField.SHA256).asText(null),
                j.path(LogField.MODE).asText(null),
                count(j, LogField.N_RANKS, where),
                count(j, LogField.N_NODES, where),
                count(j, LogField.CALLS, where),
                count(j, LogField.RULE_HITS, where),
                count(j, LogField.APPLIED, where),
                count(j, LogField.UNAGGREGATED, where),
                j.path(LogField.AT).asText(null),
                j.path(LogField.COMM_SCOPE).asText(null));
    }

    private static Aggregate aggregate(JsonNode j, Path file, int n) throws InputException {
        String where = InputException.at(file, n);
        JsonNode to = j.path(LogField.TO_BYTES);
        return new Aggregate(
                j.path(LogField.COMM).asLong(),
                collective(j, file, n),
                bytes(j, LogField.N_BYTES, where),
                to.isMissingNode() || (to.isIntegralNumber() && to.asLong() == -1)
                        ? -1
                        : bytes(j, LogField.TO_BYTES, where),
                ncclPick(j),
                j.path(LogField.POLICY_PICK).asText(),
                channels(j, where),
                count(j, LogField.COUNT, where));
    }

    /** A per-call record's decision, its size as its size-grid bucket. */
    private record PerCall(
            long comm, Collective collective, int bucket, String ncclPick, String policyPick, int channels) {}

    private static PerCall perCall(JsonNode j, Path file, int n) throws InputException {
        String where = InputException.at(file, n);
        long nBytes = bytes(j, LogField.N_BYTES, where);
        return new PerCall(
                j.path(LogField.COMM).asLong(),
                collective(j, file, n),
                SizeGrid.bucket(nBytes),
                ncclPick(j),
                j.path(LogField.POLICY_PICK).asText(),
                channels(j, where));
    }

    private static final java.math.BigInteger TWO_64 = java.math.BigInteger.ONE.shiftLeft(64);

    /**
     * A size field (nBytes, toBytes): absent 0; else a whole JSON number 0..2^64 - 1 (NCCL's size_t).
     *
     * @param j the line
     * @param field the field's name
     * @param where {@code file:line}, for the message
     * @return the bytes as an unsigned long
     * @throws InputException {@code file:line: nBytes -1 is not a size in bytes (a whole number
     *     0..18446744073709551615)} for anything else
     */
    public static long bytes(JsonNode j, String field, String where) throws InputException {
        JsonNode v = j.path(field);
        if (v.isMissingNode()) {
            return 0;
        }
        if (!v.isIntegralNumber()
                || v.bigIntegerValue().signum() < 0
                || v.bigIntegerValue().compareTo(TWO_64) >= 0) {
            throw new InputException(
                    where,
                    field + " " + v + " is not a size in bytes (a whole number 0.." + Long.toUnsignedString(-1L) + ")");
        }
        return v.bigIntegerValue().longValue();
    }

    /**
     * A count field (calls, ruleHits, count, nRanks, ...): absent 0; else a whole JSON number
     * 0..2^63 - 1.
     *
     * @param j the line
     * @param field the field's name
     * @param where {@code file:line}, for the message
     * @return the count
     * @throws InputException {@code file:line: calls -3 is not a count (a whole number
     *     0..9223372036854775807)} for anything else (a negative count, 2^64, text, a fraction)
     */
    public static long count(JsonNode j, String field, String where) throws InputException {
        JsonNode v = j.path(field);
        if (v.isMissingNode()) {
            return 0;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
            throw new InputException(
                    where, field + " " + v + " is not a count (a whole number 0.." + Long.MAX_VALUE + ")");
        }
        return v.asLong();
    }

    /** The channels a line names: absent 0 (NCCL decides); else 0..64. */
    private static int channels(JsonNode j, String where) throws InputException {
        long c = count(j, LogField.CHANNELS, where);
        if (c > io.nccltuner.policy.PolicyLoader.MAX_CHANNELS) {
            throw new InputException(
                    where, "channels " + c + " is outside 0.." + io.nccltuner.policy.PolicyLoader.MAX_CHANNELS);
        }
        return (int) c;
    }

    /** NCCL's pick of a line ("RING/LL"), "none" when null or absent. */
    private static String ncclPick(JsonNode j) {
        return j.path(LogField.NCCL_PICK).isNull()
                ? "none"
                : j.path(LogField.NCCL_PICK).asText("none");
    }

    /**
     * The per-call records counted into aggregates, for the communicators without aggregate lines
     * (a log of an older plugin), so that no call counts twice.
     */
    private static List<Aggregate> perCallAggregates(Map<PerCall, long[]> perCall, List<Aggregate> aggs) {
        Set<Long> aggregated = new HashSet<>();
        aggs.forEach(a -> aggregated.add(a.comm()));
        List<Aggregate> out = new ArrayList<>();
        for (var e : perCall.entrySet()) {
            PerCall k = e.getKey();
            if (aggregated.contains(k.comm())) {
                continue;
            }
            int b = k.bucket();
            out.add(new Aggregate(
                    k.comm(),
                    k.collective(),
                    SizeGrid.lowerBound(b),
                    SizeGrid.upperBound(b),
                    k.ncclPick(),
                    k.policyPick(),
                    k.channels(),
                    e.getValue()[0]));
        }
        return out;
    }

    /**
     * How the reports spell a decided configuration with its channel count ({@link
     * RunConfig#withChannels}, as a measured configuration's label).
     *
     * @param pick the configuration, "RING/SIMPLE"
     * @param channels its channel count, 0 when NCCL decides it
     * @return "RING/SIMPLE" (0 channels) or "RING/SIMPLE/8ch"
     */
    public static String pickLabel(String pick, int channels) {
        return RunConfig.withChannels(pick, channels);
    }

    private static Collective collective(JsonNode j, Path file, int line) throws InputException {
        return collective(j, InputException.at(file, line));
    }

    /** The line's collective ("AllReduce", or NCCL's ncclFunc_t id); an InputException at where otherwise. */
    static Collective collective(JsonNode j, String where) throws InputException {
        String s = j.path(LogField.COLLECTIVE).asText("");
        Collective c = Collective.parse(s);
        if (c == null) {
            try {
                c = Collective.ofId(Integer.parseInt(s));
            } catch (NumberFormatException e) {
                c = null;
            }
        }
        if (c == null) {
            throw new InputException(where, "unknown collective '" + s + "'");
        }
        return c;
    }
}

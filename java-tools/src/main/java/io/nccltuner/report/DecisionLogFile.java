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
                        comms.add(comm(j));
                    }
                    case LogField.TYPE_AGGREGATE -> aggs.add(aggregate(j, file, n));
                    case "" -> {
                        if (j.has(LogField.POLICY_PICK)) { // else some other JSON line (a workload log); not a decision
                            perCall.computeIfAbsent(perCall(j, file, n), k -> new long[1])[0]++;
                        }
                    }
                    default -> {
                        if (sink != null) {
                            sink.line(type, j, InputException.at(file, n));
                        }
                    }
                }
            }
        }
        aggs.addAll(perCallAggregates(perCall, aggs));
        return new DecisionLogFile(file, host, pid, List.copyOf(comms), List.copyOf(aggs));
    }

    /** A line parsed; an InputException at file:line unless it is a JSON object. */
    private static JsonNode object(String line, Path file, int n) throws InputException {
        JsonNode j;
        try {
            j = JSON.readTree(line);
        } catch (IOException e) {
            j = null;
        }
        if (j == null || !j.isObject()) {
            throw new InputException(InputException.at(file, n), "not a JSON object (a decision log has one per line)");
        }
        return j;
    }

    private static Comm comm(JsonNode j) {
        return new Comm(
                j.path(LogField.COMM).asLong(),
                j.path(LogField.POLICY).asText(null),
                j.path(LogField.PROFILE).asText(null),
                j.path(LogField.SHA256).asText(null),
                j.path(LogField.MODE).asText(null),
                j.path(LogField.N_RANKS).asLong(),
                j.path(LogField.N_NODES).asLong(),
                j.path(LogField.CALLS).asLong(),
                j.path(LogField.RULE_HITS).asLong(),
                j.path(LogField.APPLIED).asLong(),
                j.path(LogField.UNAGGREGATED).asLong(),
                j.path(LogField.AT).asText(null),
                j.path(LogField.COMM_SCOPE).asText(null));
    }

    private static Aggregate aggregate(JsonNode j, Path file, int n) throws InputException {
        return new Aggregate(
                j.path(LogField.COMM).asLong(),
                collective(j, file, n),
                Long.parseUnsignedLong(j.path(LogField.N_BYTES).asText("0")),
                j.path(LogField.TO_BYTES).asLong(-1),
                ncclPick(j),
                j.path(LogField.POLICY_PICK).asText(),
                j.path(LogField.CHANNELS).asInt(),
                j.path(LogField.COUNT).asLong());
    }

    /** A per-call record's decision, its size as its size-grid bucket. */
    private record PerCall(
            long comm, Collective collective, int bucket, String ncclPick, String policyPick, int channels) {}

    private static PerCall perCall(JsonNode j, Path file, int n) throws InputException {
        long nBytes = Long.parseUnsignedLong(j.path(LogField.N_BYTES).asText("0"));
        return new PerCall(
                j.path(LogField.COMM).asLong(),
                collective(j, file, n),
                SizeGrid.bucket(nBytes),
                ncclPick(j),
                j.path(LogField.POLICY_PICK).asText(),
                j.path(LogField.CHANNELS).asInt());
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

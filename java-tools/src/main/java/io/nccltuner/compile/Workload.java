package io.nccltuner.compile;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.compile.Compiler.Group;
import io.nccltuner.compile.Compiler.GroupKey;
import io.nccltuner.compile.Compiler.SizeResult;
import io.nccltuner.engine.LogField;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A workload of collective calls, for weighting regret by what a job actually sends.
 *
 * <p>Two formats, told apart by the first non-comment line:
 *
 * <ul>
 *   <li>A captured getCollInfo trace, read by {@link TraceFile} (the one reader of the format):
 *       each {@code get,<comm>,<nRanks>,<nNodes>,<collType>,<nBytes>,<numPipeOps>,...} row is a
 *       call, collType being ncclFunc_t (0 Broadcast .. 4 AllReduce).
 *   <li>A shadow-mode log: one JSON object per line with {@code "collective"} (a name such as
 *       "AllReduce", or the ncclFunc_t number; {@code "coll"} is accepted too) and {@code "nBytes"},
 *       optionally {@code "nRanks"}, {@code "nNodes"}, {@code "numPipeOps"} and {@code "count"}
 *       (calls this line stands for, default 1). Other keys are ignored. The engine's decision log
 *       ({@code io.nccltuner.engine.DecisionLog}, NCCL_TUNER_JAVA_LOG) is such a log: its
 *       {@code "type": "aggregate"} lines (a bucket's first size and its call count) and per-call
 *       lines (no {@code type}) are read; {@code comm}, {@code measured} and {@code profiled} lines
 *       are skipped; another type is an error.
 * </ul>
 */
public final class Workload {
    /**
     * Calls of one shape.
     *
     * @param collective the collective
     * @param nBytes message size in bytes as getCollInfo sees it
     * @param nRanks ranks, 0 when the source does not say
     * @param nNodes nodes, 0 when the source does not say
     * @param numPipeOps numPipeOps, 0 when the source does not say
     * @param count how many calls
     * @param ruleHit whether the line came from the plugin's decision log (a {@code "type":
     *     "aggregate"} line, or a per-call line with {@code "policyPick"}), which holds only the calls
     *     a rule of the policy the plugin ran matched ({@code engine/ShadowAggregate}, {@code
     *     engine/DecisionLog}), not every call of the job
     */
    public record Call(
            Collective collective, long nBytes, int nRanks, int nNodes, int numPipeOps, long count, boolean ruleHit) {
        /** A call of a trace or of a JSON-lines workload that is no decision log. */
        public Call(Collective collective, long nBytes, int nRanks, int nNodes, int numPipeOps, long count) {
            this(collective, nBytes, nRanks, nNodes, numPipeOps, count, false);
        }
    }

    /**
     * What the workload's calls cost under NCCL's default, under the policy and at the measured best,
     * for one measured group. Calls are priced at the measured size that governs their size (see
     * {@link Compiler}); calls outside the measured span, or where NCCL's own time was not
     * measured, are counted but not priced.
     *
     * @param key the group
     * @param calls calls of this collective and shape in the workload
     * @param priced calls inside the measured span with NCCL's time known
     * @param defaultUs sum of NCCL's times over priced calls, microseconds
     * @param policyUs sum of the policy's times (its first candidate where a rule applies, else
     *     NCCL's), microseconds
     * @param bestUs sum of the best measured times, microseconds
     * @param pricedRuleHits how many of the priced calls came from decision logs ({@link Call#ruleHit})
     */
    public record Savings(
            GroupKey key,
            long calls,
            long priced,
            double defaultUs,
            double policyUs,
            double bestUs,
            long pricedRuleHits) {
        /**
         * What the saving's percentage divides by, for the report: {@code over all calls of the
         * workload}, {@code over the workload's 19 priced calls}, or, where decision logs gave the
         * calls, which calls those are (the rule hits of the policy the plugin ran, not all calls).
         *
         * @return the phrase after "of NCCL's time"
         */
        public String baseline() {
            String decisionLog = "only the calls a rule of the policy the plugin ran matched (a trace, "
                    + "NCCL_TUNER_JAVA_RECORD=FILE, records all calls)";
            if (pricedRuleHits == priced) {
                return "over the " + priced + " priced call" + (priced == 1 ? "" : "s") + " of the decision log, "
                        + decisionLog;
            }
            String calls = priced == this.calls
                    ? "over all calls of the workload"
                    : "over the workload's " + priced + " priced calls";
            return pricedRuleHits == 0
                    ? calls
                    : calls + ", " + pricedRuleHits + " of them from decision logs, " + decisionLog;
        }

        /** @return size-weighted regret of NCCL's default: defaultUs / bestUs - 1 */
        public double defaultRegret() {
            return defaultUs / bestUs - 1;
        }

        /** @return size-weighted regret of the policy: policyUs / bestUs - 1 */
        public double policyRegret() {
            return policyUs / bestUs - 1;
        }

        /** @return expected saving of the policy over NCCL's default: 1 - policyUs / defaultUs */
        public double saving() {
            return 1 - policyUs / defaultUs;
        }
    }

    private Workload() {}

    /**
     * Reads a workload.
     *
     * @param file a trace CSV or a shadow JSON-lines log
     * @return the calls, in file order
     * @throws IOException if the file cannot be read
     * @throws InputException on a malformed line (naming file and line)
     */
    public static List<Call> read(Path file) throws IOException, InputException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<Call> calls = new ArrayList<>();
        String first = lines.stream()
                .map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .findFirst()
                .orElse("");
        if (!first.startsWith("{")) { // a trace: TraceFile reads it, as replay and explain do
            try {
                for (TraceCall t : TraceFile.parse(file, lines).calls()) {
                    calls.add(new Call(t.collective(), t.nBytes(), t.nRanks(), t.nNodes(), t.numPipeOps(), 1));
                }
            } catch (TraceFile.BadRow e) {
                throw new InputException(
                        e.where(),
                        e.reason() + " (expected a trace row 'get,<comm>,<nRanks>,<nNodes>,"
                                + "<collType>,<nBytes>,<numPipeOps>,...' or a JSON object with collective and nBytes)");
            }
            return calls;
        }
        ObjectMapper json = new ObjectMapper();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Call c = jsonCall(json, InputException.at(file, i + 1), line);
            if (c != null) {
                calls.add(c);
            }
        }
        return calls;
    }

    /** Decision-log line types that carry no calls to weight: communicator summaries, canary timings, profiler timings. */
    private static final java.util.Set<String> SKIPPED_TYPES =
            java.util.Set.of(LogField.TYPE_COMM, LogField.TYPE_MEASURED, LogField.TYPE_PROFILED);

    private static Call jsonCall(ObjectMapper json, String where, String line) throws InputException {
        JsonNode n;
        try {
            n = json.readTree(line);
        } catch (JsonProcessingException e) {
            throw new InputException(where, "not a JSON object: " + e.getOriginalMessage());
        }
        if (n.hasNonNull(
                LogField.TYPE)) { // the plugin's decision log: aggregate lines price; the others carry no calls
            String type = n.get(LogField.TYPE).asText();
            if (SKIPPED_TYPES.contains(type)) {
                return null;
            }
            if (!type.equals(LogField.TYPE_AGGREGATE)) {
                throw new InputException(
                        where,
                        "decision-log line of type '" + type + "': expected \"aggregate\" (read) or "
                                + "\"comm\", \"measured\", \"profiled\" (skipped)");
            }
        }
        JsonNode c = n.has(LogField.COLLECTIVE) ? n.get(LogField.COLLECTIVE) : n.get("coll");
        if (c == null
                || !n.hasNonNull(LogField.N_BYTES)
                || !n.get(LogField.N_BYTES).canConvertToExactIntegral()) {
            throw new InputException(
                    where, "a shadow-log line needs \"collective\" (or \"coll\") and an integer \"nBytes\"");
        }
        boolean numeric = c.isInt() || c.asText().matches("\\d+"); // the decision log writes unknown ids as "7"
        Collective coll = numeric ? Collective.ofId(Integer.parseInt(c.asText())) : Collective.parse(c.asText());
        if (coll == null) {
            if (numeric) {
                return null; // point-to-point ncclFunc_t
            }
            throw new InputException(where, "unknown collective '" + c.asText() + "'");
        }
        return new Call(
                coll,
                n.get(LogField.N_BYTES).asLong(),
                n.path(LogField.N_RANKS).asInt(0),
                n.path(LogField.N_NODES).asInt(0),
                n.path(LogField.NUM_PIPE_OPS).asInt(0),
                n.path(LogField.COUNT).asLong(1),
                n.hasNonNull(LogField.TYPE) || n.has(LogField.POLICY_PICK));
    }

    /** @return whether a call is of a group's collective and shape (fields the call leaves 0 match any) */
    private static boolean matches(Call call, GroupKey k) {
        return call.collective() == k.collective()
                && (call.nRanks() == 0 || call.nRanks() == k.nRanks())
                && (call.nNodes() == 0 || call.nNodes() == k.nNodes())
                && (call.numPipeOps() == 0 || k.numPipeOps().contains(call.numPipeOps()));
    }

    /**
     * The calls of a workload that no compiled group prices because no group has their shape (calls
     * of another job or communicator: an nRanks, nNodes no measurement has), or, where no call at all
     * matches a group, every call; for a warning: their weights are not applied. Calls of a measured
     * shape whose collective was not measured are the usual case (a job calls more collectives than
     * were measured) and are not named.
     *
     * @param c the compilation
     * @param calls one workload file's calls
     * @return {@code its 257 calls (AllReduce at nRanks=2 nNodes=2: 257) match no measured group
     *     (AllReduce at nRanks=8 nNodes=2): its weights are not applied, no call of it is priced}, the
     *     same with {@code 12 of its 269 calls} and {@code those 12 are not weighted, the other 257
     *     are} when some match, or null
     */
    public static String unmatched(Compilation c, List<Call> calls) {
        java.util.Map<String, Long> other = new java.util.TreeMap<>();
        java.util.Map<String, Long> otherShape = new java.util.TreeMap<>();
        long all = 0;
        long none = 0;
        long shapeless = 0;
        for (Call call : calls) {
            all += call.count();
            if (c.groups().stream().anyMatch(g -> matches(call, g.key()))) {
                continue;
            }
            none += call.count();
            String shape = call.nRanks() == 0
                    ? "any shape"
                    : call.nNodes() == 0
                            ? "nRanks=" + call.nRanks()
                            : io.nccltuner.model.JobShape.of(call.nRanks(), call.nNodes());
            String what = call.collective() + " at " + shape
                    + (call.numPipeOps() > 1 ? " numPipeOps " + call.numPipeOps() : "");
            other.merge(what, call.count(), Long::sum);
            boolean measuredShape = c.groups().stream()
                    .anyMatch(g -> (call.nRanks() == 0
                                    || call.nRanks() == g.key().nRanks())
                            && (call.nNodes() == 0 || call.nNodes() == g.key().nNodes()));
            if (!measuredShape) {
                shapeless += call.count();
                otherShape.merge(what, call.count(), Long::sum);
            }
        }
        if (none < all && shapeless == 0) {
            return none == 0 ? null : unmeasuredCollectives(calls, other, none, all);
        }
        long n = none == all ? all : shapeless;
        java.util.Map<String, Long> named = none == all ? other : otherShape;
        java.util.Set<String> measured = new java.util.LinkedHashSet<>();
        for (Group g : c.groups()) {
            measured.add(g.key().collective() + " at "
                    + io.nccltuner.model.JobShape.of(g.key().nRanks(), g.key().nNodes())
                    + (g.key().numPipeOps().min() > 1 ? " numPipeOps " + g.key().numPipeOps() : ""));
        }
        List<String> each = new ArrayList<>();
        named.forEach((k, x) -> each.add(k + ": " + x));
        return (n == all ? "its " + TextReport.count(all, "call") : n + " of its " + TextReport.count(all, "call"))
                + " ("
                + String.join("; ", each) + ") match" + (n == 1 ? "es" : "")
                + " no measured group (" + String.join("; ", measured) + "): "
                + (n == all
                        ? "its weights are not applied, no call of it is priced"
                        : "those " + n + " are not weighted (another communicator shape), the other " + (all - n)
                                + " are where their collective was measured");
    }

    /**
     * The warning for a workload some of whose calls are of collectives (or numPipeOps) never
     * measured at their shape, the others priced: how many calls and bytes nothing prices.
     *
     * @param calls the workload
     * @param unmeasured calls per collective and shape no group matches
     * @param none the calls no group matches
     * @param all the workload's calls
     * @return {@code 28 of its 57 calls (1.5 MiB of 3 MiB moved) are of collectives never measured ...}
     */
    private static String unmeasuredCollectives(
            List<Call> calls, java.util.Map<String, Long> unmeasured, long none, long all) {
        java.math.BigInteger bytes = java.math.BigInteger.ZERO;
        java.math.BigInteger unmeasuredBytes = java.math.BigInteger.ZERO;
        for (Call call : calls) {
            java.math.BigInteger b =
                    java.math.BigInteger.valueOf(call.nBytes()).multiply(java.math.BigInteger.valueOf(call.count()));
            bytes = bytes.add(b);
            if (unmeasured.containsKey(call.collective() + " at "
                    + (call.nRanks() == 0
                            ? "any shape"
                            : call.nNodes() == 0
                                    ? "nRanks=" + call.nRanks()
                                    : io.nccltuner.model.JobShape.of(call.nRanks(), call.nNodes()))
                    + (call.numPipeOps() > 1 ? " numPipeOps " + call.numPipeOps() : ""))) {
                unmeasuredBytes = unmeasuredBytes.add(b);
            }
        }
        List<String> each = new ArrayList<>();
        unmeasured.forEach((k, x) -> each.add(k + ": " + x));
        return none + " of its " + TextReport.count(all, "call") + " (" + bytesText(unmeasuredBytes) + " of "
                + bytesText(bytes) + " moved) are of collectives never measured at their shape ("
                + String.join("; ", each) + "): nothing prices them, so the expected saving covers the other "
                + (all - none) + "; measure them to price them (nccl-tuner sweep --collectives ...)";
    }

    /** @return a byte total in {@link io.nccltuner.policy.ByteSize#readable}, or in bytes past 2^63 */
    private static String bytesText(java.math.BigInteger b) {
        return b.bitLength() < 63 ? io.nccltuner.policy.ByteSize.readable(b.longValue()) : b + " B";
    }

    /**
     * Prices a workload against compiled groups.
     *
     * @param c the compilation
     * @param calls the workload
     * @return one entry per group with at least one matching call
     */
    public static List<Savings> evaluate(Compilation c, List<Call> calls) {
        List<Savings> out = new ArrayList<>();
        for (Group g : c.groups()) {
            GroupKey k = g.key();
            long n = 0;
            long priced = 0;
            long ruleHits = 0;
            double def = 0;
            double pol = 0;
            double best = 0;
            for (Call call : calls) {
                if (!matches(call, k)) {
                    continue;
                }
                n += call.count();
                SizeResult s = g.governing(call.nBytes());
                if (s == null || Double.isNaN(s.ncclUs())) {
                    continue;
                }
                priced += call.count();
                ruleHits += call.ruleHit() ? call.count() : 0;
                def += s.ncclUs() * call.count();
                pol += s.policyUs() * call.count();
                best += s.bestUs() * call.count();
            }
            if (n > 0) {
                out.add(new Savings(k, n, priced, def, pol, best, ruleHits));
            }
        }
        return out;
    }
}

package io.nccltuner.model;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Signature;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Runs captured tuner calls through the policy {@link Engine} in process, the way the plugin does:
 * init per communicator, then for each call a native {@code float[numAlgo][numProto]} cost table
 * and an {@code int} nChannels in off-heap memory ({@link MemorySegment}s, as NCCL passes {@code
 * float** collCostTable} and {@code int* nChannels} to getCollInfo, src/enqueue.cc 2.19+), then
 * destroy. After each call NCCL's selection (strict minimum, {@link NcclSelect}) is applied to the
 * table before and after the engine, so the outcome is what NCCL would have run.
 */
public final class Replay {
    private Replay() {}

    /**
     * One replayed call.
     *
     * @param call the captured call (its costs are NCCL's, unchanged)
     * @param ncclPick NCCL's pick from the captured table
     * @param policyPick NCCL's pick from the table after the engine
     * @param nChannels nChannels after the engine ({@code call.nChannelsIn()} if unchanged)
     * @param costsAfter the table after the engine
     * @param decision the engine's {@link io.nccltuner.engine.Decision} code for the call
     */
    public record CallOutcome(
            TraceCall call, AlgoProto ncclPick, AlgoProto policyPick, int nChannels, float[] costsAfter, int decision) {
        /**
         * @return whether a rule matched the call but NCCL offers none of its candidates there (its
         *     cost-table entries are -1), so the policy changes nothing for it
         */
        public boolean notOffered() {
            return io.nccltuner.engine.Decision.arm(decision) == io.nccltuner.engine.Decision.ARM_NOT_OFFERED;
        }

        /** @return whether the engine changed the pick or the channel count */
        public boolean changed() {
            return !Objects.equals(ncclPick, policyPick) || nChannels != call.nChannelsIn();
        }

        /**
         * @return whether the engine changed the channel count only, NCCL's algorithm and protocol
         *     staying
         */
        public boolean channelsOnly() {
            return Objects.equals(ncclPick, policyPick) && nChannels != call.nChannelsIn();
        }

        /** @return whether a rule of the policy matched the call (whatever it did) */
        public boolean ruleHit() {
            return io.nccltuner.engine.Decision.arm(decision) != io.nccltuner.engine.Decision.ARM_UNRULED;
        }
    }

    /**
     * Calls of one collective, size and numPipeOps that ended the same way.
     *
     * @param collective the collective
     * @param nBytes size as NCCL passes it, bytes
     * @param numPipeOps pipelined operations
     * @param calls how many calls
     * @param ncclPick NCCL's own pick
     * @param policyPick the pick after the engine
     * @param nChannels nChannels after the engine, 0 when NCCL decides
     * @param ncclTime NCCL's predicted time of its own pick, microseconds (from the captured table)
     * @param policyTime NCCL's predicted time of the policy's pick, microseconds (captured table; NCCL's
     *     model, not a measurement), -1 when there is no pick
     * @param ruleHit whether a rule of the policy matched these calls
     * @param notOffered whether a rule matched but NCCL offers none of its candidates there
     */
    public record Change(
            Collective collective,
            long nBytes,
            int numPipeOps,
            int calls,
            AlgoProto ncclPick,
            AlgoProto policyPick,
            int nChannels,
            float ncclTime,
            float policyTime,
            boolean ruleHit,
            boolean notOffered) {
        /** @return whether the pick or the channel count differs from NCCL's */
        public boolean changed() {
            return !Objects.equals(ncclPick, policyPick) || nChannels != 0;
        }

        /** @return whether a rule matched and NCCL's own pick stays, channels included */
        public boolean kept() {
            return ruleHit && !changed();
        }
    }

    /**
     * The outcome of a replay.
     *
     * @param calls one outcome per call, in trace order
     * @param engineLog the engine's INFO and WARN lines, "INFO ..." / "WARN ..."
     * @param summaries the engine's per-communicator summary lines from destroy
     */
    public record Result(List<CallOutcome> calls, List<String> engineLog, List<String> summaries) {
        public Result {
            calls = List.copyOf(calls);
            engineLog = List.copyOf(engineLog);
            summaries = List.copyOf(summaries);
        }

        /** @return how many calls the engine changed */
        public long changedCalls() {
            return calls.stream().filter(CallOutcome::changed).count();
        }

        /** @return calls grouped by collective, nBytes, numPipeOps and outcome, in first-seen order */
        public List<Change> changes() {
            Map<List<Object>, Change> groups = new LinkedHashMap<>();
            for (CallOutcome o : calls) {
                TraceCall c = o.call();
                List<Object> key = java.util.Arrays.asList(
                        c.collective(),
                        c.nBytes(),
                        c.numPipeOps(),
                        o.ncclPick(),
                        o.policyPick(),
                        o.nChannels(),
                        o.ruleHit(),
                        o.notOffered());
                Change prev = groups.get(key);
                float ncclTime = o.ncclPick() == null
                        ? -1
                        : c.cost(
                                o.ncclPick().algorithm().id(),
                                o.ncclPick().protocol().id());
                float policyTime = o.policyPick() == null
                        ? -1
                        : c.cost(
                                o.policyPick().algorithm().id(),
                                o.policyPick().protocol().id());
                groups.put(
                        key,
                        new Change(
                                c.collective(),
                                c.nBytes(),
                                c.numPipeOps(),
                                prev == null ? 1 : prev.calls() + 1,
                                o.ncclPick(),
                                o.policyPick(),
                                o.nChannels(),
                                ncclTime,
                                policyTime,
                                o.ruleHit(),
                                o.notOffered()));
            }
            return new ArrayList<>(groups.values());
        }
    }

    /**
     * Replays a trace.
     *
     * @param policy the loaded policy (null: the engine changes nothing)
     * @param mode the mode to run the engine in (enforce shows what the policy changes; shadow and off
     *     change nothing)
     * @param trace the captured calls
     * @return what NCCL would have run for each call
     */
    public static Result run(Policy policy, Mode mode, TraceFile trace) {
        return run(policy, mode, trace, null);
    }

    /**
     * Replays a trace as a given NCCL release calls the tuner.
     *
     * @param policy the loaded policy (null: the engine changes nothing)
     * @param mode the mode to run the engine in
     * @param trace the captured calls
     * @param era the NCCL release (its tuner version, version code and regBuff), or null for tuner v3
     *     with NCCL's version unknown
     * @return what NCCL would have run for each call
     */
    public static Result run(Policy policy, Mode mode, TraceFile trace, NcclEra era) {
        return run(
                policy,
                mode,
                trace,
                era == null ? Signature.UNKNOWN : era.signature(),
                era == null ? -1 : era.regBuff());
    }

    /**
     * Replays a trace with a given hardware signature at every init (as {@code try --gpu} presents
     * a GPU and NCCL version to the plugin), so that profiles naming hardware match as they do there.
     *
     * @param policy the loaded policy (null: the engine changes nothing)
     * @param mode the mode to run the engine in
     * @param trace the captured calls
     * @param sig what each init presents: tuner version, NCCL's version code, GPU name and compute
     *     capability ({@link NcclEra#signature} for an era's)
     * @param regBuff what each call passes: 0 from tuner v4, -1 (unknown) under v3
     * @return what NCCL would have run for each call
     */
    public static Result run(Policy policy, Mode mode, TraceFile trace, Signature sig, int regBuff) {
        List<String> lines = new ArrayList<>();
        TunerLog log = (logger, level, message) -> lines.add((level == TunerLog.WARN ? "WARN " : "INFO ") + message);
        Engine engine = new Engine(policy, mode, log, null);
        Map<Integer, Long> handles = new HashMap<>();
        List<CallOutcome> out = new ArrayList<>();
        List<String> summaries = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            for (TraceFile.Event e : trace.events()) {
                switch (e) {
                    case TraceFile.Init i ->
                        handles.put(
                                i.comm(),
                                engine.init(i.nRanks(), i.nNodes(), MemorySegment.NULL, sig, MemorySegment.NULL));
                    case TraceFile.Get g -> {
                        TraceCall c = g.call();
                        long h = handles.computeIfAbsent(
                                c.comm(),
                                k -> engine.init(c.nRanks(), c.nNodes(), MemorySegment.NULL, sig, MemorySegment.NULL));
                        out.add(call(engine, h, arena, c, regBuff));
                    }
                    case TraceFile.Destroy d -> {
                        Long h = handles.remove(d.comm());
                        if (h != null) {
                            String s = engine.destroy(h);
                            if (s != null) {
                                summaries.add(s);
                            }
                        }
                    }
                }
            }
            for (long h : handles.values()) {
                String s = engine.destroy(h);
                if (s != null) {
                    summaries.add(s);
                }
            }
        }
        return new Result(out, lines, summaries);
    }

    private static CallOutcome call(Engine engine, long handle, Arena arena, TraceCall c, int regBuff) {
        float[] costs = c.costs();
        MemorySegment table = arena.allocate(JAVA_FLOAT, costs.length);
        MemorySegment.copy(costs, 0, table, JAVA_FLOAT, 0, costs.length);
        MemorySegment channels = arena.allocate(JAVA_INT);
        channels.set(JAVA_INT, 0, c.nChannelsIn());
        int decision = engine.getCollInfo(
                handle,
                c.collective().id(),
                c.nBytes(),
                c.numPipeOps(),
                table,
                0L,
                c.numAlgo(),
                c.numProto(),
                regBuff,
                channels,
                0L);
        float[] after = table.toArray(JAVA_FLOAT);
        return new CallOutcome(
                c,
                NcclSelect.pick(costs, c.numProto()),
                NcclSelect.pick(after, c.numProto()),
                channels.get(JAVA_INT, 0),
                after,
                decision);
    }

    /**
     * The engine as an {@link Explain.Tuner} for one communicator: each call copies the cost table
     * into native memory, calls {@link Engine#getCollInfo} and copies it back. Close it to destroy the
     * communicator and free the memory.
     */
    public static final class EngineTuner implements Explain.Tuner, AutoCloseable {
        private final Engine engine;
        private final long handle;
        private final Arena arena = Arena.ofConfined();
        private final List<String> log;
        private final List<Integer> decisions = new ArrayList<>();
        private final int regBuff;

        /**
         * Opens a communicator on a new engine.
         *
         * @param policy the loaded policy
         * @param mode the mode to run it in
         * @param nRanks ranks of the communicator
         * @param nNodes nodes of the communicator
         */
        public EngineTuner(Policy policy, Mode mode, int nRanks, int nNodes) {
            this(policy, mode, nRanks, nNodes, null);
        }

        /**
         * Opens a communicator on a new engine, as a given NCCL release calls the tuner.
         *
         * @param policy the loaded policy
         * @param mode the mode to run it in
         * @param nRanks ranks of the communicator
         * @param nNodes nodes of the communicator
         * @param era the NCCL release, or null for tuner v3 with NCCL's version unknown
         */
        public EngineTuner(Policy policy, Mode mode, int nRanks, int nNodes, NcclEra era) {
            this(policy, mode, nRanks, nNodes, era, era == null ? Signature.UNKNOWN : era.signature());
        }

        /**
         * Opens a communicator on a new engine, as a given NCCL release calls the tuner, with a given
         * hardware signature at its init (as {@code try --gpu} presents a GPU to the plugin).
         *
         * @param policy the loaded policy
         * @param mode the mode to run it in
         * @param nRanks ranks of the communicator
         * @param nNodes nodes of the communicator
         * @param era the NCCL release (its regBuff), or null for regBuff -1 (tuner v3)
         * @param sig what the init presents: tuner version, NCCL's version code, GPU and compute capability
         */
        public EngineTuner(Policy policy, Mode mode, int nRanks, int nNodes, NcclEra era, Signature sig) {
            this.regBuff = era == null ? -1 : era.regBuff();
            List<String> lines = new ArrayList<>();
            this.log = lines;
            this.engine = new Engine(
                    policy, mode, (l, level, m) -> lines.add((level == TunerLog.WARN ? "WARN " : "INFO ") + m), null);
            this.handle = engine.init(nRanks, nNodes, MemorySegment.NULL, sig, MemorySegment.NULL);
        }

        @Override
        public int getCollInfo(
                Collective collective, long nBytes, int numPipeOps, float[] costTable, int numAlgo, int numProto) {
            MemorySegment table = arena.allocate(JAVA_FLOAT, costTable.length);
            MemorySegment.copy(costTable, 0, table, JAVA_FLOAT, 0, costTable.length);
            MemorySegment channels = arena.allocate(JAVA_INT);
            channels.set(JAVA_INT, 0, 0);
            decisions.add(engine.getCollInfo(
                    handle, collective.id(), nBytes, numPipeOps, table, 0L, numAlgo, numProto, regBuff, channels, 0L));
            MemorySegment.copy(table, JAVA_FLOAT, 0, costTable, 0, costTable.length);
            return channels.get(JAVA_INT, 0);
        }

        /**
         * @return the engine's {@link io.nccltuner.engine.Decision} code of each {@link #getCollInfo}
         *     call so far, in call order (explain tells from them why a size kept NCCL's pick)
         */
        public List<Integer> decisions() {
            return List.copyOf(decisions);
        }

        /** @return the engine's INFO/WARN lines so far ("INFO ...", "WARN ...") */
        public List<String> log() {
            return List.copyOf(log);
        }

        /** Destroys the communicator and frees the native memory. */
        @Override
        public void close() {
            engine.destroy(handle);
            arena.close();
        }
    }
}

package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.ncclNvlDomainInfo_v5_t;
import io.nccltuner.bindings.nccltj_bridge_t;
import io.nccltuner.bindings.nccltj_call_t;
import io.nccltuner.bindings.nccltj_control_fn;
import io.nccltuner.bindings.nccltj_get_coll_info_fn;
import io.nccltuner.bindings.nccltj_get_t;
import io.nccltuner.bindings.nccltj_hw_t;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The training run for the JDK 25 AOT cache that {@code make dist} ships beside the engine jar
 * ({@code -XX:AOTCacheOutput}): it walks the plugin's start-up path the way the shim does, through
 * {@link Bootstrap#start(long)} with a bridge in native memory, then calls the two upcall stubs
 * (control for init, getChunkSize and destroy; getCollInfo) over the calls of a captured trace, so the classes, method handles and upcall stubs that a real
 * first init needs are in the cache. In between it parses the policy's YAML once, so that a policy
 * with no compiled form beside it starts from the cache too.
 *
 * <p>Usage: {@code java -XX:AOTCacheOutput=nccl-tuner-java.aot -cp nccl-tuner-java.jar
 * io.nccltuner.ffm.AotTraining [TRACE.csv]} with {@code NCCL_TUNER_JAVA_POLICY} set; without a
 * trace it replays the tensor-parallel decode trace bundled in the jar (captured from NCCL 2.28.9).
 * Exits 0 after printing the number of calls replayed; 1 if the engine did not start or the trace
 * cannot be read (a one-line message on stderr, no stack trace).
 */
public final class AotTraining {
    private AotTraining() {}

    /** @param args optionally one trace CSV (the shared trace format) */
    public static void main(String[] args) throws Exception {
        try {
            train(args);
        } catch (java.io.IOException | RuntimeException e) {
            // a message, not a stack trace: bin/nccl-tuner-aot then removes the partial cache
            String what = args.length > 0 ? args[0] : "the bundled trace";
            System.err.println("AotTraining: " + what + ": "
                    + (e instanceof java.nio.file.NoSuchFileException
                            ? "no such file"
                            : e instanceof TraceFile.BadRow
                                    ? "not a trace CSV in the shared format (" + e.getMessage() + ")"
                                    : e.toString()));
            System.exit(1);
        }
    }

    private static void train(String[] args) throws Exception {
        TraceFile trace = trace(args);
        loadWhatTheStartLoads();
        Arena arena = Arena.global();
        MemorySegment bridge = nccltj_bridge_t.allocate(arena);
        nccltj_bridge_t.abiVersion(bridge, NcclTunerAbi.NCCL_TUNER_JAVA_ABI_VERSION());
        nccltj_bridge_t.libraryPath(bridge, arena.allocateFrom("aot-training"));
        if (Bootstrap.start(bridge.address()) != 0) {
            System.err.println("AotTraining: the engine did not start");
            System.exit(1);
        }
        parseTheYaml(System.getenv("NCCL_TUNER_JAVA_POLICY"));
        int calls = new Replay(arena, bridge).run(trace, 200);
        System.out.println("AotTraining: " + calls + " calls replayed");
    }

    /** The trace named, else the one bundled in the jar. */
    private static TraceFile trace(String[] args) throws java.io.IOException {
        if (args.length > 0) {
            return TraceFile.read(Path.of(args[0]));
        }
        try (var in = AotTraining.class.getResourceAsStream("aot-training-trace.csv")) {
            return TraceFile.parse(
                    null,
                    new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                            .lines()
                            .toList());
        }
    }

    /**
     * Classes the plugin's start loads that this run would not, so that they are in the cache too
     * (else the JVM opens its module image for them at start: +1 MiB resident): the INFO line's AOT
     * check, NCCL_TUNER_JAVA_MODE's parse, and the generated name of a thread that FFM attaches on
     * its first upcall (NCCL's threads; here the calls come from Java's main thread). The JVM's
     * charset for file names and the environment follows the host's locale: under LANG=C or none
     * it is US-ASCII, whose encoder classes are otherwise read from the module image.
     */
    private static void loadWhatTheStartLoads() throws java.io.IOException {
        AotCacheStatus.isMapped(Path.of("/proc/self/maps"), "/");
        io.nccltuner.policy.Mode.parse("enforce");
        new Thread(() -> {}).getName();
        for (String cs : new String[] {"US-ASCII", "ISO-8859-1", "UTF-8"}) {
            java.nio.charset.Charset.forName(cs)
                    .newEncoder()
                    .encode(java.nio.CharBuffer.wrap("aot\ud800"), java.nio.ByteBuffer.allocate(16), true);
            java.nio.charset.Charset.forName(cs).newDecoder();
        }
        java.nio.charset.Charset.forName("ANSI_X3.4-1968");
    }

    /**
     * The policy's YAML parsed once more, as the plugin parses a policy with no compiled form
     * beside it (a user's own YAML, or one edited since): the engine started from the compiled
     * form {@code bin/nccl-tuner-aot} wrote, which loads none of SnakeYAML's classes or the
     * loader's, and without them in the cache such a start read them from the jar (issue 23 item
     * 5: 1.6-2.3x the CPU time of a start from the compiled form; with them 1.1x, for 1 MiB more in
     * the cache and in every start's resident memory). Its problems, if any, were the start's to
     * report; here it only trains.
     */
    private static void parseTheYaml(String policy) {
        if (policy == null || policy.isEmpty()) {
            return;
        }
        try {
            // and its tables compiled, as a start from the YAML alone compiles them (a start from the
            // compiled form reads them stored, so it would not put DecisionTable.compile's classes
            // and their profiles in the cache)
            for (io.nccltuner.policy.Policy.Profile p :
                    io.nccltuner.policy.PolicyLoader.load(Path.of(policy)).profiles()) {
                io.nccltuner.engine.DecisionTable.compile(p);
            }
        } catch (io.nccltuner.policy.PolicyException | RuntimeException e) {
            // an invalid policy trains the refusal's path, which is as good
        }
    }

    /**
     * The shim's calls over a trace: init, getCollInfo, getChunkSize and destroy through the two
     * upcall stubs, as the shim passes them.
     */
    private static final class Replay {
        private final MemorySegment bridge;
        private final MemorySegment text;
        private final MemorySegment control;
        private final MemorySegment get;
        private final MemorySegment call;
        private final MemorySegment getCall;
        private final MemorySegment table;
        private final MemorySegment nChannels;
        private final MemorySegment hw;
        private final MemorySegment chunk;
        private final MemorySegment nvl;
        private final MemorySegment constants;
        private int inits;
        private long comm;

        Replay(Arena arena, MemorySegment bridge) {
            this.bridge = bridge;
            text = arena.allocate(2048);
            control = nccltj_bridge_t.control(bridge);
            get = nccltj_bridge_t.getCollInfo(bridge);
            call = nccltj_call_t.allocate(arena);
            getCall = nccltj_get_t.allocate(arena);
            table = arena.allocate(JAVA_FLOAT, 64);
            nChannels = arena.allocate(JAVA_INT);
            // A hardware signature (NCCL and GPU unknown here) on every init, so that reading it
            // is in the cache too, and NCCL's size_t for getChunkSize.
            hw = nccltj_hw_t.allocate(arena);
            nccltj_hw_t.ncclVersion(hw, 0);
            nccltj_hw_t.ccMajor(hw, -1);
            nccltj_hw_t.ccMinor(hw, -1);
            chunk = arena.allocate(JAVA_LONG);
            // Every other init as NCCL 2.28+ makes it (tuner v5: NVLink domains and model
            // constants), so that the classes reading them are in the cache as well.
            nvl = arena.allocate(ncclNvlDomainInfo_v5_t.layout());
            ncclNvlDomainInfo_v5_t.nNvlDomains(nvl, 1);
            ncclNvlDomainInfo_v5_t.minRanksPerNvlDomain(nvl, 1);
            ncclNvlDomainInfo_v5_t.maxRanksPerNvlDomain(nvl, 1);
            constants = arena.allocate(io.nccltuner.policy.TunerConstant.STRUCT_BYTES_V7, Double.BYTES);
        }

        /** @return the getCollInfo calls made, {@code rounds} times over the trace */
        int run(TraceFile trace, int rounds) {
            int calls = 0;
            for (int round = 0; round < rounds; round++) {
                for (TraceFile.Event ev : trace.events()) {
                    if (ev instanceof TraceFile.Init init) {
                        init(init);
                    } else if (ev instanceof TraceFile.Get g) {
                        get(g.call(), round == 0);
                        calls++;
                    } else if (ev instanceof TraceFile.Destroy) {
                        call.fill((byte) 0);
                        nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_DESTROY());
                        nccltj_call_t.handle(call, comm);
                        nccltj_control_fn.invoke(control, call.address());
                        takeLines();
                    }
                }
            }
            return calls;
        }

        private void init(TraceFile.Init init) {
            call.fill((byte) 0);
            nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_INIT());
            boolean v5 = inits++ % 2 == 1;
            nccltj_call_t.tunerVersion(call, v5 ? (inits % 4 == 0 ? 7 : 5) : 3); // v7: NCCL 2.32.6's 5-row constants
            nccltj_call_t.commId(call, v5 ? 0x1234L + inits : 0);
            nccltj_call_t.nRanks(call, init.nRanks());
            nccltj_call_t.nNodes(call, init.nNodes());
            nccltj_call_t.nvlDomainInfo(call, v5 ? nvl.address() : 0);
            nccltj_call_t.constants(call, v5 ? constants.address() : 0);
            nccltj_call_t.hw(call, hw.address());
            nccltj_control_fn.invoke(control, call.address());
            comm = nccltj_call_t.handle(call);
            takeLines();
        }

        /** The lines the engine queued, taken as the shim takes them after an upcall (and dropped). */
        private void takeLines() {
            for (int i = 0; i < 64 && bridge.get(JAVA_INT, nccltj_bridge_t.linesQueued$offset()) != 0; i++) {
                call.fill((byte) 0);
                nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_TAKE_LINE());
                nccltj_call_t.text(call, text.address());
                nccltj_call_t.textBytes(call, text.byteSize());
                nccltj_control_fn.invoke(control, call.address());
                if (nccltj_call_t.level(call) == 0) {
                    return;
                }
            }
        }

        private void get(TraceCall c, boolean chunkSizeToo) {
            MemorySegment.copy(c.costs(), 0, table, JAVA_FLOAT, 0, c.costs().length);
            nChannels.set(JAVA_INT, 0, 0);
            getCall.fill((byte) 0);
            nccltj_get_t.handle(getCall, comm);
            nccltj_get_t.collType(getCall, c.collective().id());
            nccltj_get_t.nBytes(getCall, c.nBytes());
            nccltj_get_t.numPipeOps(getCall, c.numPipeOps());
            nccltj_get_t.costTable(getCall, table.address());
            nccltj_get_t.numAlgo(getCall, c.numAlgo());
            nccltj_get_t.numProto(getCall, c.numProto());
            nccltj_get_t.regBuff(getCall, -1);
            nccltj_get_t.nChannels(getCall, nChannels.address());
            nccltj_get_coll_info_fn.invoke(get, getCall.address());
            if (chunkSizeToo) {
                chunk.set(JAVA_LONG, 0, 1L << 20);
                call.fill((byte) 0);
                nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_GET_CHUNK_SIZE());
                nccltj_call_t.handle(call, comm);
                nccltj_call_t.collType(call, c.collective().id());
                nccltj_call_t.nBytes(call, c.nBytes());
                nccltj_call_t.algorithm(call, 1);
                nccltj_call_t.protocol(call, 2);
                nccltj_call_t.nChannels(call, 2);
                nccltj_call_t.chunkSize(call, chunk.address());
                nccltj_control_fn.invoke(control, call.address());
            }
        }
    }
}

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
import io.nccltuner.bindings.nccltj_hw_t;
import io.nccltuner.bindings.nccltj_log_fn;
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
 * first init needs are in the cache.
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
        TraceFile trace;
        if (args.length > 0) {
            trace = TraceFile.read(Path.of(args[0]));
        } else {
            try (var in = AotTraining.class.getResourceAsStream("aot-training-trace.csv")) {
                trace = TraceFile.parse(
                        null,
                        new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                                .lines()
                                .toList());
            }
        }
        // Classes the plugin's start loads that this run would not, so that they are in the cache
        // too (else the JVM opens its module image for them at start: +1 MiB resident): the INFO
        // line's AOT check, NCCL_TUNER_JAVA_MODE's parse, and the generated name of a thread that FFM
        // attaches on its first upcall (NCCL's threads; here the calls come from Java's main thread).
        AotCacheStatus.isMapped(Path.of("/proc/self/maps"), "/");
        io.nccltuner.policy.Mode.parse("enforce");
        new Thread(() -> {}).getName();
        // The JVM's charset for file names and the environment follows the host's locale: under
        // LANG=C or none it is US-ASCII, whose encoder classes are otherwise read from the module image.
        for (String cs : new String[] {"US-ASCII", "ISO-8859-1", "UTF-8"}) {
            java.nio.charset.Charset.forName(cs)
                    .newEncoder()
                    .encode(java.nio.CharBuffer.wrap("aot\ud800"), java.nio.ByteBuffer.allocate(16), true);
            java.nio.charset.Charset.forName(cs).newDecoder();
        }
        java.nio.charset.Charset.forName("ANSI_X3.4-1968");
        Arena arena = Arena.global();
        MemorySegment bridge = nccltj_bridge_t.allocate(arena);
        nccltj_bridge_t.abiVersion(bridge, NcclTunerAbi.NCCL_TUNER_JAVA_ABI_VERSION());
        nccltj_bridge_t.log(bridge, nccltj_log_fn.allocate((logger, level, msg) -> {}, arena));
        nccltj_bridge_t.libraryPath(bridge, arena.allocateFrom("aot-training"));
        if (Bootstrap.start(bridge.address()) != 0) {
            System.err.println("AotTraining: the engine did not start");
            System.exit(1);
        }
        MemorySegment control = nccltj_bridge_t.control(bridge);
        MemorySegment get = nccltj_bridge_t.getCollInfo(bridge);
        MemorySegment call = nccltj_call_t.allocate(arena);
        MemorySegment table = arena.allocate(JAVA_FLOAT, 64);
        MemorySegment nChannels = arena.allocate(JAVA_INT);
        // As the shim passes them: a hardware signature (NCCL and GPU unknown here) on every init,
        // so that reading it is in the cache too, and NCCL's size_t for getChunkSize.
        MemorySegment hw = nccltj_hw_t.allocate(arena);
        nccltj_hw_t.ncclVersion(hw, 0);
        nccltj_hw_t.ccMajor(hw, -1);
        nccltj_hw_t.ccMinor(hw, -1);
        MemorySegment chunk = arena.allocate(JAVA_LONG);
        // Every other init as NCCL 2.28+ makes it (tuner v5: NVLink domains and model constants), so
        // that the classes reading them are in the cache as well.
        MemorySegment nvl = arena.allocate(ncclNvlDomainInfo_v5_t.layout());
        ncclNvlDomainInfo_v5_t.nNvlDomains(nvl, 1);
        ncclNvlDomainInfo_v5_t.minRanksPerNvlDomain(nvl, 1);
        ncclNvlDomainInfo_v5_t.maxRanksPerNvlDomain(nvl, 1);
        MemorySegment constants = arena.allocate(io.nccltuner.policy.TunerConstant.STRUCT_BYTES_V7, Double.BYTES);
        int inits = 0;
        long comm = 0;
        int calls = 0;
        for (int round = 0; round < 200; round++) {
            for (TraceFile.Event ev : trace.events()) {
                if (ev instanceof TraceFile.Init init) {
                    call.fill((byte) 0);
                    nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_INIT());
                    boolean v5 = inits++ % 2 == 1;
                    nccltj_call_t.tunerVersion(
                            call, v5 ? (inits % 4 == 0 ? 7 : 5) : 3); // v7: NCCL 2.32.6's 5-row constants
                    nccltj_call_t.commId(call, v5 ? 0x1234L + inits : 0);
                    nccltj_call_t.nRanks(call, init.nRanks());
                    nccltj_call_t.nNodes(call, init.nNodes());
                    nccltj_call_t.nvlDomainInfo(call, v5 ? nvl.address() : 0);
                    nccltj_call_t.constants(call, v5 ? constants.address() : 0);
                    nccltj_call_t.hw(call, hw.address());
                    nccltj_control_fn.invoke(control, call.address());
                    comm = nccltj_call_t.handle(call);
                } else if (ev instanceof TraceFile.Get g) {
                    TraceCall c = g.call();
                    MemorySegment.copy(c.costs(), 0, table, JAVA_FLOAT, 0, c.costs().length);
                    nChannels.set(JAVA_INT, 0, 0);
                    nccltj_get_coll_info_fn.invoke(
                            get,
                            comm,
                            c.collective().id(),
                            c.nBytes(),
                            c.numPipeOps(),
                            table.address(),
                            c.numAlgo(),
                            c.numProto(),
                            -1,
                            nChannels.address());
                    calls++;
                    if (round == 0) {
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
                } else if (ev instanceof TraceFile.Destroy) {
                    call.fill((byte) 0);
                    nccltj_call_t.op(call, NcclTunerAbi.NCCLTJ_CALL_DESTROY());
                    nccltj_call_t.handle(call, comm);
                    nccltj_control_fn.invoke(control, call.address());
                }
            }
        }
        System.out.println("AotTraining: " + calls + " calls replayed");
    }
}

package io.nccltuner.ffm;

import static io.nccltuner.bindings.NcclTunerAbi.C_INT;
import static io.nccltuner.bindings.NcclTunerAbi.C_LONG;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.ncclNvlDomainInfo_v5_t;
import io.nccltuner.bindings.nccltj_call_t;
import io.nccltuner.bindings.nccltj_measured_t;
import io.nccltuner.bindings.nccltj_series_t;
import io.nccltuner.engine.CallRecorder;
import io.nccltuner.engine.Engine;
import io.nccltuner.engine.Measurement;
import io.nccltuner.policy.Signature;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;

/**
 * Targets of the two FFM upcall stubs: {@link #getCollInfo}, the per-call path, and
 * {@link #control}, which serves init, destroy, the exit-time flush and getChunkSize from an
 * {@code nccltj_call_t} (plugin-shim/include/nccltj_bridge.h, bridge ABI 6). Each catches
 * Throwable: an exception escaping an upcall would print a stack trace and exit the host process
 * (JDK 25 Linker behaviour), so every failure becomes "change nothing" plus one WARN. Each returns
 * 0 (ncclSuccess), but for init's 3.
 *
 * <p>Why one control upcall: every upcall stub with its own C signature costs 7-14 ms of
 * method-handle spinning at the first init on 2 cores (LambdaForm classes that the JDK 25 AOT
 * cache does not keep), so two stubs instead of four take about 20 ms off the first init. The
 * call's fields are read at the offsets jextract computed for {@code nccltj_call_t}, through the
 * same plain value layouts the per-call path uses, so reading them creates no new var handles.
 */
final class Upcalls {
    /*
     * The upcall descriptors, spelled as jextract spells the nccltj_*_fn typedefs (UpcallsTest
     * checks they equal the generated ones). They are written out here because the generated
     * classes' static initialisers also make a downcall handle each, which the plugin never uses
     * and which cost about 10 ms apiece at start-up.
     */

    /** nccltj_control_fn: the address of an nccltj_call_t. */
    static final FunctionDescriptor CONTROL = FunctionDescriptor.of(C_INT, C_LONG);

    /**
     * nccltj_get_coll_info_fn: the address of an nccltj_get_t (bridge 11). control's method type, so
     * that its stub spins no method-handle classes of its own at the first init.
     */
    static final FunctionDescriptor GET_COLL_INFO = FunctionDescriptor.of(C_INT, C_LONG);

    /**
     * nccltj_get_t's field offsets, as jextract lays the struct out (UpcallsTest checks them against
     * the generated class, AbiLayoutTest that class against the C compiler): written out so that the
     * per-call path needs no class of the bindings initialised.
     */
    static final long GET_HANDLE = 0;

    static final long GET_NBYTES = 8;
    static final long GET_COST_TABLE = 16;
    static final long GET_NCHANNELS = 24;
    static final long GET_COLL_TYPE = 32;
    static final long GET_NUM_PIPE_OPS = 36;
    static final long GET_NUM_ALGO = 40;
    static final long GET_NUM_PROTO = 44;
    static final long GET_REG_BUFF = 48;

    /**
     * nccltj_hw_t's field offsets and gpuName's length in bytes, as jextract lays the struct out
     * (UpcallsTest checks them against the generated class, AbiLayoutTest that class against the C
     * compiler). Written out because the generated class's static initialiser makes a var handle
     * for the gpuName array, which spins six BoundMethodHandle species at the first init (about
     * 15 ms on 2 cores; found with -XX:LogClassLoadingCauseFor).
     */
    static final long HW_NCCL_VERSION = 0;

    static final long HW_CC_MAJOR = 4;
    static final long HW_CC_MINOR = 8;
    static final long HW_GPU_NAME = 16;
    static final long HW_GPU_NAME_BYTES = 96;

    /** What the control upcall returns (nccltj_bridge.h): done, or init's step aside for a failure. */
    private static final int CONTROL_OK = NcclTunerAbi.NCCLTJ_CONTROL_OK();

    private static final int CONTROL_FAILED = NcclTunerAbi.NCCLTJ_CONTROL_FAILED();

    /** All of memory: NCCL's table and nChannels are reached by their addresses, no segment per call. */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static volatile Engine engine;
    private static volatile MemorySegment lastLogger = MemorySegment.NULL;
    private static volatile String pendingWarning;
    private static volatile String pendingInfo;

    private Upcalls() {}

    /** The engine, fixed once the first upcall runs: a constant for the JIT on the hot path. */
    private static final class Installed {
        static final Engine ENGINE = engine;
        static final CallRecorder RECORDER = CallRecorder.current(); // record mode (NCCL_TUNER_JAVA_RECORD), or null
    }

    /**
     * Makes the upcall stub for one of this class's static methods.
     *
     * @param name the method: "control" or "getCollInfo"
     * @param descriptor its C signature
     * @param arena owner of the stub
     * @return the stub's address, to store in the bridge
     * @throws ReflectiveOperationException if the method is missing (a build error)
     */
    static MemorySegment stub(String name, FunctionDescriptor descriptor, Arena arena)
            throws ReflectiveOperationException {
        return Linker.nativeLinker()
                .upcallStub(
                        MethodHandles.lookup().findStatic(Upcalls.class, name, descriptor.toMethodType()),
                        descriptor,
                        arena);
    }

    /** The plugin's log: its lines wait there for the shim to take them (null before the start). */
    static volatile NativeLog lines;

    /**
     * After every op: the oldest waiting line into the call's text buffer (the shim gives one with
     * every control call and leaves its level 0), so that the shim logs an init's or a destroy's
     * line with no NCCLTJ_CALL_TAKE_LINE upcall of its own (two more upcalls a communicator made
     * HotSpot compile the upcall's path within GuestIT's reload window: 1.1-4.0 MiB against 0.8
     * before). NCCLTJ_CALL_TAKE_LINE is the op that does nothing but this.
     */
    private static void handOverALine(long call) {
        NativeLog l = lines;
        if (l != null && l.waiting()) {
            l.take(call);
        }
    }

    /** Whether the configuration failed (the engine then changes nothing): init then returns CONTROL_FAILED. */
    private static volatile boolean configFailed;

    static void install(PluginConfig config) {
        configFailed = config.warning() != null && config.engine().mode() == io.nccltuner.policy.Mode.OFF;
        engine = config.engine();
        pendingWarning = config.warning();
        pendingInfo = config.info();
    }

    /**
     * nccltj_control_fn: one of init, destroy, flush or getChunkSize, as the call's op says
     * (NCCLTJ_CALL_*); an unknown op changes nothing.
     *
     * @param call the address of the shim's nccltj_call_t
     * @return init's result (CONTROL_OK, or CONTROL_FAILED where the engine stepped aside for a
     *     failure); CONTROL_OK otherwise
     */
    static int control(long call) {
        try {
            int rc = dispatch(call);
            handOverALine(call);
            return rc;
        } catch (Throwable t) {
            // Nothing may escape an upcall: HotSpot aborts the process on one (a hostile host's
            // exhausted heap at exit reached the catch below, and linking its WARN threw again).
            // No call here that could throw too; init's caller then steps aside, the others ignore it.
            return CONTROL_FAILED;
        }
    }

    /** {@link #control}'s work: the op's method; every one catches its own failures and WARNs. */
    private static int dispatch(long call) {
        int op = ALL.get(JAVA_INT, call + nccltj_call_t.op$offset());
        if (op == NcclTunerAbi.NCCLTJ_CALL_INIT()) {
            return init(call);
        }
        if (op == NcclTunerAbi.NCCLTJ_CALL_TAKE_LINE()) {
            return CONTROL_OK; // the line is handed over after every op (handOverALine)
        }
        long handle = ALL.get(JAVA_LONG, call + nccltj_call_t.handle$offset());
        if (op == NcclTunerAbi.NCCLTJ_CALL_SKIPPED()) {
            return skipped(handle, ALL.get(JAVA_LONG, call + nccltj_call_t.nBytes$offset()));
        }
        if (op == NcclTunerAbi.NCCLTJ_CALL_GET_CHUNK_SIZE()) {
            return getChunkSize(
                    handle,
                    ALL.get(JAVA_INT, call + nccltj_call_t.collType$offset()),
                    ALL.get(JAVA_LONG, call + nccltj_call_t.nBytes$offset()),
                    ALL.get(JAVA_INT, call + nccltj_call_t.algorithm$offset()),
                    ALL.get(JAVA_INT, call + nccltj_call_t.protocol$offset()),
                    ALL.get(JAVA_INT, call + nccltj_call_t.nChannels$offset()),
                    ALL.get(JAVA_LONG, call + nccltj_call_t.chunkSize$offset()));
        }
        if (op == NcclTunerAbi.NCCLTJ_CALL_DESTROY()) {
            return destroy(handle);
        }
        if (op == NcclTunerAbi.NCCLTJ_CALL_FLUSH()) {
            return destroy(0);
        }
        if (op == NcclTunerAbi.NCCLTJ_CALL_MEASURED()) {
            return measured(call);
        }
        return CONTROL_OK;
    }

    /**
     * NCCLTJ_CALL_MEASURED: the profiler's finalize hands over one communicator's measurements
     * (an nccltj_measured_t at {@code measured}, its series array beside it; only read here).
     */
    private static int measured(long call) {
        Engine e = engine;
        MemorySegment logger = MemorySegment.NULL;
        try {
            logger = MemorySegment.ofAddress(ALL.get(JAVA_LONG, call + nccltj_call_t.logger$offset()));
            long m = ALL.get(JAVA_LONG, call + nccltj_call_t.measured$offset());
            if (m == 0) {
                return CONTROL_OK;
            }
            int n = ALL.get(JAVA_INT, m + nccltj_measured_t.nSeries$offset());
            long series = ALL.get(JAVA_LONG, m + nccltj_measured_t.series$offset());
            long size = nccltj_series_t.layout().byteSize();
            java.util.List<Measurement.Series> list = new java.util.ArrayList<>();
            for (int i = 0; i < n && series != 0 && i < NcclTunerAbi.NCCLTJ_MAX_SERIES(); i++) {
                long s = series + i * size;
                long[] hist = new long[NcclTunerAbi.NCCLTJ_HIST_BUCKETS()];
                for (int b = 0; b < hist.length; b++) {
                    hist[b] = Integer.toUnsignedLong(ALL.get(JAVA_INT, s + nccltj_series_t.hist$offset() + 4L * b));
                }
                list.add(new Measurement.Series(
                        ALL.get(JAVA_INT, s + nccltj_series_t.collType$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.bucket$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.arm$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.decided$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.decidedChannels$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.executed$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.nChannels$offset()),
                        ALL.get(JAVA_INT, s + nccltj_series_t.kernelChannels$offset()),
                        ALL.get(JAVA_LONG, s + nccltj_series_t.count$offset()),
                        ALL.get(JAVA_LONG, s + nccltj_series_t.timed$offset()),
                        ALL.get(JAVA_DOUBLE, s + nccltj_series_t.sumUs$offset()),
                        ALL.get(JAVA_DOUBLE, s + nccltj_series_t.sumSqUs$offset()),
                        ALL.get(JAVA_DOUBLE, s + nccltj_series_t.minUs$offset()),
                        ALL.get(JAVA_DOUBLE, s + nccltj_series_t.maxUs$offset()),
                        hist));
            }
            Measurement meas = new Measurement(
                    ALL.get(JAVA_LONG, m + nccltj_measured_t.commId$offset()),
                    ALL.get(JAVA_INT, m + nccltj_measured_t.rank$offset()),
                    ALL.get(JAVA_INT, m + nccltj_measured_t.nRanks$offset()),
                    ALL.get(JAVA_INT, m + nccltj_measured_t.nNodes$offset()),
                    ALL.get(JAVA_INT, m + nccltj_measured_t.profilerVersion$offset()),
                    ALL.get(JAVA_INT, m + nccltj_measured_t.joined$offset()) != 0,
                    ALL.get(JAVA_LONG, m + nccltj_measured_t.collectives$offset()),
                    ALL.get(JAVA_LONG, m + nccltj_measured_t.unjoined$offset()),
                    ALL.get(JAVA_LONG, m + nccltj_measured_t.untimed$offset()),
                    ALL.get(JAVA_LONG, m + nccltj_measured_t.unaggregated$offset()),
                    ALL.get(JAVA_LONG, m + nccltj_measured_t.decisionsDropped$offset()),
                    list);
            e.measured(meas, logger);
        } catch (Throwable t) {
            try {
                fail(e, "measured", t, logger);
            } catch (Throwable ignored) {
                // the WARN's own call may throw (out of memory while linking it): nothing escapes
            }
        }
        return CONTROL_OK;
    }

    /**
     * NCCLTJ_CALL_INIT: opens a communicator and writes its handle into the call; logs pending
     * notices once. nvlDomainInfo and constants are NCCL's addresses (0 before tuner v5), hw the
     * shim's nccltj_hw_t. Returns CONTROL_OK, or CONTROL_FAILED (ncclInternalError) when a failure
     * made the engine step aside (it logged the WARN): the shim passes that on only under NCCL_TUNER_JAVA_ON_ERROR=fail.
     */
    private static int init(long call) {
        Engine e = engine;
        MemorySegment logger = MemorySegment.NULL;
        try {
            logger = MemorySegment.ofAddress(ALL.get(JAVA_LONG, call + nccltj_call_t.logger$offset()));
            long nRanks = ALL.get(JAVA_LONG, call + nccltj_call_t.nRanks$offset());
            long nNodes = ALL.get(JAVA_LONG, call + nccltj_call_t.nNodes$offset());
            long constants = ALL.get(JAVA_LONG, call + nccltj_call_t.constants$offset());
            lastLogger = logger;
            NativeLog.latestLogger = logger;
            String w = pendingWarning;
            String i = pendingInfo;
            if (w != null || i != null) {
                synchronized (Upcalls.class) {
                    if (pendingWarning != null) {
                        e.log().log(logger, io.nccltuner.engine.TunerLog.WARN, pendingWarning);
                        pendingWarning = null;
                    }
                    if (pendingInfo != null) {
                        e.log().log(logger, io.nccltuner.engine.TunerLog.INFO, pendingInfo);
                        pendingInfo = null;
                    }
                }
            }
            Signature sig = signature(
                    ALL.get(JAVA_INT, call + nccltj_call_t.tunerVersion$offset()),
                    ALL.get(JAVA_LONG, call + nccltj_call_t.commId$offset()),
                    ALL.get(JAVA_LONG, call + nccltj_call_t.nvlDomainInfo$offset()),
                    ALL.get(JAVA_LONG, call + nccltj_call_t.hw$offset()));
            long h = e.init(
                    nRanks,
                    nNodes,
                    logger,
                    sig,
                    constants == 0
                            ? MemorySegment.NULL
                            : ALL.asSlice(
                                    constants, io.nccltuner.policy.TunerConstant.structBytes(sig.tunerVersion())));
            ALL.set(JAVA_LONG, call + nccltj_call_t.handle$offset(), h);
            CallRecorder rec = CallRecorder.current();
            if (rec != null) {
                rec.init(h, nRanks, nNodes);
            }
        } catch (Throwable t) {
            try {
                fail(e, "init", t, logger);
            } catch (Throwable ignored) {
                // the WARN's own call may throw (out of memory while linking it): nothing escapes
            }
            return CONTROL_FAILED;
        }
        return configFailed ? CONTROL_FAILED : CONTROL_OK;
    }

    /** The signature from the shim's nccltj_hw_t and NCCL's ncclNvlDomainInfo_v5_t (when given). */
    private static Signature signature(int tunerVersion, long commId, long nvlDomainInfo, long hw) {
        int nvl = -1;
        int minR = -1;
        int maxR = -1;
        if (nvlDomainInfo != 0) {
            nvl = ALL.get(JAVA_INT, nvlDomainInfo + ncclNvlDomainInfo_v5_t.nNvlDomains$offset());
            minR = ALL.get(JAVA_INT, nvlDomainInfo + ncclNvlDomainInfo_v5_t.minRanksPerNvlDomain$offset());
            maxR = ALL.get(JAVA_INT, nvlDomainInfo + ncclNvlDomainInfo_v5_t.maxRanksPerNvlDomain$offset());
        }
        int version = -1;
        int major = -1;
        int minor = -1;
        String gpu = "";
        if (hw != 0) {
            version = ALL.get(JAVA_INT, hw + HW_NCCL_VERSION);
            major = ALL.get(JAVA_INT, hw + HW_CC_MAJOR);
            minor = ALL.get(JAVA_INT, hw + HW_CC_MINOR);
            gpu = gpuName(hw + HW_GPU_NAME);
        }
        return new Signature(tunerVersion, commId, nvl, minR, maxR, version, gpu, major, minor);
    }

    /** The GPU name last read, with its bytes up to the int holding its NUL. */
    private record GpuName(int[] words, String name) {}

    private static volatile GpuName lastGpu = new GpuName(new int[0], "");

    /**
     * The NUL-terminated gpuName at {@code at}: the last one read if its bytes are the same (an
     * init reads them as ints up to the NUL, a few reads, instead of getString's strlen byte by
     * byte, which ran interpreted at every init), else read with getString as before.
     */
    private static String gpuName(long at) {
        GpuName last = lastGpu;
        int[] words = last.words();
        int n = 0;
        boolean same = true;
        for (long off = 0; off < HW_GPU_NAME_BYTES; off += Integer.BYTES) {
            int w = ALL.get(JAVA_INT, at + off);
            same = same && n < words.length && words[n] == w;
            n++;
            if (((w - 0x01010101) & ~w & 0x80808080) != 0) { // a zero byte: the NUL is in this int
                if (same && n == words.length) {
                    return last.name();
                }
                break;
            }
        }
        String name = ALL.asSlice(at, HW_GPU_NAME_BYTES).getString(0);
        int[] read = new int[Math.min(n, (int) (HW_GPU_NAME_BYTES / Integer.BYTES))];
        for (int i = 0; i < read.length; i++) {
            read[i] = ALL.get(JAVA_INT, at + (long) i * Integer.BYTES);
        }
        if (((read[read.length - 1] - 0x01010101) & ~read[read.length - 1] & 0x80808080) != 0) {
            lastGpu = new GpuName(read, name);
        }
        return name;
    }

    /**
     * nccltj_get_coll_info_fn: the hot path; {@code get} is the address of the shim's nccltj_get_t,
     * whose costTable and nChannels are NCCL's addresses.
     *
     * @return the call's decision code (engine.Decision), 0 after a failure
     */
    static int getCollInfo(long get) {
        try {
            long handle = ALL.get(JAVA_LONG, get + GET_HANDLE);
            int collType = ALL.get(JAVA_INT, get + GET_COLL_TYPE);
            long nBytes = ALL.get(JAVA_LONG, get + GET_NBYTES);
            int numPipeOps = ALL.get(JAVA_INT, get + GET_NUM_PIPE_OPS);
            long costTable = ALL.get(JAVA_LONG, get + GET_COST_TABLE);
            int numAlgo = ALL.get(JAVA_INT, get + GET_NUM_ALGO);
            int numProto = ALL.get(JAVA_INT, get + GET_NUM_PROTO);
            long nChannels = ALL.get(JAVA_LONG, get + GET_NCHANNELS);
            CallRecorder rec = Installed.RECORDER;
            if (rec != null) { // before the engine edits the table: the table as NCCL passed it
                record(rec, handle, collType, nBytes, numPipeOps, costTable, numAlgo, numProto, nChannels);
            }
            return Installed.ENGINE.getCollInfo(
                    handle,
                    collType,
                    nBytes,
                    numPipeOps,
                    ALL,
                    costTable,
                    numAlgo,
                    numProto,
                    ALL.get(JAVA_INT, get + GET_REG_BUFF),
                    ALL,
                    nChannels);
        } catch (Throwable t) {
            try {
                fail(engine, "getCollInfo", t, lastLogger);
            } catch (Throwable ignored) {
                // the WARN's own call may throw (out of memory while linking it): nothing escapes
            }
        }
        return 0;
    }

    /**
     * Record mode's copy of a call, apart: a failure there must not keep the call from the engine,
     * which counts it in the call index (docs/canary.md).
     */
    private static void record(
            CallRecorder rec,
            long handle,
            int collType,
            long nBytes,
            int numPipeOps,
            long costTable,
            int numAlgo,
            int numProto,
            long nChannels) {
        try {
            rec.get(handle, collType, nBytes, numPipeOps, ALL, costTable, numAlgo, numProto, ALL, nChannels);
        } catch (Throwable t) {
            fail(engine, "getCollInfo", t, lastLogger);
        }
    }

    /** NCCLTJ_CALL_SKIPPED: getCollInfo calls the shim did not pass up, counted in the call index. */
    private static int skipped(long handle, long count) {
        try {
            Installed.ENGINE.skipped(handle, count);
        } catch (Throwable t) {
            fail(engine, "skipped", t, lastLogger);
        }
        return CONTROL_OK;
    }

    /** NCCLTJ_CALL_GET_CHUNK_SIZE (tuner v6+): chunkSize is the address of NCCL's size_t. */
    private static int getChunkSize(
            long handle, int collType, long nBytes, int algo, int proto, int nChannels, long chunkSize) {
        try {
            Installed.ENGINE.getChunkSize(handle, collType, nBytes, algo, proto, nChannels, ALL, chunkSize);
        } catch (Throwable t) {
            try {
                fail(engine, "getChunkSize", t, lastLogger);
            } catch (Throwable ignored) {
                // the WARN's own call may throw (out of memory while linking it): nothing escapes
            }
        }
        return CONTROL_OK;
    }

    /**
     * NCCLTJ_CALL_DESTROY: closes a communicator and logs its summary; handle 0 (never a
     * communicator; NCCLTJ_CALL_FLUSH) comes once from the shim's atexit handler and writes out the
     * decision log.
     */
    private static int destroy(long handle) {
        Engine e = engine;
        try {
            CallRecorder rec = CallRecorder.current();
            if (handle == 0) {
                e.flush();
                if (rec != null) {
                    rec.flush();
                }
            } else {
                e.destroy(handle);
                if (rec != null) {
                    rec.destroy(handle, lastLogger, e.log());
                }
            }
        } catch (Throwable t) {
            try {
                fail(e, handle == 0 ? "flush" : "destroy", t, lastLogger);
            } catch (Throwable ignored) {
                // the WARN's own call may throw (out of memory while linking it): nothing escapes
            }
        }
        return CONTROL_OK;
    }

    private static void fail(Engine e, String entry, Throwable t, MemorySegment logger) {
        try {
            if (e != null) {
                e.failed(entry, t, logger);
            }
        } catch (Throwable ignored) {
            // Nothing may escape an upcall; the WARN is best effort.
        }
    }
}

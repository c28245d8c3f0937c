package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.nccltj_bridge_t;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The one JNI entry point. The shim calls {@link #start(long)} once per process, right after it
 * created (or joined) the JVM; from then on NCCL's calls reach {@link Upcalls} through two FFM
 * upcall stubs (getCollInfo and control), with no JNI.
 */
public final class Bootstrap {
    private Bootstrap() {}

    /** The library that started the engine in this JVM; a second copy of the library steps aside. */
    private static String startedBy;

    /**
     * Reads the configuration, builds the engine and writes the upcall stubs into the bridge.
     *
     * @param bridgeAddress address of the shim's {@code nccltj_bridge_t}
     * @return NCCLTJ_START_OK on success; NCCLTJ_START_ABI_MISMATCH if the bridge ABI differs (the
     *     shim then logs the mismatch); NCCLTJ_START_ANOTHER_COPY if another copy of the library
     *     (another path) already started the engine in this JVM: the engine's configuration is per
     *     JVM, so the second copy changes nothing (the shim warns)
     * @throws IllegalStateException if the stubs cannot be made; the shim reports it in its one WARN
     *     line and changes nothing
     */
    public static int start(long bridgeAddress) {
        try {
            // The bridge's pointers are read and written as JAVA_LONG (LP64 Linux, the only target:
            // AbiLayoutTest checks the offsets and the 8-byte pointers against the C compiler), not
            // through jextract's ADDRESS accessors: their var handles spin 12 LambdaForm classes at
            // the first init that the AOT cache does not keep (-XX:LogClassLoadingCauseFor, issue 23).
            MemorySegment bridge = MemorySegment.ofAddress(bridgeAddress).reinterpret(nccltj_bridge_t.sizeof());
            nccltj_bridge_t.engineAbiVersion(bridge, NcclTunerAbi.NCCL_TUNER_JAVA_ABI_VERSION());
            if (nccltj_bridge_t.abiVersion(bridge) != NcclTunerAbi.NCCL_TUNER_JAVA_ABI_VERSION()) {
                return NcclTunerAbi.NCCLTJ_START_ABI_MISMATCH();
            }
            synchronized (Bootstrap.class) {
                if (startedBy != null) {
                    return NcclTunerAbi.NCCLTJ_START_ANOTHER_COPY();
                }
                long path = bridge.get(JAVA_LONG, nccltj_bridge_t.libraryPath$offset());
                startedBy = path == 0
                        ? ""
                        : MemorySegment.ofAddress(path).reinterpret(4096).getString(0);
            }
            NativeLog log = new NativeLog(bridge.address() + nccltj_bridge_t.linesQueued$offset());
            Upcalls.lines = log;
            if (System.getProperty("nccltj.library") != null) {
                // The shim created this JVM: nothing in it may write to the host's fds 1 and 2.
                System.setOut(new LineToLog(log, "System.out"));
                System.setErr(new LineToLog(log, "System.err"));
            }
            // Reading the policy (YAML parse, compile) and making the upcall stubs each take tens of
            // milliseconds on a fresh JVM; they are independent, so the policy is read on a second
            // thread meanwhile (measured with a valid AOT cache: policy 37-54 ms beside 60-80 ms of stubs).
            // A plain thread and Thread.join, not a CompletableFuture: waiting on a future that is not
            // done yet loads ForkJoinPool's blocking classes from the module image (not in the AOT
            // cache when the training run never waited), about 1 MiB resident and a few ms.
            // The control stub is made by whichever thread is free first: the second thread after a
            // quick compiled-policy read (with the AOT cache), this one after the getCollInfo stub when
            // a YAML parse keeps the second thread busy (no cache: 150 ms and more).
            Arena arena = Arena.global(); // stubs live as long as the process, like the JVM
            PluginConfig[] config = new PluginConfig[1];
            MemorySegment[] control = new MemorySegment[1];
            Throwable[] configFailure = new Throwable[1];
            java.util.concurrent.atomic.AtomicBoolean controlClaimed = new java.util.concurrent.atomic.AtomicBoolean();
            Thread reader = Thread.ofPlatform()
                    .daemon()
                    .name("nccl-tuner-java-start")
                    .start(() -> {
                        try {
                            config[0] = PluginConfig.fromEnvironment(System.getenv(), log);
                            if (controlClaimed.compareAndSet(false, true)) {
                                control[0] = Upcalls.stub("control", Upcalls.CONTROL, arena);
                            }
                        } catch (Throwable t) {
                            configFailure[0] = t;
                        }
                    });
            MemorySegment get = Upcalls.stub("getCollInfo", Upcalls.GET_COLL_INFO, arena);
            MemorySegment ownControl =
                    controlClaimed.compareAndSet(false, true) ? Upcalls.stub("control", Upcalls.CONTROL, arena) : null;
            reader.join();
            if (configFailure[0] != null) {
                throw configFailure[0];
            }
            if (ownControl != null) {
                control[0] = ownControl;
            }
            Upcalls.install(config[0]);
            bridge.set(JAVA_LONG, nccltj_bridge_t.getCollInfo$offset(), get.address());
            bridge.set(JAVA_LONG, nccltj_bridge_t.control$offset(), control[0].address());
            return NcclTunerAbi.NCCLTJ_START_OK();
        } catch (Throwable t) {
            throw new IllegalStateException("engine start failed: " + t, t);
        }
    }
}

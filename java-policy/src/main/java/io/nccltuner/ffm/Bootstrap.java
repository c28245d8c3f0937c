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
            // One thread: the policy, then the two upcall stubs (bridge 11: one method type, so the
            // second stub spins nothing). A second thread reading the policy meanwhile saved wall
            // time while the nine-argument getCollInfo stub spun its own classes; a Java thread that
            // ends leaves HotSpot's guard pages at the low end of its stack PROT_NONE (its exit
            // uncommits them), and glibc hands that stack to the host's next thread of about its
            // size (found by a hostile host, 2026-12-03: a host thread that never called the plugin
            // died of SIGSEGV in a deep recursion).
            Arena arena = Arena.global(); // stubs live as long as the process, like the JVM
            PluginConfig config = PluginConfig.fromEnvironment(System.getenv(), log);
            MemorySegment control = Upcalls.stub("control", Upcalls.CONTROL, arena);
            MemorySegment get = Upcalls.stub("getCollInfo", Upcalls.GET_COLL_INFO, arena);
            Upcalls.install(config);
            bridge.set(JAVA_LONG, nccltj_bridge_t.getCollInfo$offset(), get.address());
            bridge.set(JAVA_LONG, nccltj_bridge_t.control$offset(), control.address());
            return NcclTunerAbi.NCCLTJ_START_OK();
        } catch (Throwable t) {
            throw new IllegalStateException("engine start failed: " + t, t);
        }
    }
}

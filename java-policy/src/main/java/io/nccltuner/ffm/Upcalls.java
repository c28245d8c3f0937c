package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.bindings.ncclNvlDomainInfo_v5_t;
import io.nccltuner.bindings.nccltj_hw_t;
import io.nccltuner.engine.CallRecorder;
import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Signature;
import static io.nccltuner.bindings.NcclTunerAbi.C_INT;
import static io.nccltuner.bindings.NcclTunerAbi.C_LONG;
import static io.nccltuner.bindings.NcclTunerAbi.C_POINTER;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;

/**
 * Targets of the four FFM upcall stubs. Each catches Throwable: an exception escaping an upcall
 * would print a stack trace and exit the host process (JDK 25 Linker behaviour), so every failure
 * becomes "change nothing" plus one WARN. Each returns 0 (ncclSuccess).
 */
final class Upcalls {
  /**
   * The upcall descriptors, spelled as jextract spells them for the nccltj_*_fn typedefs
   * (UpcallsTest checks they equal the generated ones). They are written out here because the
   * generated classes' static initialisers also make a downcall handle each, which the plugin
   * never uses and which cost about 10 ms apiece at start-up.
   */
  static final FunctionDescriptor INIT = FunctionDescriptor.of(C_INT, C_INT, C_LONG, C_LONG, C_LONG, C_POINTER,
      C_LONG, C_LONG, C_LONG, C_POINTER);

  /** nccltj_get_coll_info_fn: handle, collType, nBytes, numPipeOps, costTable, numAlgo, numProto, regBuff, nChannels. */
  static final FunctionDescriptor GET_COLL_INFO =
      FunctionDescriptor.of(C_INT, C_LONG, C_INT, C_LONG, C_INT, C_LONG, C_INT, C_INT, C_INT, C_LONG);

  /** nccltj_get_chunk_size_fn: handle, collType, nBytes, algo, proto, nChannels, chunkSize. */
  static final FunctionDescriptor GET_CHUNK_SIZE =
      FunctionDescriptor.of(C_INT, C_LONG, C_INT, C_LONG, C_INT, C_INT, C_INT, C_LONG);

  /** nccltj_destroy_fn. */
  static final FunctionDescriptor DESTROY = FunctionDescriptor.of(C_INT, C_LONG);

  /** All of memory: NCCL's table and nChannels are reached by their addresses, no segment per call. */
  private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

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
   * @param name the method: "init", "getCollInfo", "getChunkSize" or "destroy"
   * @param descriptor its C signature
   * @param arena owner of the stub
   * @return the stub's address, to store in the bridge
   * @throws ReflectiveOperationException if the method is missing (a build error)
   */
  static MemorySegment stub(String name, FunctionDescriptor descriptor, Arena arena) throws ReflectiveOperationException {
    return Linker.nativeLinker().upcallStub(
        MethodHandles.lookup().findStatic(Upcalls.class, name, descriptor.toMethodType()), descriptor, arena);
  }

  /** Whether the configuration failed (the engine then changes nothing): init then returns 3. */
  private static volatile boolean configFailed;

  static void install(PluginConfig config) {
    configFailed = config.warning() != null && config.engine().mode() == io.nccltuner.policy.Mode.OFF;
    engine = config.engine();
    pendingWarning = config.warning();
    pendingInfo = config.info();
  }

  /**
   * nccltj_init_fn: opens a communicator and writes its handle; logs pending notices once.
   * nvlDomainInfo and constants are NCCL's addresses (0 before tuner v5), hw the shim's
   * nccltj_hw_t. Returns 0, or 3 (ncclInternalError) when a failure made the engine step aside
   * (it logged the WARN): the shim passes that on only under NCCL_TUNER_JAVA_ON_ERROR=fail.
   */
  static int init(int tunerVersion, long commId, long nRanks, long nNodes, MemorySegment logger,
      long nvlDomainInfo, long constants, long hw, MemorySegment handle) {
    Engine e = engine;
    try {
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
      long h = e.init(nRanks, nNodes, logger, signature(tunerVersion, commId, nvlDomainInfo, hw),
          constants == 0 ? MemorySegment.NULL : ALL.asSlice(constants, io.nccltuner.policy.TunerConstant.STRUCT_BYTES));
      handle.reinterpret(JAVA_LONG.byteSize()).set(JAVA_LONG, 0, h);
      CallRecorder rec = CallRecorder.current();
      if (rec != null) {
        rec.init(h, nRanks, nNodes);
      }
    } catch (Throwable t) {
      fail(e, "init", t, logger);
      return 3;
    }
    return configFailed ? 3 : 0;
  }

  /** The signature from the shim's nccltj_hw_t and NCCL's ncclNvlDomainInfo_v5_t (when given). */
  private static Signature signature(int tunerVersion, long commId, long nvlDomainInfo, long hw) {
    int nvl = -1;
    int minR = -1;
    int maxR = -1;
    if (nvlDomainInfo != 0) {
      MemorySegment d = ALL.asSlice(nvlDomainInfo, ncclNvlDomainInfo_v5_t.sizeof());
      nvl = ncclNvlDomainInfo_v5_t.nNvlDomains(d);
      minR = ncclNvlDomainInfo_v5_t.minRanksPerNvlDomain(d);
      maxR = ncclNvlDomainInfo_v5_t.maxRanksPerNvlDomain(d);
    }
    int version = -1;
    int major = -1;
    int minor = -1;
    String gpu = "";
    if (hw != 0) {
      MemorySegment h = ALL.asSlice(hw, nccltj_hw_t.sizeof());
      version = nccltj_hw_t.ncclVersion(h);
      major = nccltj_hw_t.ccMajor(h);
      minor = nccltj_hw_t.ccMinor(h);
      gpu = nccltj_hw_t.gpuName(h).getString(0);
    }
    return new Signature(tunerVersion, commId, nvl, minR, maxR, version, gpu, major, minor);
  }

  /** nccltj_get_coll_info_fn: the hot path; costTable and nChannels are NCCL's addresses. */
  static int getCollInfo(long handle, int collType, long nBytes, int numPipeOps, long costTable,
      int numAlgo, int numProto, int regBuff, long nChannels) {
    try {
      CallRecorder rec = Installed.RECORDER;
      if (rec != null) { // before the engine edits the table: the table as NCCL passed it
        rec.get(handle, collType, nBytes, numPipeOps, ALL, costTable, numAlgo, numProto, ALL, nChannels);
      }
      Installed.ENGINE.getCollInfo(handle, collType, nBytes, numPipeOps, ALL, costTable, numAlgo, numProto, regBuff,
          ALL, nChannels);
    } catch (Throwable t) {
      fail(engine, "getCollInfo", t, lastLogger);
    }
    return 0;
  }

  /** nccltj_get_chunk_size_fn (tuner v6+): chunkSize is the address of NCCL's size_t. */
  static int getChunkSize(long handle, int collType, long nBytes, int algo, int proto, int nChannels, long chunkSize) {
    try {
      Installed.ENGINE.getChunkSize(handle, collType, nBytes, algo, proto, nChannels, ALL, chunkSize);
    } catch (Throwable t) {
      fail(engine, "getChunkSize", t, lastLogger);
    }
    return 0;
  }

  /**
   * nccltj_destroy_fn: closes a communicator and logs its summary; handle 0 (never a
   * communicator) comes once from the shim's atexit handler and writes out the decision log.
   */
  static int destroy(long handle) {
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
      fail(e, handle == 0 ? "flush" : "destroy", t, lastLogger);
    }
    return 0;
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

package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;

/**
 * The per-call floor of `make bench` (issue 23 item 1): the bare upcall. A jar whose Bootstrap the
 * shim starts like the engine's (the same libnccl-tuner-java.so and JVM options), with HotSpot's
 * upcall stubs of the engine's: getCollInfo's (nccltj_get_coll_info_fn: the address of an
 * nccltj_get_t) into a static method that returns 0 and reads nothing, and control's, whose init
 * hands back handle 1 so that the shim passes every getCollInfo up. What a call through it costs is
 * the shim, HotSpot's native-to-Java transition and back, and nothing of the engine's.
 *
 * <p>The bridge's layout is plugin-shim/include/nccltj_bridge.h's nccltj_bridge_t (bridge ABI 11),
 * as bench/floor/Bootstrap.java has it; nccltj_call_t's op is its first int, handle the long at 8;
 * NCCLTJ_CALL_INIT is 1.
 */
public final class Bootstrap {
  private static final long GET_COLL_INFO = 16;
  private static final long CONTROL = 24;
  private static final long CALL_BYTES = 16;

  private Bootstrap() {}

  /** control: an init gets handle 1; every other op does nothing. */
  static int control(long call) {
    MemorySegment c = MemorySegment.ofAddress(call).reinterpret(CALL_BYTES);
    if (c.get(JAVA_INT, 0) == 1) {
      c.set(JAVA_LONG, 8, 1L);
    }
    return 0;
  }

  /** getCollInfo: nothing; the decision code 0 (no policy). */
  static int getCollInfo(long get) {
    return 0;
  }

  /** As the engine's Bootstrap.start: 0 once the bridge holds both stubs, 1 on any failure. */
  public static int start(long bridgeAddress) {
    try {
      MemorySegment bridge = MemorySegment.ofAddress(bridgeAddress).reinterpret(CONTROL + 16);
      bridge.set(JAVA_INT, 4, bridge.get(JAVA_INT, 0)); // engineAbiVersion := abiVersion
      Linker linker = Linker.nativeLinker();
      FunctionDescriptor get = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
      FunctionDescriptor ctl = get;
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      bridge.set(ADDRESS, GET_COLL_INFO, linker.upcallStub(
          lookup.findStatic(Bootstrap.class, "getCollInfo", get.toMethodType()), get, Arena.global()));
      bridge.set(ADDRESS, CONTROL, linker.upcallStub(
          lookup.findStatic(Bootstrap.class, "control", ctl.toMethodType()), ctl, Arena.global()));
      return 0;
    } catch (Throwable t) {
      return 1;
    }
  }
}

package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;

/**
 * The start-up floor of `make bench` (issue 23 item 2): a jar whose Bootstrap the shim starts like
 * the engine's (same libnccl-tuner-java.so, same JVM options, an AOT cache made the same way,
 * by this class's main), but which only makes one upcall stub, into an empty static method, and
 * puts it in the bridge's control slot: the first init is then JVM creation, this class, one stub
 * and one upcall (init's control, which leaves the handle 0, so no getCollInfo follows).
 *
 * <p>The bridge's layout is plugin-shim/include/nccltj_bridge.h's nccltj_bridge_t (bridge ABI 10 and 11):
 * int abiVersion, int engineAbiVersion, then the pointers libraryPath, getCollInfo, control, then
 * int linesQueued (left 0: this engine logs nothing) and int reserved.
 */
public final class Bootstrap {
  private static final long ABI_VERSION = 0;
  private static final long ENGINE_ABI_VERSION = 4;
  private static final long GET_COLL_INFO = 16;
  private static final long CONTROL = 24;
  private static final long BRIDGE_BYTES = 40;

  private Bootstrap() {}

  /** The upcall's target: nothing. */
  static int empty(long call) {
    return 0;
  }

  /** As the engine's Bootstrap.start: 0 once the bridge holds the stubs. */
  public static int start(long bridgeAddress) {
    try {
      MemorySegment bridge = MemorySegment.ofAddress(bridgeAddress).reinterpret(BRIDGE_BYTES);
      bridge.set(JAVA_INT, ENGINE_ABI_VERSION, bridge.get(JAVA_INT, ABI_VERSION));
      FunctionDescriptor d = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
      MethodHandle target = MethodHandles.lookup().findStatic(Bootstrap.class, "empty", d.toMethodType());
      MemorySegment stub = Linker.nativeLinker().upcallStub(target, d, Arena.global());
      bridge.set(ADDRESS, CONTROL, stub);
      bridge.set(ADDRESS, GET_COLL_INFO, stub); // never called: the handle stays 0
      return 0;
    } catch (Throwable t) {
      return 1;
    }
  }

  /** The AOT cache's training run: the same start, and the one upcall. */
  public static void main(String[] args) throws Throwable {
    MemorySegment bridge = Arena.global().allocate(BRIDGE_BYTES, 8);
    bridge.set(JAVA_INT, ABI_VERSION, 8);
    if (start(bridge.address()) != 0) {
      System.err.println("floor Bootstrap: start failed");
      System.exit(1);
    }
    MethodHandle control = Linker.nativeLinker().downcallHandle(bridge.get(ADDRESS, CONTROL),
        FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    int rc = (int) control.invokeExact(0L);
    System.out.println("floor Bootstrap: one upcall, rc " + rc);
  }
}

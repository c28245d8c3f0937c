package io.nccltuner.ffm;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.bindings.nccltj_bridge_t;
import io.nccltuner.bindings.nccltj_destroy_fn;
import io.nccltuner.bindings.nccltj_get_chunk_size_fn;
import io.nccltuner.bindings.nccltj_get_coll_info_fn;
import io.nccltuner.bindings.nccltj_hw_t;
import io.nccltuner.bindings.nccltj_init_fn;
import io.nccltuner.bindings.nccltj_log_fn;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The training run for the JDK 25 AOT cache that {@code make dist} ships beside the engine jar
 * ({@code -XX:AOTCacheOutput}): it walks the plugin's start-up path the way the shim does, through
 * {@link Bootstrap#start(long)} with a bridge in native memory, then calls the three upcall stubs
 * over the calls of a captured trace, so the classes, method handles and upcall stubs that a real
 * first init needs are in the cache.
 *
 * <p>Usage: {@code java -XX:AOTCacheOutput=nccl-tuner-java.aot -cp nccl-tuner-java.jar
 * io.nccltuner.ffm.AotTraining [TRACE.csv]} with {@code NCCL_TUNER_JAVA_POLICY} set; without a
 * trace it replays the tensor-parallel decode trace bundled in the jar (captured from NCCL 2.28.9).
 * Exits 0 after printing the number of calls replayed; 1 if the engine did not start.
 */
public final class AotTraining {
  private AotTraining() {}

  /** @param args optionally one trace CSV (the shared trace format) */
  public static void main(String[] args) throws Exception {
    List<String> lines;
    if (args.length > 0) {
      lines = Files.readAllLines(Path.of(args[0]));
    } else {
      try (var in = AotTraining.class.getResourceAsStream("aot-training-trace.csv")) {
        lines = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines().toList();
      }
    }
    // Classes the plugin's start loads that this run would not, so that they are in the cache
    // too (else the JVM opens its module image for them at start: +1 MiB resident): the INFO
    // line's AOT check, NCCL_TUNER_JAVA_MODE's parse, and the generated name of a thread that FFM
    // attaches on its first upcall (NCCL's threads; here the calls come from Java's main thread).
    AotCacheStatus.isMapped(Path.of("/proc/self/maps"), "/");
    io.nccltuner.policy.Mode.parse("enforce");
    new Thread(() -> { }).getName();
    Arena arena = Arena.global();
    MemorySegment bridge = nccltj_bridge_t.allocate(arena);
    nccltj_bridge_t.abiVersion(bridge, NcclTunerAbi.NCCL_TUNER_JAVA_ABI_VERSION());
    nccltj_bridge_t.log(bridge, nccltj_log_fn.allocate((logger, level, msg) -> { }, arena));
    nccltj_bridge_t.libraryPath(bridge, arena.allocateFrom("aot-training"));
    if (Bootstrap.start(bridge.address()) != 0) {
      System.err.println("AotTraining: the engine did not start");
      System.exit(1);
    }
    MemorySegment init = nccltj_bridge_t.init(bridge);
    MemorySegment get = nccltj_bridge_t.getCollInfo(bridge);
    MemorySegment destroy = nccltj_bridge_t.destroy(bridge);
    MemorySegment handle = arena.allocate(JAVA_LONG);
    MemorySegment table = arena.allocate(JAVA_FLOAT, 64);
    MemorySegment nChannels = arena.allocate(JAVA_INT);
    // As the shim passes them: a hardware signature (NCCL and GPU unknown here) on every init,
    // so that reading it is in the cache too, and NCCL's size_t for getChunkSize.
    MemorySegment hw = nccltj_hw_t.allocate(arena);
    nccltj_hw_t.ncclVersion(hw, 0);
    nccltj_hw_t.ccMajor(hw, -1);
    nccltj_hw_t.ccMinor(hw, -1);
    MemorySegment chunk = arena.allocate(JAVA_LONG);
    MemorySegment chunkStub = nccltj_bridge_t.getChunkSize(bridge);
    long comm = 0;
    int calls = 0;
    for (int round = 0; round < 200; round++) {
      for (String line : lines) {
        String[] f = line.split(",");
        if (f[0].equals("init")) {
          nccltj_init_fn.invoke(init, 3, 0L, Long.parseLong(f[2]), Long.parseLong(f[3]), MemorySegment.NULL, 0L, 0L,
              hw.address(), handle);
          comm = handle.get(JAVA_LONG, 0);
        } else if (f[0].equals("get")) {
          int numAlgo = Integer.parseInt(f[7]);
          int numProto = Integer.parseInt(f[8]);
          for (int i = 0; i < numAlgo * numProto; i++) {
            table.setAtIndex(JAVA_FLOAT, i, Float.parseFloat(f[10 + i]));
          }
          nChannels.set(JAVA_INT, 0, 0);
          nccltj_get_coll_info_fn.invoke(get, comm, Integer.parseInt(f[4]), Long.parseLong(f[5]),
              Integer.parseInt(f[6]), table.address(), numAlgo, numProto, -1, nChannels.address());
          calls++;
          if (round == 0) {
            chunk.set(JAVA_LONG, 0, 1L << 20);
            nccltj_get_chunk_size_fn.invoke(chunkStub, comm, Integer.parseInt(f[4]), Long.parseLong(f[5]), 1, 2, 2,
                chunk.address());
          }
        } else if (f[0].equals("destroy")) {
          nccltj_destroy_fn.invoke(destroy, comm);
        }
      }
    }
    System.out.println("AotTraining: " + calls + " calls replayed");
  }
}

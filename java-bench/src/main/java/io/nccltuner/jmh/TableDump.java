package io.nccltuner.jmh;

import io.nccltuner.engine.DecisionTable;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.SizeGrid;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Dumps the DecisionTable the engine compiles for a communicator shape, as text, for the C
 * reference plugin of {@code make bench} (bench/ref_plugin.c), which runs the same lookup over
 * the same three arrays. The arrays {@code head} and {@code chains} are package-private in
 * {@code io.nccltuner.engine}; they are read by reflection so the engine needs no change.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.nccltuner.jmh.TableDump NRANKS NNODES OUT_DIR POLICY.yaml...}
 * writes {@code OUT_DIR/<policy file name without .yaml>.table} for each policy
 * (NCCL_TUNER_JAVA_MODE overrides the policies' mode, as in the plugin). Format:
 * <pre>
 * nccltj-table 1
 * mode enforce|shadow|off
 * rules N sha256 HEX
 * geometry COLLECTIVES BUCKETS STRIDE COUNT
 * head N
 * ints...
 * chains N
 * ints...
 * records N
 * ints...
 * </pre>
 * With no matching profile: {@code mode off} and empty arrays.
 */
public final class TableDump {
    private TableDump() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: TableDump NRANKS NNODES OUT_DIR POLICY.yaml...");
            System.exit(2);
        }
        long nRanks = Long.parseLong(args[0]);
        long nNodes = Long.parseLong(args[1]);
        Path outDir = Path.of(args[2]);
        Files.createDirectories(outDir);
        for (int i = 3; i < args.length; i++) {
            Path in = Path.of(args[i]);
            String base = in.getFileName().toString().replaceFirst("\\.ya?ml$", "");
            dump(in, nRanks, nNodes, outDir.resolve(base + ".table"));
        }
    }

    private static void dump(Path in, long nRanks, long nNodes, Path out) throws Exception {
        Policy policy = PolicyLoader.load(in);
        Mode mode = policy.mode();
        String env = System.getenv("NCCL_TUNER_JAVA_MODE");
        if (env != null && !env.isBlank()) {
            mode = Mode.parse(env.trim());
        }
        Policy.Profile p = policy.profileFor(nRanks, nNodes);
        int[] head = new int[0];
        int[] chains = new int[0];
        int[] rules = new int[0];
        String sha = "-";
        int count = 0;
        if (p == null) {
            mode = Mode.OFF;
        } else {
            DecisionTable t = DecisionTable.compile(p);
            head = ints(t, "head");
            chains = ints(t, "chains");
            rules = t.rules();
            sha = t.sha256();
            count = t.ruleCount();
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out))) {
            w.println("nccltj-table 1");
            w.println("mode " + mode.spelling());
            w.println("rules " + count + " sha256 " + sha);
            w.println("geometry " + Collective.COUNT + " " + SizeGrid.BUCKETS + " " + DecisionTable.STRIDE + " "
                    + DecisionTable.CANDIDATE_COUNT);
            array(w, "head", head);
            array(w, "chains", chains);
            array(w, "records", rules);
        }
        System.out.println("TableDump: " + out + ": mode " + mode.spelling() + ", " + count + " rules, sha256 " + sha);
    }

    private static int[] ints(DecisionTable t, String name) throws ReflectiveOperationException {
        Field f = DecisionTable.class.getDeclaredField(name);
        f.setAccessible(true);
        return (int[]) f.get(t);
    }

    private static void array(PrintWriter w, String name, int[] a) throws IOException {
        w.println(name + " " + a.length);
        for (int i = 0; i < a.length; i++) {
            w.print(a[i]);
            w.print((i % 16 == 15 || i == a.length - 1) ? '\n' : ' ');
        }
    }
}

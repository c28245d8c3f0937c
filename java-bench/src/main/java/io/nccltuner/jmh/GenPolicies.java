package io.nccltuner.jmh;

import io.nccltuner.engine.DecisionTable;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.SizeGrid;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the policies of the rule-count (O(1)) benchmark and checks that each loads with
 * {@link PolicyLoader} and compiles. Every policy's profile for nRanks=2, nNodes=2 covers every
 * AllReduce size and numPipeOps with the same two candidates (TREE/SIMPLE, then RING/SIMPLE), so on
 * the AllReduce rows of the traces every policy makes the same decision on every call and only
 * the rule count differs:
 * <ul>
 *   <li>{@code rules-0.yaml}: one matching profile with no rules (the upcall alone: every lookup misses);
 *   <li>{@code rules-1.yaml}: one rule (AllReduce, every size, any numPipeOps);
 *   <li>{@code rules-100.yaml}: 25 AllReduce size ranges x 4 numPipeOps ranges;
 *   <li>{@code rules-10000.yaml}: three profiles; the matched one has the most a profile can hold,
 *       5 collectives x 248 size ranges x 4 numPipeOps ranges = 4,960 rules (a size range's lower
 *       bound must be below 2^63, so buckets 247..251 share the last, open-ended range), the other
 *       two (nRanks 8 and 4) hold 4,960 and 80;
 *   <li>{@code rules-10000-last.yaml}: the same, with the numPipeOps range the traces use (1..4)
 *       written last in each bucket, so every lookup walks the longest chain (4 entries).
 *   <li>{@code rules-mix.yaml}: the profiles above side by side in one policy, told apart by shape:
 *       nRanks=2/nNodes=2 the one rule, 3/3 the 100, 4/4 the 4,960 with that range first, 5/5 the
 *       4,960 with it last, 6/6 none. {@code bench_driver --shapes 2x2,3x3,4x4,5x5,6x6} times a
 *       communicator of each in one process, so that the rule counts are compared in the same
 *       process (the per-process spread of a machine's own does not enter the comparison).
 * </ul>
 * In the other policies that range is written first in each bucket, so a lookup stops at the first
 * chain entry in all of them.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.nccltuner.jmh.GenPolicies OUT_DIR}. Prints one line
 * per policy (rules in the file, rules compiled for nRanks=2/nNodes=2, SHA-256); exits 1 if a policy
 * is refused.
 */
public final class GenPolicies {
    private static final String[] COLLS = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
    /** Size ranges per collective in a full profile: buckets 0..246, then [lowerBound(247), open). */
    static final int SIZE_RANGES = 248;

    private static final String CANDS =
            "candidates: [{algorithm: TREE, protocol: SIMPLE}, {algorithm: RING, protocol: SIMPLE}]";
    private static final String[] PIPE_FIRST = {"{min: 1, max: 4}", "0", "5", "{min: 6}"};
    private static final String[] PIPE_LAST = {"0", "5", "{min: 6}", "{min: 1, max: 4}"};

    private GenPolicies() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: GenPolicies OUT_DIR");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        write(
                out.resolve("rules-0.yaml"),
                policy("bench-rules-0", profile("two-ranks", "{nRanks: 2, nNodes: 2}", List.of())));
        write(
                out.resolve("rules-1.yaml"),
                policy(
                        "bench-rules-1",
                        profile(
                                "two-ranks",
                                "{nRanks: 2, nNodes: 2}",
                                List.of("{collective: AllReduce, bytes: {from: 0}, " + CANDS + "}"))));
        write(
                out.resolve("rules-100.yaml"),
                policy(
                        "bench-rules-100",
                        profile("two-ranks", "{nRanks: 2, nNodes: 2}", sizeRanges(4, 25, PIPE_FIRST))));
        for (String variant : new String[] {"", "-last"}) {
            String[] pipe = variant.isEmpty() ? PIPE_FIRST : PIPE_LAST;
            List<String> full = new ArrayList<>();
            for (int c = 0; c < COLLS.length; c++) {
                full.addAll(sizeRanges(c, SIZE_RANGES, pipe));
            }
            List<String> small = new ArrayList<>();
            for (int c = 0; c < COLLS.length; c++) {
                small.addAll(sizeRanges(c, 4, PIPE_FIRST));
            }
            write(
                    out.resolve("rules-10000" + variant + ".yaml"),
                    policy(
                            "bench-rules-10000" + variant,
                            profile("eight-ranks", "{nRanks: 8, nNodes: 1}", full)
                                    + profile("two-ranks-large", "{nRanks: 2, nNodes: 2}", full)
                                    + profile("four-ranks", "{nRanks: 4, nNodes: 1}", small)));
        }
        List<String> fullFirst = new ArrayList<>();
        List<String> fullLast = new ArrayList<>();
        for (int c = 0; c < COLLS.length; c++) {
            fullFirst.addAll(sizeRanges(c, SIZE_RANGES, PIPE_FIRST));
            fullLast.addAll(sizeRanges(c, SIZE_RANGES, PIPE_LAST));
        }
        write(
                out.resolve("rules-mix.yaml"),
                policy(
                        "bench-rules-mix",
                        profile(
                                        "one-rule",
                                        "{nRanks: 2, nNodes: 2}",
                                        List.of("{collective: AllReduce, bytes: {from: 0}, " + CANDS + "}"))
                                + profile("hundred-rules", "{nRanks: 3, nNodes: 3}", sizeRanges(4, 25, PIPE_FIRST))
                                + profile("full-first", "{nRanks: 4, nNodes: 4}", fullFirst)
                                + profile("full-last", "{nRanks: 5, nNodes: 5}", fullLast)
                                + profile("no-rules", "{nRanks: 6, nNodes: 6}", List.of())));
        int bad = 0;
        for (String f : new String[] {
            "rules-0.yaml",
            "rules-1.yaml",
            "rules-100.yaml",
            "rules-10000.yaml",
            "rules-10000-last.yaml",
            "rules-mix.yaml"
        }) {
            Path p = out.resolve(f);
            try {
                Policy pol = PolicyLoader.load(p);
                int total =
                        pol.profiles().stream().mapToInt(x -> x.rules().size()).sum();
                DecisionTable t = DecisionTable.compile(pol.profileFor(2, 2));
                System.out.printf(
                        "%s: %d rules in %d profiles, %d compiled for nRanks=2 nNodes=2, %d KiB, sha256 %s%n",
                        p, total, pol.profiles().size(), t.ruleCount(), Files.size(p) / 1024, t.sha256());
            } catch (PolicyException e) {
                System.err.println("GenPolicies: " + p + " refused: " + e.getMessage());
                bad++;
            }
        }
        System.exit(bad == 0 ? 0 : 1);
    }

    /** n contiguous size ranges covering [0, open) for one collective, each split 4 ways by numPipeOps. */
    private static List<String> sizeRanges(int coll, int n, String[] pipe) {
        List<String> rules = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            int lo = (int) ((long) k * SIZE_RANGES / n);
            int hi = (int) ((long) (k + 1) * SIZE_RANGES / n);
            String bytes = k == n - 1
                    ? "{from: " + SizeGrid.lowerBound(lo) + "}"
                    : "{from: " + SizeGrid.lowerBound(lo) + ", to: " + SizeGrid.lowerBound(hi) + "}";
            for (String p : pipe) {
                rules.add("{collective: " + COLLS[coll] + ", bytes: " + bytes + ", numPipeOps: " + p + ", " + CANDS
                        + "}");
            }
        }
        return rules;
    }

    private static String profile(String name, String match, List<String> rules) {
        StringBuilder sb = new StringBuilder();
        sb.append("  - name: ").append(name).append('\n');
        sb.append("    match: ").append(match).append('\n');
        if (rules.isEmpty()) {
            sb.append("    rules: []\n");
        } else {
            sb.append("    rules:\n");
            for (String r : rules) {
                sb.append("      - ").append(r).append('\n');
            }
        }
        return sb.toString();
    }

    private static String policy(String name, String profiles) {
        return "# Generated by io.nccltuner.jmh.GenPolicies for `make bench` (rule-count benchmark).\n"
                + "schema: nccl-tuner-java/v1\nname: " + name + "\nmode: enforce\nprofiles:\n" + profiles;
    }

    private static void write(Path p, String text) throws IOException {
        Files.writeString(p, text);
    }
}

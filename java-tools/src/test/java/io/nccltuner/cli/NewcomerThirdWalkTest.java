package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 (third newcomer walk, from the tarball): what compile promised, counted and said about
 * its inputs. Inputs: the shared H200 sweep (replicate 1, a fixture) with NCCL 2.28.9's log of the
 * same testbed ({@code tests/traces/nccl_sweep.rank0.log}: its cost table gives RING/LL128 bandwidth
 * 0.0 for every collective), and small nccl-tests outputs written here from the format.
 */
class NewcomerThirdWalkTest {
    @TempDir
    Path tmp;

    static final String SWEEP = CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv");
    static final String LOG = CliRun.trace("nccl_sweep.rank0.log");

    /** {@code compile SWEEP --nccl-log LOG} and more options; exit 0 asserted. */
    private static CliRun compiled(String... more) {
        List<String> a = new java.util.ArrayList<>(List.of("compile", SWEEP, "--nccl-log", LOG));
        a.addAll(List.of(more));
        CliRun r = CliRun.run(a.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        return r;
    }

    /** The report with runs of blanks as one, so a row reads as its cells. */
    private static String cells(String out) {
        return out.replaceAll(" +", " ");
    }

    /**
     * Item 2. Before: row 128 B .. 256 B "RING/LL128 ... 0.00%" and the rule {@code RING/LL128 +0.00%
     * RING/SIMPLE +0.65%}, though the log's table never offers RING/LL128 (the engine passes over
     * it). After: the row prices RING/SIMPLE, 0.65%, says why, and no rule names RING/LL128.
     */
    @Test
    void compilePricesTheCandidateNcclOffersNotOneItNeverOffers() {
        CliRun r = compiled();
        String t = cells(r.out());
        assertTrue(
                t.contains(
                        "\n128 B .. 256 B auto~RING/LL 4527.936 RING/LL128 2441.216 RING/SIMPLE 85.48% 0.65% 0.04% [1]\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains("  [1] RING/LL128 left out: NCCL never offers it (bandwidth 0.0 in the cost table at "
                                + LOG + ":32): 3 of 25 sizes\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                "  AllReduce [4 B, 256 B) numPipeOps 1: RING/SIMPLE +0.68% | NCCL RING/LL loses >= 84.50%\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                "  AllReduce [256 B, 1 KiB) numPipeOps 1: RING/SIMPLE/1ch +0.68% RING/SIMPLE +0.69% | NCCL "
                                        + "RING/LL loses >= 85.34%\n"),
                r.out());
        assertFalse(r.out().contains("RING/LL128 +"), "no rule names RING/LL128: " + r.out());
        assertTrue(r.out().contains("\nrules: 5\n"), r.out());
    }

    /**
     * Item 4. Before: a decision log's calls were "all calls of the workload". A decision log holds
     * only the calls a rule of the running policy matched, and the saving now says so.
     */
    @Test
    void aDecisionLogsSavingSaysWhichCallsItCovers() throws Exception {
        Path log = tmp.resolve("h-vm-1.jsonl");
        Files.writeString(log, """
                {"comm":7,"collective":"AllReduce","nBytes":8,"numPipeOps":1,"ncclPick":"RING/LL","policyPick":"RING/SIMPLE","channels":0,"applied":true}
                {"type":"aggregate","comm":7,"collective":"AllReduce","nBytes":65536,"nRanks":2,"nNodes":2,"count":3,"ncclPick":"RING/SIMPLE","policyPick":"TREE/SIMPLE"}
                {"type":"comm","comm":7,"nRanks":2,"nNodes":2}
                """);
        CliRun r = compiled("--workload", log.toString(), "--summary");
        assertTrue(
                r.out()
                        .contains(
                                "workload AllReduce, nRanks 2, nNodes 2, numPipeOps 1: 4 calls, 4 inside the measured span\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                " of NCCL's time over the 4 priced calls of the decision log, only the calls a rule of "
                                        + "the policy the plugin ran matched (a trace, NCCL_TUNER_JAVA_RECORD=FILE, records all calls) ("),
                r.out());
        assertFalse(r.out().contains("over all calls of the workload"), r.out());
    }

    /**
     * Item 5. Before: {@code --ranks 8 --nodes 1} on a sweep CSV exited 0 and wrote {@code nRanks:
     * 2, nNodes: 2}. A CSV names each row's shape, so the options would be ignored: refused.
     */
    @Test
    void perFileOptionsOnAMeasurementCsvAreRefusedNamingItsShape() {
        Path yaml = tmp.resolve("wrongshape.yaml");
        CliRun r = CliRun.run("compile", SWEEP, "--ranks", "8", "--nodes", "1", "-o", yaml.toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: " + SWEEP + ": --ranks 8 --nodes 1 would be ignored: a measurement CSV names each "
                        + "row's collective, candidate and shape in its columns (its rows: nRanks=2 nNodes=2); "
                        + "--collective/--algo/--proto/--channels/--ranks/--nodes describe nccl-tests output only. Drop "
                        + "them (with --in FILE before them for an nccl-tests file among the inputs), or correct the CSV's "
                        + "columns\n",
                r.err());
        assertEquals("", r.out());
        assertFalse(Files.exists(yaml));
    }

    /**
     * Item 12. Before: the noise column showed the fastest candidate's margin even where another
     * candidate made the rule (32 B .. 64 B: 123.70% against a regret of 85.44%, yet a rule), and
     * "noise unknown: margin 0" stood above noise values. Now the column is the margin the verdict
     * used, a legend says whose, and the header says what one replicate leaves.
     */
    @Test
    void theNoiseColumnIsTheMarginTheVerdictUsed() {
        CliRun r = compiled();
        String t = cells(r.out());
        // RING/SIMPLE made the rule: its margin against NCCL's (both flat around 32 B), not RING/LL128's
        assertTrue(
                t.contains("\n32 B .. 64 B auto~RING/LL 4527.328 RING/LL128 2441.440 RING/SIMPLE 85.44% 0.63% 0.00%\n"),
                r.out());
        // NCCL's pick kept against TREE/SIMPLE, whose readings jump: 43.38% is inside 149.58%
        assertTrue(
                t.contains(
                        "\n64 KiB .. 128 KiB auto=RING/SIMPLE 3501.904 TREE/SIMPLE 2442.400 NCCL 43.38% 43.38% 149.58% [2]\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                "\n  noise: the margin NCCL's time / a candidate's - 1 must exceed (as must --threshold "
                                        + "5.00%) for a rule: 2 x sqrt(noise(NCCL)^2 + noise(c)^2), noise = max(replicate CV, neighbour "
                                        + "jump within 2 sizes); c = the policy's pick where a rule applies, else the fastest candidate "
                                        + "NCCL's pick was kept against\n"),
                r.out());
        CliRun one = CliRun.run("compile", SWEEP, "--summary");
        assertTrue(
                one.out()
                        .contains(
                                ": 25 sizes, 6 candidates, 1 replicate per configuration (one run each, so no margin "
                                        + "against noise but the jumps between neighbouring sizes; repeat each run 3+ times for one)\n"),
                one.out());
        CliRun w0 = CliRun.run("compile", SWEEP, "--summary", "--window", "0");
        assertTrue(
                w0.out()
                        .contains(
                                ": 25 sizes, 6 candidates, 1 replicate per configuration (one run each and --window 0, "
                                        + "so the noise is unknown: margin 0; repeat each run 3+ times for one)\n"),
                w0.out());
    }

    /**
     * Item 13. Before: "collect next: nothing missing" with the log, though every forced run was one
     * reading and the noise kept NCCL's pick at nine sizes. Now both are named.
     */
    @Test
    void collectNextNamesSingleReadingsAndTheSizesTheNoiseDecided() {
        CliRun r = compiled("--summary");
        assertTrue(r.out().contains("""
                collect next:
                  - replicates: AllReduce at nRanks=2 nNodes=2: RING/LL128, RING/SIMPLE, RING/SIMPLE/1ch, TREE/LL, \
                TREE/SIMPLE and TREE/SIMPLE/1ch were measured once at each size, NCCL's own pick once at 14 of 25 sizes; \
                the policy's pick at all 16 sizes with a rule rests on one reading: repeat each run, 3+ times \
                (`nccl-tuner sweep --replicates 3`, or more files of the same runs)
                  - noise: AllReduce at nRanks=2 nNodes=2: at 9 sizes (64 KiB .. 16 MiB) the noise margin (16.94% .. \
                149.58%) exceeds NCCL's regret (11.02% .. 43.42%), so the noise, not the measurement, kept NCCL's pick: \
                replicates of NCCL's pick and of TREE/SIMPLE there decide whether the gain is real
                """), r.out());
        assertFalse(r.out().contains("nothing missing"), r.out());
    }

    /**
     * Item 17. Before: a compile that writes nothing printed every per-size table and ended with the
     * error. Now the first line says the policy is not written and why, the tables need --verbose.
     */
    @Test
    void aFailingCompileSaysSoFirstAndKeepsItShort() {
        String auto = CliRun.fixture("plain-all_reduce_auto.txt");
        String ring = CliRun.fixture("plain-all_reduce_ring_ll.txt");
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", auto, ring, "-o", yaml.toString());
        assertEquals(1, r.exit());
        assertTrue(r.out().startsWith("policy not written: no input measured a forced candidate "), r.out());
        assertFalse(r.out().contains("size range"), r.out());
        assertTrue(r.out().endsWith("\nper-size tables: --verbose prints them\n"), r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        CliRun v = CliRun.run("compile", auto, ring, "-o", yaml.toString(), "--verbose");
        assertEquals(1, v.exit());
        assertTrue(v.out().contains("\nsize range "), v.out());
        assertFalse(v.out().contains("--verbose prints them"), v.out());
        assertFalse(Files.exists(yaml));
    }

    /** An nccl-tests size table without device lines: {@code factor} x 40, 60, 100 us at 1, 2 and 4 MiB. */
    private static String table(double factor) {
        StringBuilder t = new StringBuilder("""
                #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
                #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
                """);
        double[] us = {40, 60, 100};
        for (int i = 0; i < 3; i++) {
            long size = 1048576L << i;
            t.append(String.format(
                    java.util.Locale.ROOT,
                    "%12d %13d     float     sum      -1 %8.2f    1.00    1.00      0 %8.2f    1.00    1.00      0%n",
                    size,
                    size / 4,
                    us[i] * factor,
                    us[i] * factor));
        }
        return t.toString();
    }

    /** {@code --in FILE} with its shape and collective, and what it forced. */
    private static List<String> in(Path f, String... forced) {
        List<String> a = new java.util.ArrayList<>(List.of("--in", f.toString()));
        a.addAll(List.of(forced));
        a.addAll(List.of("--ranks", "2", "--nodes", "1", "--collective", "AllReduce"));
        return a;
    }

    /** compile of two nccl-tests outputs naming no machine: RING/LL forced at {@code factor} x the unforced times. */
    private CliRun twoMachines(double factor) throws Exception {
        Path forced = tmp.resolve("cluster-a_ring_ll.txt");
        Path auto = tmp.resolve("cluster-b_auto.txt");
        Files.writeString(forced, table(factor));
        Files.writeString(auto, table(1));
        List<String> a = new java.util.ArrayList<>(List.of("compile"));
        a.addAll(in(forced, "--algo", "RING", "--proto", "LL"));
        a.addAll(in(auto));
        a.add("--summary");
        return CliRun.run(a.toArray(String[]::new));
    }

    /**
     * Item 20. Before: a forced file from one cluster and an unforced one from another, 7x apart,
     * compiled to "0 rules ... within 5.00%" with no hint. Now a warning names both and the factor.
     */
    @Test
    void inputsWhoseTimesDifferByOneFactorEverywhereAreNamed() throws Exception {
        CliRun r = twoMachines(7);
        assertEquals(0, r.exit(), r.err());
        String w = "inputs: AllReduce at nRanks=2 nNodes=1: " + tmp.resolve("cluster-a_ring_ll.txt")
                + " (RING/LL) is 7.00x slower than " + tmp.resolve("cluster-b_auto.txt")
                + " (NCCL's own pick) at each of the 3 sizes both measured, far more than replicate noise: other "
                + "machines or settings? One machine's configurations differ by configuration and size, not by one "
                + "factor at every size; the verdicts compare one input's numbers with the other's. If they are other "
                + "machines, compile them separately (or keep the device lines and NCCL's INFO lines in the files, so "
                + "they are compiled apart by machine)";
        assertTrue(r.err().contains("nccl-tuner compile: warning: " + w + "\n"), r.err());
        assertTrue(r.out().contains("\n  " + w + "\n"), r.out());
        // the other way round the forced file would make a rule at every size: named too
        CliRun fast = twoMachines(0.25);
        assertTrue(
                fast.err()
                        .contains(tmp.resolve("cluster-b_auto.txt") + " (NCCL's own pick) is 4.00x slower than "
                                + tmp.resolve("cluster-a_ring_ll.txt") + " (RING/LL)"),
                fast.err());
        // a real loser within a factor of 3 is no sign of another machine
        CliRun close = twoMachines(2.5);
        assertFalse(close.err().contains("slower than"), close.err());
    }

    /**
     * Item 19. Before: {@code -o /nonexistent-dir/x.yaml} created the folder. Now compile, calibrate
     * and report's --emit-policy refuse it as import does, before reading anything.
     */
    @Test
    void anOutputInAFolderThatDoesNotExistIsRefused() {
        Path out = tmp.resolve("no-such-dir/x.yaml");
        String why = ": directory " + out.getParent() + " does not exist; ";
        CliRun c = CliRun.run("compile", SWEEP, "-o", out.toString());
        assertEquals(1, c.exit());
        assertEquals(
                "nccl-tuner compile: -o " + out + why
                        + "compile writes into an existing directory (mkdir -p it first)\n",
                c.err());
        CliRun h = CliRun.run("compile", SWEEP, "--html", out.toString());
        assertEquals(
                "nccl-tuner compile: --html " + out + why
                        + "compile writes into an existing directory (mkdir -p it first)\n",
                h.err());
        CliRun cal = CliRun.run("calibrate", tmp.toString(), "-o", out.toString());
        assertEquals(1, cal.exit());
        assertEquals(
                "nccl-tuner calibrate: -o " + out + why
                        + "calibrate writes into an existing directory (mkdir -p it first)\n",
                cal.err());
        CliRun rep = CliRun.run("report", SWEEP, "--emit-policy", out.toString());
        assertEquals(1, rep.exit());
        assertEquals(
                "nccl-tuner report: --emit-policy " + out + why
                        + "report writes into an existing directory (mkdir -p it first)\n",
                rep.err());
        assertFalse(Files.exists(out.getParent()));
    }
}

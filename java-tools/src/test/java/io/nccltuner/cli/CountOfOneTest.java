package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.model.TraceCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Counts of one in the tools' output: "1 size", "1 row", "1 call", not "1 sizes", "1 rows", "1
 * calls". One test per message family, each at a count of 1, on inputs written here.
 */
class CountOfOneTest {
    @TempDir
    Path tmp;

    /**
     * One measured size (1 MiB, nRanks 2, nNodes 1): NCCL's pick (100 us) and TREE/LL (50 us) once,
     * RING/LL twice (80, 81 us), and a row cut to its first field.
     */
    static final String ONE_SIZE = """
            collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,median_us,p95_us,busbw_gbps,wrong
            AllReduce,1048576,auto,auto,auto,2,1,auto,1,100.0,,0,0
            AllReduce,1048576,TREE,LL,auto,2,1,TREE/LL,1,50.0,,0,0
            AllReduce,1048576,RING,LL,auto,2,1,RING/LL,1,80.0,,0,0
            AllReduce,1048576,RING,LL,auto,2,1,RING/LL,2,81.0,,0,0
            AllReduce
            """;

    /** compile's replicates advice (WeakEvidence), its CV line (TextReport) and a row of 1 field. */
    @Test
    void compileSaysOneSizeOneConfigurationOneField() throws Exception {
        Path csv = tmp.resolve("one.csv");
        Files.writeString(csv, ONE_SIZE);
        CliRun r = CliRun.run("compile", csv.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  - replicates: AllReduce at nRanks=2 nNodes=1: TREE/LL was measured once at each "
                                + "size, NCCL's own pick once at 1 of 1 size; the policy's pick at the 1 size with a rule "
                                + "rests on one reading: repeat each run, 3+ times (`nccl-tuner sweep --replicates 3`, or "
                                + "more files of the same runs)\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains("\nreplicate CV (coefficient of variation) over 1 configuration with 2+ replicates: "
                                + "median 0.88%, max 0.88%\n"),
                r.out());
        assertEquals(
                "nccl-tuner compile: warning: skipped 1 mangled row (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                r.err());
        assertTrue(
                r.out()
                        .contains("\n  " + csv + ":6: row has 1 field, the header has 13; the row looks truncated; row "
                                + "skipped (--strict refuses the file)\n"),
                r.out());
    }

    /** nccl-tests output: 1 line with a launcher prefix, 1 row of 0 bytes, 1 channel forced. */
    @Test
    void ncclTestsSaysOneLineOneRowOneChannel() throws Exception {
        List<String> lines =
                Files.readAllLines(Path.of(CompileFrictionsTest.H200)).subList(0, 24);
        List<String> one = new java.util.ArrayList<>(lines);
        one.add(
                19,
                "           0             0     float     sum      -1     0.10    0.00    0.00       0     0.10    0.00"
                        + "    0.00       0");
        one.set(21, "0: " + one.get(21)); // the 2 MiB row, srun -l's prefix on it alone
        Path f = tmp.resolve("one.txt");
        Files.write(f, one);
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out().contains("\n  " + f + ": 1 line carries a launcher prefix (srun -l '0: '); read without it\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains("\n  " + f + ":18: 1 row of 0 bytes skipped (NCCL does not call the tuner for empty "
                                + "collectives)\n"),
                r.out());

        List<String> forced = new java.util.ArrayList<>(lines);
        forced.add(15, "h200-a:5000:5000 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 1");
        Path ch = tmp.resolve("ch.txt");
        Files.write(ch, forced);
        CliRun c = CliRun.run("compile", ch.toString(), "--channels", "2");
        assertEquals(1, c.exit(), c.err());
        assertEquals(
                "nccl-tuner compile: " + ch + ":19: the log's NCCL_*NCHANNELS/NCCL_*_CTAS lines say 1 channel but "
                        + "--channels says 2\n",
                c.err());
    }

    /** replay's measured line over a trace of 1 call. */
    @Test
    void replaySaysOfOneCallPriced() {
        ReplayCommand.MeasuredTotals none = new ReplayCommand.MeasuredTotals();
        assertEquals(
                "measured (m.csv): 0 of 1 call priced: no priced calls, so no expected saving",
                ReplayCommand.measuredLine(Path.of("m.csv"), 1, none, none));
        ReplayCommand.MeasuredTotals all = new ReplayCommand.MeasuredTotals();
        all.ncclUs = 10;
        all.policyUs = 8;
        all.calls = 1;
        assertEquals(
                "measured (m.csv): 1 of 1 call priced: NCCL's picks 10.0 us, the policy's 8.0 us: no priced rule hits, "
                        + "so no expected saving (calls no rule matches cost the same under both)",
                ReplayCommand.measuredLine(Path.of("m.csv"), 1, all, none));
        assertEquals(
                "measured (m.csv): 1 of 1 call priced: NCCL's picks 10.0 us, the policy's 8.0 us: expected saving 2.0 "
                        + "us, 20.00% of the rule hits' time (NCCL's 10.0 us over the 1 rule hit priced), 20.00% of all "
                        + "calls' time (NCCL's 10.0 us over the 1 call priced)",
                ReplayCommand.measuredLine(Path.of("m.csv"), 1, all, all));
    }

    /** validate --trace's check of the model against a trace of 1 call and 1 captured entry. */
    @Test
    void traceCheckSaysOneCallOneEntry() {
        TraceCheck.Report r = new TraceCheck.Report(
                List.of(new TraceCheck.CallResult(null, List.of(), null, TraceCheck.Verdict.UNMATCHED)),
                1,
                List.of(),
                List.of());
        assertEquals(
                "exact 0, ambiguous 0, mismatch 0, unmatched 1 of 1 call; 1 captured entry, 0 outside the table's range",
                r.summary());
    }
}

package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * compile and import over the inputs of issue 21 (items 2 and 8), each from a fixture written from
 * the format: two machines of one shape, a Ray + mpirun prefix, a row mangled mid-file,
 * {@code --nodes} without {@code --in}, and {@code import -o} into a directory that does not exist.
 */
class InputsCommandTest {
    @TempDir
    Path tmp;

    @Test
    void compileSeparatesTwoMachinesOfOneShapeAndSaysSo() throws Exception {
        String gb = CliRun.fixture("gb300-nvl72-8ranks-2hosts_all_reduce.txt");
        String gh = CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt");
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", gb, gh, "-o", yaml.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("  inputs: AllReduce at nRanks 8, nNodes 2 was measured on 2 machines (NVIDIA GB300, "
                                + "NCCL 2.27.3: " + gb + "; NVIDIA GH200 480GB, NCCL 2.26.2: " + gh
                                + "): compiled separately, not pooled as "
                                + "replicates; each profile matches its gpu (and ncclVersion)\n"),
                r.out());
        assertTrue(
                r.out()
                        .contains("AllReduce, nRanks 8, nNodes 2, numPipeOps 1, NVIDIA GB300, NCCL 2.27.3: 3 sizes, "
                                + "1 candidate, 1 replicate per configuration"),
                r.out());
        String text = Files.readString(yaml);
        assertTrue(
                text.contains("    match: {nRanks: 8, nNodes: 2, gpu: \"NVIDIA GB300\", ncclVersion: \"2.27.3\"}\n"),
                text);
        assertTrue(
                text.contains(
                        "    match: {nRanks: 8, nNodes: 2, gpu: \"NVIDIA GH200 480GB\", ncclVersion: \"2.26.2\"}\n"),
                text);
        Policy p = PolicyLoader.load(yaml);
        assertEquals(2, p.profiles().size());
        assertEquals("nRanks8-nNodes2-GB300-nccl2.27.3", p.profiles().get(0).name());
        assertEquals("NVIDIA GB300", p.profiles().get(0).hardware().gpu());
        // the forced RING/LL128 runs win on the GB300 and lose on the GH200: a rule only for the first
        assertEquals(1, p.profiles().get(0).rules().size());
        assertEquals(0, p.profiles().get(1).rules().size());
    }

    /**
     * Issue 21 (second walk), item 2: the two machines' files without their device lines and NCCL
     * version lines name no machine, so they are one group to the compiler; their times differ by a
     * median CV of 55.0% between the files (RING/LL128 at 2 MiB: 45.0 us on the GB300, 140.0 us on
     * the GH200). Before, they were pooled as replicates without a word (exit 0); now compile refuses
     * naming both files, what differs and --pool-anyway.
     */
    @Test
    void compileRefusesPoolingInputsThatNameNoMachineAndDisagree() throws Exception {
        Path gb = tmp.resolve("gb300_all_reduce.txt");
        Path gh = tmp.resolve("gh200_all_reduce.txt");
        for (String[] f : new String[][] {
            {"gb300-nvl72-8ranks-2hosts_all_reduce.txt", gb.toString()},
            {"gh200-8ranks-2hosts_all_reduce.txt", gh.toString()}
        }) {
            Files.write(
                    Path.of(f[1]),
                    Files.readAllLines(Path.of(CliRun.fixture(f[0]))).stream()
                            .filter(l -> !l.contains("#  Rank")
                                    && !l.contains("NCCL version")
                                    && !l.contains("nccl-library"))
                            .toList());
        }
        CliRun r = CliRun.run(
                "compile",
                gb.toString(),
                gh.toString(),
                "-o",
                tmp.resolve("p.yaml").toString());
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: inputs: AllReduce at nRanks 8, nNodes 2: 2 inputs that name no machine (no "
                        + "nccl-tests '# Rank ... device' lines, no NCCL version line) pooled as replicates (" + gb
                        + "; " + gh + ") "
                        + "disagree: a median coefficient of variation of 55.0% between their times over 6 configurations they both "
                        + "measured (the widest: RING/LL128 at 2 MiB, 45.0 us in " + gb + " against 140.0 us in " + gh
                        + "), above 25%: "
                        + "other machines or settings, not replicates? Compile them separately, or keep the device lines and NCCL's "
                        + "INFO lines in the files so they are compiled apart by machine; --pool-anyway pools them as replicates all "
                        + "the same\n",
                r.err());
        assertTrue(!Files.exists(tmp.resolve("p.yaml")), "nothing written");
        CliRun anyway = CliRun.run("compile", gb.toString(), gh.toString(), "--pool-anyway");
        assertEquals(0, anyway.exit(), anyway.err());
        assertTrue(
                anyway.err()
                        .startsWith("nccl-tuner compile: warning: --pool-anyway: AllReduce at nRanks 8, nNodes 2: 2 "
                                + "inputs that name no machine"),
                anyway.err());
        assertTrue(
                anyway.out().contains("\n  inputs: AllReduce at nRanks 8, nNodes 2: 2 inputs that name no machine"),
                "and among the report's warnings: " + anyway.out());
        // two replicates of one sweep that agree (median CV 0.00%) are pooled as before
        CliRun same = CliRun.run(
                "compile",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                CliRun.fixture("h200-2rank-sweep_allreduce.rep2-simulated.csv"),
                "--summary");
        assertEquals(0, same.exit(), same.err());
        assertEquals("", same.err());
    }

    /** Item 2, the --pool-runs half: two pasted tables of two clusters, 110.7% apart, are not pooled silently. */
    @Test
    void compileRefusesPooledRunsThatDisagree() {
        String f = CliRun.fixture("inputs/pasted-tables-no-run-header_all_reduce.txt");
        CliRun r = CliRun.run("compile", f, "--pool-runs", "--nodes", "2");
        assertEquals(1, r.exit(), r.out());
        assertEquals(
                "nccl-tuner compile: inputs: AllReduce at nRanks 16, nNodes 2: 2 size tables pooled as replicates by "
                        + "--pool-runs (the table at line 5 of " + f + "; the table at line 11 of " + f
                        + ") disagree: a median "
                        + "coefficient of variation of 110.7% between their times over 2 configurations they both measured (the widest: "
                        + "NCCL's own pick (unforced) at 64 MiB, 8350.0 us in the table at line 5 of " + f
                        + " against 900.0 us in the "
                        + "table at line 11 of " + f
                        + "), above 25%: other machines or settings, not replicates? Compile them "
                        + "separately (split the file); --pool-anyway pools them as replicates all the same\n",
                r.err());
        assertEquals(
                0,
                CliRun.run("compile", f, "--pool-runs", "--nodes", "2", "--pool-anyway")
                        .exit());
    }

    @Test
    void aRunBehindARayAndMpirunPrefixIsRead() {
        String f = CliRun.fixture("ray-mpirun-two-runs_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains(
                                "AllReduce, nRanks 2, nNodes 1, numPipeOps 1: 3 sizes, 0 candidates, 2 replicates per "
                                        + "configuration"),
                r.out());
        assertTrue(
                r.out()
                        .contains("  " + f + ": 16 lines carry a launcher prefix (mpirun --tag-output "
                                + "'[1,0]<stdout>:', Ray '(head, rank=0, pid=3808)'); read without it\n"),
                r.out());
    }

    @Test
    void aRowMangledMidFileIsSkippedAndCountedUnlessStrict() {
        String f = CliRun.fixture("mangled-mid-file_all_reduce.txt");
        CliRun r = CliRun.run("compile", f);
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("refused rows (wrong results or mangled, never used): 2\n  " + f
                                + ":13: row has 6 fields"),
                r.out());
        assertTrue(
                r.out()
                        .contains("  " + f + ":15: time (out-of-place) '2o.51' is not a number; row skipped (--strict "
                                + "refuses the file)\n"),
                r.out());
        CliRun strict = CliRun.run("compile", f, "--strict");
        assertEquals(1, strict.exit());
        assertEquals(
                "nccl-tuner compile: " + f + ":13: row has 6 fields but the column header names 13 (size count type "
                        + "redop root time algbw busbw #wrong time algbw busbw #wrong); the row looks truncated or mangled\n",
                strict.err());
    }

    @Test
    void nodesWithoutInAppliesToTheFileArguments() {
        String f = CliRun.fixture("mangled-mid-file_all_reduce.txt");
        CliRun r = CliRun.run("compile", f, "--nodes", "2");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("AllReduce, nRanks 2, nNodes 2, numPipeOps 1: 4 sizes"), r.out());
        CliRun none = CliRun.run("compile", "--nodes", "2", "--in", f);
        assertEquals(0, none.exit(), none.err());
        assertTrue(none.out().contains("AllReduce, nRanks 2, nNodes 2, numPipeOps 1: 4 sizes"), none.out());
    }

    @Test
    void importRefusesAnOutputDirectoryThatDoesNotExist() {
        Path out = tmp.resolve("no/such/dir/x.yaml");
        CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", out.toString());
        assertEquals(1, r.exit());
        assertEquals(
                "nccl-tuner import: -o " + out + ": directory " + out.getParent() + " does not exist; import writes "
                        + "into an existing directory (mkdir -p it first)\n",
                r.err());
        assertTrue(!Files.exists(tmp.resolve("no")));
    }
}

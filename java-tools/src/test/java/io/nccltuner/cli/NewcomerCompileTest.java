package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The newcomer's compile/validate findings: an input naming no machine next to one that does, and
 * profiles that differ only in their hardware match.
 */
@Timeout(60)
class NewcomerCompileTest {
    @TempDir
    Path tmp;

    @Test
    void aSignaturelessInputNextToANamedMachineCompilesToALoadablePolicy() throws Exception {
        String gb = CliRun.fixture("gb300-nvl72-8ranks-2hosts_all_reduce.txt");
        String csv = CliRun.fixture("no-machine-8ranks-2hosts_allreduce.csv");
        Path yaml = tmp.resolve("pooled.yaml");
        CliRun r = CliRun.run("compile", gb, csv, "-o", yaml.toString(), "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("  inputs: AllReduce at nRanks 8, nNodes 2 was measured on 2 machines (NVIDIA GB300, "
                                + "NCCL 2.27.3: " + gb + "; machine not printed: " + csv
                                + "): compiled separately, not pooled as replicates; "
                                + "each profile matches its gpu (and ncclVersion); the inputs that name no machine make a profile for any "
                                + "machine, placed after the named machines' profiles\n"),
                r.out());
        assertTrue(r.out().contains("policy: " + yaml + " (2 rules)\n"), r.out());
        Policy p = PolicyLoader.load(yaml);
        assertEquals(2, p.profiles().size());
        assertEquals("nRanks8-nNodes2-GB300-nccl2.27.3", p.profiles().get(0).name());
        assertEquals(1, p.profiles().get(0).rules().size());
        assertEquals(
                "LL128",
                p.profiles()
                        .get(0)
                        .rules()
                        .getFirst()
                        .candidates()
                        .getFirst()
                        .protocol()
                        .name());
        assertEquals("nRanks8-nNodes2", p.profiles().get(1).name());
        assertEquals(
                "SIMPLE",
                p.profiles()
                        .get(1)
                        .rules()
                        .getFirst()
                        .candidates()
                        .getFirst()
                        .protocol()
                        .name());

        CliRun v = CliRun.run("validate", yaml.toString(), "--nranks", "8", "--nnodes", "2");
        assertEquals(0, v.exit(), v.out());
        assertTrue(
                v.out()
                        .contains(
                                "nRanks=8 nNodes=2: profile nRanks8-nNodes2-GB300-nccl2.27.3 (profiles[0], 1 rule) on "
                                        + "gpu \"NVIDIA GB300\", ncclVersion 2.27.3; any other machine: profile nRanks8-nNodes2 (profiles[1], 1 rule)\n"),
                v.out());
        assertTrue(v.out().contains("result: OK (0 errors, 0 warnings)"), v.out());
    }

    static final String TWO_MACHINES = """
      schema: nccl-tuner-java/v1
      name: pooled2
      profiles:
        - name: a100
          match: {nRanks: 2, nNodes: 2, gpu: "NVIDIA A100-SXM4-80GB", ncclVersion: "2.28.9"}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B}
              candidates:
                - {algorithm: RING, protocol: LL}
        - name: h200
          match: {nRanks: 2, nNodes: 2, gpu: "NVIDIA H200", ncclVersion: "2.28.9"}
          rules:
            - collective: AllReduce
              bytes: {from: 0 B}
              candidates:
                - {algorithm: TREE, protocol: LL}
      """;

    @Test
    void profilesOfDifferentMachinesDoNotShadowEachOther() throws Exception {
        Path f = tmp.resolve("pooled2.yaml");
        Files.writeString(f, TWO_MACHINES);
        CliRun r = CliRun.run("validate", f.toString(), "--nranks", "2", "--nnodes", "2");
        assertEquals(0, r.exit(), r.out());
        assertTrue(
                r.out()
                        .contains("  profiles[0] a100: nRanks=2 nNodes=2, needs gpu \"NVIDIA A100-SXM4-80GB\", "
                                + "ncclVersion 2.28.9, 1 rule, sha256 "),
                r.out());
        assertTrue(
                r.out()
                        .contains(
                                "nRanks=2 nNodes=2: profile a100 (profiles[0], 1 rule) on gpu \"NVIDIA A100-SXM4-80GB\", "
                                        + "ncclVersion 2.28.9; else profile h200 (profiles[1], 1 rule) on gpu \"NVIDIA H200\", ncclVersion 2.28.9; "
                                        + "any other machine: no profile, the plugin changes nothing there\n"),
                r.out());
        assertTrue(r.out().contains("result: OK (0 errors, 0 warnings)\n"), r.out());
    }

    @Test
    void aWiderHardwareMatchFirstStillShadows() throws Exception {
        Path f = tmp.resolve("wide.yaml");
        Files.writeString(
                f, TWO_MACHINES.replace("gpu: \"NVIDIA A100-SXM4-80GB\", ncclVersion: \"2.28.9\"", "gpu: \"H200\""));
        CliRun r = CliRun.run("validate", f.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(
                r.out()
                        .contains("error: " + f
                                + ":11:5: profiles[1] (h200): can never match: profiles[0] (a100) comes first and matches "
                                + "every shape it matches (the first matching profile is used)\n"),
                r.out());
    }

    static final String SWEEP_HEADER =
            "collective,size_bytes,algorithm,protocol,max_channels,ranks,nodes,config,replicate,median_us,p95_us,busbw_gbps,wrong\n";

    /** Four sizes, NCCL's pick and RING/SIMPLE; row 4 (median_us) or row 5 (busbw_gbps) mangled. */
    private Path mangledCsv(String median, String busbw) throws Exception {
        Path f = tmp.resolve("mangled.csv");
        Files.writeString(
                f,
                SWEEP_HEADER
                        + "AllReduce,1024,auto,auto,auto,2,2,auto,1,40.0,41.0,0.1,0\n"
                        + "AllReduce,1024,Ring,Simple,auto,2,2,ring_simple,1,20.0,21.0,0.1,0\n"
                        + "AllReduce,2048,auto,auto,auto,2,2,auto,1," + median + ",41.0,0.1,0\n"
                        + "AllReduce,2048,Ring,Simple,auto,2,2,ring_simple,1,20.0,21.0," + busbw + ",0\n");
        return f;
    }

    @Test
    void aMangledSweepCsvRowIsSkippedWithAWarningUnlessStrict() throws Exception {
        Path f = mangledCsv("24x58.048", "0.1");
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("  " + f
                                + ":4: median_us '24x58.048' is not a time: times must be "
                                + "finite numbers > 0 us; row skipped (--strict refuses the file)\n"),
                r.out());
        assertTrue(r.out().contains("refused rows (wrong results or mangled, never used): 1\n"), r.out());
        CliRun s = CliRun.run("compile", "--strict", f.toString());
        assertEquals(1, s.exit(), s.out() + s.err());
        assertEquals(
                "nccl-tuner compile: " + f + ":4: median_us '24x58.048' is not a time: times must be finite numbers "
                        + "> 0 us\n",
                s.err());
    }

    @Test
    void aNonNumericBandwidthIsAMangledRowNotAcceptedSilently() throws Exception {
        Path f = mangledCsv("40.0", "0.1x");
        CliRun r = CliRun.run("compile", f.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("  " + f + ":5: busbw_gbps '0.1x' is not a non-negative number; row skipped "
                                + "(--strict refuses the file)\n"),
                r.out());
        CliRun s = CliRun.run("compile", "--strict", f.toString());
        assertEquals(1, s.exit());
        assertEquals("nccl-tuner compile: " + f + ":5: busbw_gbps '0.1x' is not a non-negative number\n", s.err());
    }

    @Test
    void aNonNumericAlgbwInNcclTestsOutputIsAMangledRow() throws Exception {
        Path f = tmp.resolve("all_reduce_perf.txt");
        String row =
                "     %s        %s     float     sum      -1    %s   %s   45.88      0    40.00   26.21   45.88      0\n";
        Files.writeString(
                f,
                """
        # nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
        #
        #                                                              out-of-place                       in-place
        #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        """ + String.format(row, "1048576", "262144", "40.00", "26.21")
                        + String.format(row, "2097152", "524288", "60.00", "3x.95"));
        CliRun r = CliRun.run("compile", "--ranks", "2", "--nodes", "1", f.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("  " + f + ":7: algbw '3x.95' is not a number; row skipped (--strict refuses "
                                + "the file)\n"),
                r.out());
        CliRun s = CliRun.run("compile", "--strict", "--ranks", "2", "--nodes", "1", f.toString());
        assertEquals(1, s.exit());
        assertEquals("nccl-tuner compile: " + f + ":7: algbw '3x.95' is not a number\n", s.err());
    }

    @Test
    void thePluginsDecisionLogIsAWorkload() throws Exception {
        Path log = tmp.resolve("tuner-vm-27707.jsonl");
        Files.writeString(log, """
        {"type":"comm","comm":25,"host":"vm","pid":27707,"policy":"p","profile":"nRanks8-nNodes2","sha256":"ab","mode":"shadow","nRanks":8,"nNodes":2,"calls":67,"ruleHits":65,"applied":0,"unaggregated":0,"at":"destroy"}
        {"type":"aggregate","comm":25,"host":"vm","pid":27707,"sha256":"ab","nRanks":8,"nNodes":2,"collective":"AllReduce","nBytes":1048576,"toBytes":1310720,"bucket":"[1 MiB, 1.25 MiB)","ncclPick":"RING/LL","policyPick":"RING/SIMPLE","channels":0,"count":64}
        {"type":"measured","comm":25,"collective":"AllReduce","nBytes":1048576,"arm":"policy","us":20.5}
        {"type":"profiled","comm":25,"collective":"AllReduce","nBytes":1048576,"us":20.5}
        {"comm":25,"collective":"AllReduce","nBytes":4194304,"nRanks":8,"nNodes":2,"ncclPick":"RING/LL","policyPick":"RING/SIMPLE"}
        """);
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("no-machine-8ranks-2hosts_allreduce.csv"),
                "--workload",
                log.toString(),
                "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains("workload AllReduce, nRanks 8, nNodes 2, numPipeOps 1: 65 calls, 65 inside the "
                                + "measured span\n"),
                r.out());
        Files.writeString(log, "{\"type\":\"bogus\",\"collective\":\"AllReduce\",\"nBytes\":4}\n");
        CliRun b = CliRun.run(
                "compile", CliRun.fixture("no-machine-8ranks-2hosts_allreduce.csv"), "--workload", log.toString());
        assertEquals(1, b.exit());
        assertEquals(
                "nccl-tuner compile: " + log + ":1: decision-log line of type 'bogus': expected \"aggregate\" (read) "
                        + "or \"comm\", \"measured\", \"profiled\" (skipped)\n",
                b.err());
    }

    @Test
    void plainNcclTestsOutputWithNothingForcedIsAnInputErrorWithMinusO() throws Exception {
        String auto = CliRun.fixture("plain-all_reduce_auto.txt");
        String ring = CliRun.fixture("plain-all_reduce_ring_ll.txt");
        Path yaml = tmp.resolve("policy.yaml");
        CliRun r = CliRun.run("compile", auto, ring, "-o", yaml.toString(), "--summary");
        assertEquals(1, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .startsWith(
                                "policy not written: no input measured a forced candidate (every run counts as "
                                        + "NCCL's own pick), so the policy would have no rules. Say what each file forced: --in FILE "
                                        + "--algo X --proto Y (or give NCCL_DEBUG=INFO output, whose 'set by environment' lines say "
                                        + "it); --allow-empty writes the empty policy\n"
                                        + "summary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=1): 0 sizes get "
                                        + "a rule; no rule at:\n  3 sizes: no forced candidate measured (see the first line)\n"),
                r.out());
        assertEquals("nccl-tuner compile: policy not written (see above)\n", r.err());
        assertTrue(!Files.exists(yaml));

        CliRun empty = CliRun.run("compile", auto, ring, "-o", yaml.toString(), "--allow-empty");
        assertEquals(0, empty.exit(), empty.err());
        assertTrue(empty.out().contains("policy: " + yaml + " (0 rules)\n"), empty.out());
        assertEquals(0, PolicyLoader.load(yaml).profiles().getFirst().rules().size());

        CliRun told =
                CliRun.run("compile", auto, "--in", ring, "--algo", "RING", "--proto", "LL", "-o", yaml.toString());
        assertEquals(0, told.exit(), told.err());
        assertTrue(told.out().contains("policy: " + yaml + " (1 rule)\n"), told.out());
        // without -o nothing is written: the report says it, exit 0
        assertEquals(0, CliRun.run("compile", auto, ring).exit());
    }
}

package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImportCommandTest {
    @TempDir
    Path tmp;

    @Test
    void importsTheExampleConfig() throws Exception {
        Path out = tmp.resolve("imported.yaml");
        CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", out.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("policy: " + out + " (3 profiles, "), r.out());
        assertTrue(
                r.err().contains("example-tuner.conf:9: bytes 0..32768 (inclusive) is not on the size grid"), r.err());
        Policy p = PolicyLoader.load(out);
        assertEquals("example-tuner", p.name());
        assertTrue(Files.readString(out).contains("# from example-tuner.conf lines 6, 7\n"), Files.readString(out));
    }

    /**
     * Issue 21 (second walk), item 3: import's output always validates. Before, example-tuner.conf
     * imported with exit 0 and validate then failed with 3 errors, one per profile, for line 9
     * (TREE/SIMPLE for Broadcast, which NCCL never offers); nvidia-boundaries.conf likewise for line 8
     * (TREE for ReduceScatter). Now such a line is left out with a warning naming it, as NCCL's
     * example plugin never applies it either, and every fixture config round-trips.
     */
    @Test
    void importsOutputPassesValidate() throws Exception {
        for (String f : new String[] {
            "example-tuner.conf",
            "nvidia-boundaries.conf",
            "configs/ncclx-intervals.csv",
            "configs/ncclx-rules.json",
            "configs/example-with-header-row.csv"
        }) {
            Path out = tmp.resolve(Path.of(f).getFileName() + ".yaml");
            CliRun i = CliRun.run("import", CliRun.fixture(f), "-o", out.toString());
            assertEquals(0, i.exit(), f + ": " + i.err());
            CliRun v = CliRun.run("validate", out.toString());
            assertEquals(0, v.exit(), f + ": " + v.out());
            assertTrue(v.out().contains("\nresult: OK (0 errors, "), v.out());
        }
        String conf = CliRun.fixture("example-tuner.conf");
        CliRun r = CliRun.run("import", conf, "-o", tmp.resolve("e.yaml").toString());
        assertTrue(
                r.err()
                        .contains("warning: " + conf
                                + ":9: Broadcast [0 B, 40 KiB) left out: TREE/SIMPLE is never offered"
                                + " there (NCCL offers only RING for Broadcast (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel)), and "
                                + "NCCL's example plugin passes over a line NCCL does not offer, so it never applies this one either (NCCL picks "
                                + "there) (in 3 profiles)\n"),
                r.err());
        assertTrue(
                r.out().startsWith("policy: " + tmp.resolve("e.yaml") + " (3 profiles, 17 rules, 5 warnings)\n"),
                r.out());
        // a one-rank profile: NCCL never calls the tuner there
        Path one = Files.writeString(
                tmp.resolve("one.conf"), "allreduce,0,-1,tree,simple,-1,1,1\nallreduce,0,-1,ring,ll,-1,-1,-1\n");
        CliRun o = CliRun.run(
                "import", one.toString(), "-o", tmp.resolve("one.yaml").toString());
        assertEquals(0, o.exit(), o.err());
        assertTrue(
                o.err()
                        .contains("warning: " + one + ":1,2: profile nRanks1-nNodes1 (nRanks 1) left out: NCCL never "
                                + "calls the tuner for one-rank communicators, so it could never apply\n"),
                o.err());
        assertEquals(
                0, CliRun.run("validate", tmp.resolve("one.yaml").toString()).exit());
    }

    /** A line NCCL never offers, left out of two profiles: the one warning says so ("in 2 profiles"). */
    @Test
    void aLineLeftOutOfTwoProfilesSaysSoOnce() throws Exception {
        Path two = Files.writeString(
                tmp.resolve("two.conf"), "broadcast,0,-1,tree,simple,-1,-1,-1\nallreduce,0,-1,ring,ll,-1,1,2\n");
        CliRun r = CliRun.run(
                "import", two.toString(), "-o", tmp.resolve("two.yaml").toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "warning: " + two + ":1: Broadcast [0 B, inf) left out: TREE/SIMPLE is never offered there (NCCL offers"
                        + " only RING for Broadcast (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclTopoTuneModel)), and"
                        + " NCCL's example plugin passes over a line NCCL does not offer, so it never applies this one"
                        + " either (NCCL picks there) (in 2 profiles)\n",
                r.err());
        assertTrue(
                r.out().startsWith("policy: " + tmp.resolve("two.yaml") + " (2 profiles, 1 rule, 1 warning)\n"),
                r.out());
    }

    /**
     * Item 3's other half: validate says a finding once with the profiles it holds in. Before, the
     * CSV's line 9 gave 3 identical error lines (and 3 warnings): "result: FAILED (3 errors, 3
     * warnings)".
     */
    @Test
    void validateGroupsTheSameFindingOverProfiles() {
        String conf = CliRun.fixture("example-tuner.conf");
        CliRun v = CliRun.run("validate", conf);
        assertEquals(1, v.exit()); // a line NCCL never offers is an error, as the same rule in YAML
        assertTrue(
                v.out()
                        .contains("\nerror: " + conf + ":9 (Broadcast [0 B, 40 KiB)) in 3 profiles (profiles[0] "
                                + "nRanks16-nNodes2, profiles[1] nNodes1, profiles[2] any): can never apply: NCCL offers none of its candidates "
                                + "for Broadcast; NCCL's example plugin passes over such a line silently (NCCL picks there): delete the"
                                + " line, or import the file (import leaves it out)\n"),
                v.out());
        assertEquals(1, v.out().split("can never apply", -1).length - 1, v.out());
        assertTrue(
                v.out().endsWith("result: FAILED (1 error, 5 warnings: 4 from reading the CSV, 1 of the policy)\n"),
                v.out());
    }

    /**
     * Issue 21 (second walk), item 9: NCCLX/RCCL numPipeOps intervals import as the rules'
     * numPipeOps ranges (the policy format matches numPipeOps by a range) and validate; a channels
     * interval is refused saying why: channels is set, not matched.
     */
    @Test
    void numPipeOpsIntervalsBecomeRuleRanges() throws Exception {
        Path conf = Files.writeString(
                tmp.resolve("pipes.csv"),
                "allreduce,*,ring,simple,-1,*,*,[2,4]\nallreduce,*,tree,ll,-1,*,*,(1,)\nallreduce,*,ring,ll,-1,*,*,*\n");
        Path out = tmp.resolve("pipes.yaml");
        CliRun r = CliRun.run("import", conf.toString(), "-o", out.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "policy: " + out + " (1 profile, 3 rules, 0 warnings)\n  profile any (nRanks=any nNodes=any)\n"
                        + "    AllReduce [0 B, inf) numPipeOps 0..1: RING/LL\n" // * matches 0 too (issue 21)
                        + "    AllReduce [0 B, inf) numPipeOps 2..4: RING/SIMPLE TREE/LL RING/LL\n"
                        + "    AllReduce [0 B, inf) numPipeOps 5..: TREE/LL RING/LL\n"
                        + ToolCommand.modeLine(io.nccltuner.policy.Mode.SHADOW, "import") + "\n",
                r.out());
        assertTrue(Files.readString(out).contains("        numPipeOps: {min: 2, max: 4}\n"), Files.readString(out));
        assertEquals(0, CliRun.run("validate", out.toString()).exit());
        Policy p = PolicyLoader.load(out);
        assertEquals(
                new Policy.Range(2, 4), p.profiles().getFirst().rules().get(1).numPipeOps());
        Path ch = Files.writeString(tmp.resolve("ch.csv"), "allgather,[0,65535],ring,simple,[4,8],*,*,*\n");
        CliRun c = CliRun.run("import", ch.toString());
        assertEquals(1, c.exit());
        assertEquals(
                "nccl-tuner import: " + ch + ":1: channels '[4,8]' spans several values (4..8); channels is not matched"
                        + " but set: the tuner writes one nChannels per call (getCollInfo's *nChannels; a policy candidate's channels,"
                        + " 1..64), so a range names no count to set: write one value, or -1 or * to keep NCCL's\n",
                c.err());
    }

    /** Issue 21 item 8: NCCLX nNodes/nRanks intervals import as profile match ranges and load back. */
    @Test
    void ncclxShapeIntervalsBecomeMatchRanges() throws Exception {
        Path conf = Files.writeString(
                tmp.resolve("ncclx.csv"), "allreduce,*,ring,simple,-1,(1,),[2,8]\nallreduce,*,tree,ll,-1,*,*\n");
        Path out = tmp.resolve("ncclx.yaml");
        CliRun r = CliRun.run("import", conf.toString(), "-o", out.toString());
        assertEquals(0, r.exit(), r.err());
        String yaml = Files.readString(out);
        assertTrue(yaml.contains("nRanks: {min: 2, max: 8}"), yaml);
        assertTrue(yaml.contains("nNodes: {min: 2}"), yaml);
        Policy p = PolicyLoader.load(out);
        assertEquals("nRanks2..8-nNodes2..", p.profileFor(4, 3).name()); // as compile names them, nRanks first
        assertEquals("any", p.profileFor(4, 1).name());
        assertEquals("any", p.profileFor(16, 3).name());
    }

    @Test
    void yamlGoesToStdoutWithoutOutput() {
        CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "--name", "nccl-example");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("schema: nccl-tuner-java/v1\nname: nccl-example\n"), r.out());
    }

    @Test
    void unknownNamesExitOneWithTheLine() throws Exception {
        Path conf = tmp.resolve("bad.conf");
        Files.writeString(conf, "# header\nallreduce,0,1024,ring,ll,-1,-1,-1\nallreduce,1025,2048,rnig,ll,-1,-1,-1\n");
        CliRun r = CliRun.run("import", conf.toString());
        assertEquals(1, r.exit());
        assertEquals(
                "nccl-tuner import: " + conf + ":3: unknown algorithm 'rnig' (NCCL's example plugin would silently "
                        + "use 'ring'); did you mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat\n",
                r.err());
    }

    @Test
    void aMissingFileIsOneLineNamingIt() {
        CliRun r = CliRun.run("import", tmp.resolve("nope.conf").toString());
        assertEquals(1, r.exit());
        assertEquals("nccl-tuner import: " + tmp.resolve("nope.conf") + ": no such file\n", r.err());
    }

    @Test
    void dashOutputIsStdoutAndCountsArePluralized() throws Exception {
        CliRun dash = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", "-");
        assertEquals(0, dash.exit(), dash.err());
        assertTrue(dash.out().contains("schema: nccl-tuner-java/v1\nname: example-tuner\n"), dash.out());
        assertTrue(Files.notExists(Path.of("-")));
        Path conf = Files.writeString(tmp.resolve("one.conf"), "allreduce,0,65535,ring,ll,-1,-1,-1\n");
        CliRun one = CliRun.run(
                "import", conf.toString(), "-o", tmp.resolve("one.yaml").toString());
        assertEquals(0, one.exit(), one.err());
        assertTrue(
                one.out().startsWith("policy: " + tmp.resolve("one.yaml") + " (1 profile, 1 rule, 0 warnings)\n"),
                one.out());
    }
}

package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.cli.Main;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Replaying the captured H200 traces through the engine with the repository's example policies.
 * Expected outcomes are read off the policy files and the captured tables by hand (see each test).
 */
class ReplayTest {
    static final AlgoProto RING_SIMPLE = new AlgoProto(Algorithm.RING, Protocol.SIMPLE);
    static final AlgoProto TREE_SIMPLE = new AlgoProto(Algorithm.TREE, Protocol.SIMPLE);
    static final AlgoProto RING_LL = new AlgoProto(Algorithm.RING, Protocol.LL);

    static Path repo(String path) {
        return Path.of(System.getProperty("nccltj.repo", "..")).resolve(path);
    }

    static Path trace(String name) throws Exception {
        return Path.of(System.getProperty("nccltj.repo", "..")).resolve("tests/traces/trace_" + name + ".csv");
    }

    /**
     * policies/h200-2rank.yaml on the DDP trace. AllReduce rules: [0, 8 KiB) RING/LL128 then
     * RING/SIMPLE; [8 KiB, 32 KiB) TREE/LL; [32 KiB, 128 MiB) TREE/SIMPLE. The trace's AllReduce
     * calls: 4 B once (RING/LL128 is -1 there, so RING/SIMPLE), 18 calls of ~32 MiB and 4 of ~125
     * MiB (below 128 MiB = 134217728 B: TREE/SIMPLE) and one of 564581376 B (no rule). Broadcast and
     * AllGather have no rules. So 23 of the 31 calls change.
     */
    @Test
    void ddpWithTheH200Policy() throws Exception {
        Policy p = PolicyLoader.load(repo("policies/h200-2rank.yaml"));
        TraceFile t = TraceFile.read(trace("ddp"));
        Replay.Result r = Replay.run(p, Mode.ENFORCE, t);
        assertEquals(31, r.calls().size());
        assertEquals(23, r.changedCalls());
        for (Replay.CallOutcome o : r.calls()) {
            TraceCall c = o.call();
            if (c.collective() != Collective.AllReduce) {
                assertEquals(o.ncclPick(), o.policyPick());
                assertArrayEquals(c.costs(), o.costsAfter(), "no rule: the table is untouched");
                continue;
            }
            AlgoProto expected = c.nBytes() < 8192 ? RING_SIMPLE : c.nBytes() < 134217728L ? TREE_SIMPLE : RING_SIMPLE;
            assertEquals(expected, o.policyPick(), "line " + c.line());
            // NCCL's own picks, as nccl_ddp.rank0.log shows them: RING/LL at 4 B, RING/SIMPLE above
            assertEquals(c.nBytes() == 4 ? RING_LL : RING_SIMPLE, o.ncclPick(), "line " + c.line());
            if (o.changed()) {
                // the engine writes exactly one entry, the policy's pick, to 0.0
                float[] after = o.costsAfter();
                for (int i = 0; i < after.length; i++) {
                    assertEquals(i == expected.index(c.numProto()) ? 0f : c.costs()[i], after[i], "entry " + i);
                }
            }
            assertEquals(0, o.nChannels());
        }
        assertTrue(
                r.engineLog().stream()
                        .anyMatch(
                                l -> l.startsWith(
                                        "INFO summary profile two-ranks-socket mode enforce: calls 31, rule hits 23, applied 23")),
                r.engineLog()::toString);
    }

    @Test
    void shadowModeChangesNothing() throws Exception {
        Policy p = PolicyLoader.load(repo("policies/h200-2rank.yaml"));
        Replay.Result r = Replay.run(p, Mode.SHADOW, TraceFile.read(trace("ddp")));
        assertEquals(0, r.changedCalls());
        r.calls().forEach(o -> assertArrayEquals(o.call().costs(), o.costsAfter()));
    }

    /**
     * policies/channel-override.yaml on the coalesced trace: AllReduce [0, 4 KiB) RING/SIMPLE with 1
     * channel hits the three 1024-byte calls (numPipeOps 4) and the final 4-byte call; nothing else.
     */
    @Test
    void channelOverrideOnTheCoalescedTrace() throws Exception {
        Policy p = PolicyLoader.load(repo("policies/channel-override.yaml"));
        Replay.Result r = Replay.run(p, Mode.ENFORCE, TraceFile.read(trace("coalesced")));
        assertEquals(19, r.calls().size());
        assertEquals(4, r.changedCalls());
        for (Replay.CallOutcome o : r.calls()) {
            boolean hit = o.call().nBytes() < 4096;
            assertEquals(hit ? 1 : 0, o.nChannels(), "line " + o.call().line());
            assertEquals(hit ? RING_SIMPLE : o.ncclPick(), o.policyPick());
        }
        Replay.Change first =
                r.changes().stream().filter(c -> c.nBytes() == 1024).findFirst().orElseThrow();
        assertEquals(3, first.calls());
        assertEquals(4, first.numPipeOps());
        assertEquals(new AlgoProto(Algorithm.TREE, Protocol.LL), first.ncclPick());
        assertEquals(21.4074f, first.ncclTime());
        assertEquals(204.693f, first.policyTime());
    }

    record Run(int code, String out, String err) {}

    static Run cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), out.toString(), err.toString());
    }

    @Test
    void replayCommand(@TempDir Path dir) throws Exception {
        Run r = cli(
                "replay",
                "--trace",
                trace("ddp").toString(),
                "--policy",
                repo("policies/h200-2rank.yaml").toString());
        assertEquals(0, r.code(), r.err());
        System.out.print(r.out());
        assertTrue(r.out().contains("\nAllReduce: 24 calls, 23 changed\n"), r.out());
        assertTrue(r.out().contains("\nall: 31 calls, 23 changed\n"), r.out());
        String row = r.out()
                .lines()
                .filter(l -> l.contains(" 33583104 "))
                .findFirst()
                .orElseThrow();
        assertEquals(
                java.util.List.of(
                        "AllReduce",
                        "~32.03",
                        "MiB",
                        "33583104",
                        "1",
                        "6",
                        "RING/SIMPLE",
                        "28036.900",
                        "TREE/SIMPLE",
                        "51161.602",
                        "changed"),
                java.util.List.of(row.trim().split("\\s+")));

        Run shadow = cli(
                "replay",
                "--trace",
                trace("ddp").toString(),
                "--policy",
                repo("policies/h200-2rank.yaml").toString(),
                "--mode",
                "shadow",
                "--changes-only");
        assertEquals(0, shadow.code(), shadow.err());
        // shadow changes nothing, but shows what the policy would pick (its enforce-mode pick)
        assertTrue(
                shadow.out().contains("\nall: 31 calls, 0 changed, 23 would change in enforce mode\n"), shadow.out());
        String would = shadow.out()
                .lines()
                .filter(l -> l.contains(" 33583104.."))
                .findFirst()
                .orElseThrow();
        assertEquals(
                java.util.List.of(
                        "AllReduce", // --changes-only folds the 5 adjacent sizes of this decision
                        "~32.03",
                        "MiB",
                        "..",
                        "~125.12",
                        "MiB",
                        "(5",
                        "sizes)",
                        "33583104..131200000",
                        "1",
                        "22",
                        "RING/SIMPLE",
                        "28036.900..109384.000",
                        "would",
                        "pick",
                        "TREE/SIMPLE",
                        "51161.602..174802.000",
                        "would",
                        "change"),
                java.util.List.of(would.trim().split("\\s+")));
        Run off = cli(
                "replay",
                "--trace",
                trace("ddp").toString(),
                "--policy",
                repo("policies/h200-2rank.yaml").toString(),
                "--mode",
                "off",
                "--changes-only");
        assertTrue(off.out().contains("The policy changes nothing in this trace."), off.out());

        Path bad = Files.writeString(dir.resolve("bad.yaml"), "schema: nccl-tuner-java/v1\nname: x\nprofiles: []\n");
        Run refused = cli("replay", "--trace", trace("ddp").toString(), "--policy", bad.toString());
        assertEquals(1, refused.code());
        assertTrue(refused.err().contains("bad.yaml:"), refused.err());
        Run missing = cli(
                "replay",
                "--trace",
                dir.resolve("none.csv").toString(),
                "--policy",
                repo("policies/h200-2rank.yaml").toString());
        assertEquals(1, missing.code());
    }
}

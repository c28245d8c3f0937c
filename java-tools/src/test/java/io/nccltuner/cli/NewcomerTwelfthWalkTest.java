package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, the twelfth newcomer walk: validate, show and replay read a CSV policy through the
 * whole conversion and printed another sha256 than the plugin logs (which leaves out the lines
 * that can never apply, as import does); explain wrote "3 sizes, 8 KiB .. 64 KiB" of sizes with
 * another line's size between them.
 */
class NewcomerTwelfthWalkTest {
    @TempDir
    Path tmp;

    /** The two-rank H200 log, NCCL 2.28.9. */
    private static final String LOG = CliRun.trace("nccl_sweep.rank0.log");

    private static final Pattern SHA256 = Pattern.compile("sha256 ([0-9a-f]{64})");

    private static List<String> sha256sIn(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = SHA256.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void validateAndShowPrintTheSha256ThePluginLogsForACsv() throws Exception {
        // line 9 (Broadcast TREE/SIMPLE, in 3 profiles) is never offered: the plugin leaves it out
        Path conf = Path.of(CliRun.fixture("example-tuner.conf"));
        io.nccltuner.policy.Policy plugin = io.nccltuner.policy.NcclExampleConfig.toPolicy(conf, w -> {});
        List<String> engine = plugin.profiles().stream()
                .map(x -> io.nccltuner.engine.DecisionTable.compile(x).sha256())
                .toList();
        assertEquals(3, engine.size());
        CliRun validate = CliRun.run("validate", conf.toString());
        assertEquals(1, validate.exit(), validate.out()); // the never-applicable line is still an error
        assertEquals(engine, sha256sIn(validate.out()), validate.out());
        assertTrue(
                validate.out()
                        .contains("error: " + conf + ":9 (Broadcast [0 B, 40 KiB)) in 3 profiles (profiles[0]"
                                + " nRanks16-nNodes2, profiles[1] nNodes1, profiles[2] any): can never apply:"
                                + " NCCL offers none of its candidates for Broadcast"),
                validate.out());
        CliRun show = CliRun.run("show", conf.toString());
        assertEquals(0, show.exit(), show.err());
        assertTrue( // 6 rules, the plugin's: line 9 left out
                show.out().contains("\nnRanks=8 nNodes=1: profile nNodes1 (profiles[1], 6 rules)\n"), show.out());
        // 4 warnings of reading it and the left-out line: one line, which validate's listing backs
        assertEquals(
                "warning: " + conf + ": read with 5 warnings (1 of them a line left out as never applicable, as the"
                        + " plugin leaves them out): `nccl-tuner validate " + conf + "` lists them\n",
                show.err());
    }

    /**
     * Newcomer walk 11: replay, try and show of NVIDIA's example CSV printed its 9-12 reading warnings
     * before any output, on every run. Above 3, one line says how many and that validate lists them;
     * up to 3 are printed as they are.
     */
    @Test
    void manyWarningsOfReadingACsvAreOneLineAFewAreSaid() throws Exception {
        Path conf = Path.of(CliRun.fixture("example-tuner.conf"));
        CliRun replay = CliRun.run("replay", "--policy", conf.toString(), "--trace", CliRun.trace("trace_ddp.csv"));
        assertEquals(0, replay.exit(), replay.err());
        assertEquals(
                1,
                ChartsSeventhWalkTest.count(replay.err(), "warning: " + conf + ": read with 5 warnings"),
                replay.err());
        assertEquals(-1, replay.err().indexOf(conf + ":9: Broadcast"), replay.err());
        Path few = CliRun.write(tmp, "few.conf", "allreduce,0,65536,ring,ll,-1,-1,-1\n");
        CliRun show = CliRun.run("show", few.toString());
        assertEquals(0, show.exit(), show.err());
        assertEquals(-1, show.err().indexOf("read with"), show.err());
    }

    @Test
    void explainWritesSizesApartAsTheirRuns() throws Exception {
        Path p = CliRun.write(tmp, "gap.yaml", """
                schema: nccl-tuner-java/v1
                name: gap
                mode: enforce
                profiles:
                  - name: two-ranks
                    match: {nRanks: 2, nNodes: 2}
                    rules:
                      - collective: AllReduce
                        bytes: {from: 16 KiB, to: 32 KiB}
                        candidates:
                          - {algorithm: NVLS, protocol: SIMPLE}
                """);
        CliRun r = CliRun.run("explain", "--log", LOG, "--policy", p.toString(), "--sizes", "8KiB,16KiB,32KiB,64KiB");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\nKept NCCL's pick (=) at 3 sizes (8 KiB; 32 KiB .. 64 KiB): no rule of profile"
                                + " two-ranks covers AllReduce there with numPipeOps 1 (its AllReduce rules: 16 KiB .. 32"
                                + " KiB).\n"),
                r.out());
    }
}

package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * replay --nccl-era and explain's era from its log: the engine runs as that NCCL calls the tuner,
 * so rules naming regBuff match from tuner v4 (2.24) on and never under v3 (2.22).
 */
class NcclEraCommandsTest {
    static Path policy(Path dir, String regBuff) throws Exception {
        return Files.writeString(dir.resolve("rb-" + regBuff + ".yaml"), """
        schema: nccl-tuner-java/v1
        name: rb
        profiles:
          - name: any
            rules:
              - collective: AllReduce
                bytes: {from: 0 B}
                regBuff: %s
                candidates:
                  - {algorithm: TREE, protocol: SIMPLE}
        """.formatted(regBuff));
    }

    @Test
    void replayRunsTheEngineAsTheEraSays(@TempDir Path dir) throws Exception {
        String p = policy(dir, "false").toString();
        String trace = CliRun.trace("trace_tp_infer.csv");
        CliRun v5 = CliRun.run("replay", "--trace", trace, "--policy", p, "--changes-only");
        assertEquals(0, v5.exit(), v5.err());
        assertTrue(
                v5.out()
                        .lines()
                        .findFirst()
                        .orElseThrow()
                        .endsWith(
                                "replayed in enforce mode as NCCL 2.28.9 calls the tuner (tuner v5, regBuff 0; --nccl-era)"),
                v5.out());
        assertTrue(v5.out().contains("TREE/SIMPLE"), v5.out());
        CliRun v3 = CliRun.run("replay", "--trace", trace, "--policy", p, "--changes-only", "--nccl-era", "2.22");
        assertEquals(0, v3.exit(), v3.err());
        assertTrue(
                v3.out()
                        .lines()
                        .findFirst()
                        .orElseThrow()
                        .endsWith(
                                "replayed in enforce mode as NCCL 2.22.3 calls the tuner (tuner v3, regBuff -1; --nccl-era)"),
                v3.out());
        assertTrue(!v3.out().contains("TREE/SIMPLE"), v3.out());
        CliRun bad = CliRun.run("replay", "--trace", trace, "--policy", p, "--nccl-era", "2.26");
        assertEquals(2, bad.exit());
        assertEquals(
                "nccl-tuner replay: --nccl-era '2.26' is not 2.22, 2.24, 2.28, 2.30 or 2.32.6\n"
                        + "see 'nccl-tuner replay --help'\n",
                bad.err());
    }

    @Test
    void replayLabelsItsSavingWithItsBaseline() throws Exception {
        CliRun r = CliRun.run(
                "replay",
                "--trace",
                CliRun.trace("trace_tp_infer.csv"),
                "--policy",
                Path.of(System.getProperty("nccltj.repo", ".."))
                        .resolve("policies/h200-2rank-measured.yaml")
                        .toString(),
                "--measurements",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"));
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .matches("(?s).*\\nmeasured \\(\\S+\\): \\d+ of 273 calls priced: NCCL's picks [\\d.]+ us, the "
                                + "policy's [\\d.]+ us: expected saving [\\d.]+ us, [\\d.]+% of the rule hits' time \\(NCCL's"
                                + " [\\d.]+ us over the \\d+ rule hits priced\\), [\\d.]+% of all calls' time \\(NCCL's [\\d.]+ us"
                                + " over the \\d+ calls priced\\)\\n.*"),
                r.out());
    }

    @Test
    void explainTakesTheEraFromItsLog(@TempDir Path dir) throws Exception {
        String log = ExplainCommandTest.resource(ExplainCommandTest.H200 + "nccl_sweep.rank0.log");
        ExplainCommandTest.Run f = ExplainCommandTest.run(
                "explain",
                "--log",
                log,
                "--sizes",
                "1MiB",
                "--policy",
                policy(dir, "false").toString());
        ExplainCommandTest.Run t = ExplainCommandTest.run(
                "explain",
                "--log",
                log,
                "--sizes",
                "1MiB",
                "--policy",
                policy(dir, "true").toString());
        assertEquals(0, f.code(), f.err());
        assertTrue(
                f.out()
                        .contains("\nThe engine runs as NCCL 2.28.9 calls the tuner (the log's release): tuner v5, "
                                + "regBuff 0; GPU unknown (--gpu NAME presents one).\n"),
                f.out());
        // regBuff false matches NCCL's unregistered buffers; regBuff true does not
        assertNotEquals(ExplainCommandTest.line(f.out(), "1 MiB"), ExplainCommandTest.line(t.out(), "1 MiB"));
        assertTrue(ExplainCommandTest.line(f.out(), "1 MiB").contains("TREE/SIMPLE"), f.out());
    }
}

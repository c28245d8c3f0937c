package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replay's "matched a rule but changed nothing" lines name the rule the engine matched for the
 * calls, under the regBuff the replay passes (--nccl-era: 0 from tuner v4, as a captured trace's
 * calls pass it), so a {@code regBuff: false} rule is named as a rule for any regBuff is.
 */
class ReplayRuleNameTest {
    @TempDir
    Path tmp;

    private static final String LINE =
            "\n  AllReduce 64 KiB (65536 B), numPipeOps 1: 64 calls; rule profiles[0].rules[2]"
                    + " candidates TREE/LL128 RING/LL128; NCCL offers TREE/LL TREE/SIMPLE RING/LL RING/SIMPLE\n";

    @Test
    void aRegBuffFalseRuleIsNamedUnderTheDefaultEra() throws Exception {
        Path policy = CliRun.write(
                tmp,
                "regbuff-false.yaml",
                NewcomerFifthWalkTest.UNCHANGED.replace(
                        "bytes: {from: 64 KiB, to: 128 KiB}\n",
                        "bytes: {from: 64 KiB, to: 128 KiB}\n        regBuff: false\n"));
        CliRun r = CliRun.run(
                "replay", "--mode", "shadow", "--trace", NewcomerFifthWalkTest.TRACE, "--policy", policy.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("(tuner v5, regBuff 0; --nccl-era)"), r.out());
        assertTrue(r.out().contains(LINE), r.out());
    }

    @Test
    void aRuleForAnyRegBuffIsNamedUnderTunerV3() throws Exception {
        Path policy = CliRun.write(tmp, "any.yaml", NewcomerFifthWalkTest.UNCHANGED);
        CliRun r = CliRun.run(
                "replay",
                "--mode",
                "shadow",
                "--nccl-era",
                "2.22",
                "--trace",
                NewcomerFifthWalkTest.TRACE,
                "--policy",
                policy.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("regBuff -1; --nccl-era)"), r.out());
        assertTrue(r.out().contains(LINE), r.out());
    }
}

package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Force mode through the built plugin: NCCL_TUNER_JAVA_FORCE=TREE/SIMPLE/4 over the captured
 * NCCL 2.28.9 sweep trace (all five collectives, 4 B .. 256 MiB), where NCCL offers TREE/SIMPLE
 * only for AllReduce. The expectation is computed here from the trace alone: a call whose
 * TREE/SIMPLE entry is not -1 runs TREE/SIMPLE on 4 channels; any other call runs NCCL's own pick
 * (strict minimum of the table as passed) with nChannels untouched.
 */
@Timeout(120)
class ForceModeIT {
    @BeforeAll
    static void built() {
        Harness.requireBuilt();
    }

    @Test
    void everyOfferedCallForcedEveryUnavailableCallLeftToNccl() throws Exception {
        var trace = Harness.TRACES.resolve("trace_sweep.csv");
        Harness.Result r = Harness.replay(
                Map.of(
                        "NCCL_TUNER_JAVA_FORCE",
                        "tree/simple/4",
                        // a policy set beside it is not read
                        "NCCL_TUNER_JAVA_POLICY",
                        Harness.REPO.resolve("policies/h200-2rank.yaml").toString()),
                trace);
        assertEquals(0, r.exit(), r.text());
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace);
        List<Harness.Selection> got = r.selections();
        assertEquals(calls.size(), got.size(), r.text());
        int forced = 0;
        int left = 0;
        for (int i = 0; i < calls.size(); i++) {
            TraceExpectation.Call c = calls.get(i);
            float entry = c.costs()[0 * c.numProto() + 2]; // TREE (0) / SIMPLE (2)
            Harness.Selection nccl = TraceExpectation.expect(c, null, false);
            if (entry >= 0) {
                forced++;
                assertEquals(
                        new Harness.Selection(nccl.collective(), c.nBytes(), "TREE", "SIMPLE", 4),
                        got.get(i),
                        "call " + i);
            } else {
                left++;
                assertEquals(nccl, got.get(i), "call " + i + " (TREE/SIMPLE is -1: NCCL's choice stands)");
            }
        }
        assertEquals(29, forced, "the trace offers TREE/SIMPLE in 29 calls");
        assertEquals(112, left);
        assertTrue(r.warnings().isEmpty(), r.warnings().toString());
        assertEquals(
                1,
                r.grep("force mode TREE/SIMPLE/4: every call where NCCL offers it uses it")
                        .size(),
                r.text());
        assertEquals(
                1,
                r.grep("NCCL_TUNER_JAVA_FORCE is set, so the policy is not read")
                        .size(),
                r.text());
        assertEquals(
                1,
                r.grep("TUNER/Java: policy force-TREE-SIMPLE-4 profile force:TREE/SIMPLE/4 mode enforce rules 5")
                        .size(),
                r.text());
        assertEquals(
                1,
                r.grep("summary profile force:TREE/SIMPLE/4 mode enforce: calls 141, rule hits 141, applied 29")
                        .size(),
                r.text());
    }

    /**
     * docs/measure.md: force mode is enforce "unless NCCL_TUNER_JAVA_MODE says shadow or off". In
     * both, not one call of the sweep trace may change: NCCL's own pick and nChannels everywhere.
     */
    @ParameterizedTest(name = "NCCL_TUNER_JAVA_MODE={0}")
    @ValueSource(strings = {"shadow", "off"})
    void forceModeRespectsShadowAndOff(String mode) throws Exception {
        var trace = Harness.TRACES.resolve("trace_sweep.csv");
        Harness.Result r =
                Harness.replay(Map.of("NCCL_TUNER_JAVA_FORCE", "tree/simple/4", "NCCL_TUNER_JAVA_MODE", mode), trace);
        assertEquals(0, r.exit(), r.text());
        List<TraceExpectation.Call> calls = TraceExpectation.read(trace);
        List<Harness.Selection> got = r.selections();
        assertEquals(calls.size(), got.size(), r.text());
        for (int i = 0; i < calls.size(); i++) {
            assertEquals(
                    TraceExpectation.expect(calls.get(i), null, false),
                    got.get(i),
                    "call " + i + " in " + mode + " mode");
        }
        assertTrue(r.summary().startsWith("harness: calls=141 changed=0 warn=0 "), r.summary());
        assertEquals(
                1,
                r.grep("TUNER/Java: policy force-TREE-SIMPLE-4 profile force:TREE/SIMPLE/4 mode " + mode)
                        .size(),
                r.text());
    }

    @Test
    void badForceValueChangesNothingAndSaysWhy() throws Exception {
        var trace = Harness.TRACES.resolve("trace_ddp.csv");
        Harness.Result r = Harness.replay(Map.of("NCCL_TUNER_JAVA_FORCE", "RINGG/LL"), trace);
        assertEquals(0, r.exit(), r.text());
        assertEquals(
                1,
                r.grep("NCCL WARN TUNER/Java: NCCL_TUNER_JAVA_FORCE: 'RINGG' is not an algorithm")
                        .size(),
                r.text());
        assertTrue(r.summary().contains(" changed=0 "), r.summary());
    }
}

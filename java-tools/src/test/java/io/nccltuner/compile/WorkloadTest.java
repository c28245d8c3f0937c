package io.nccltuner.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Compiler.Compilation;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkloadTest {
    @TempDir
    Path tmp;

    @Test
    void capturedTraceWeightsTheSharedSweep() throws Exception {
        List<Workload.Call> calls = Workload.read(Fixtures.trace("trace_tp_infer.csv"));
        assertEquals(273, calls.size()); // 257 AllReduce + 16 AllGather get rows
        assertEquals(
                new Workload.Call(Collective.AllReduce, 16384, 2, 2, 1, 1),
                calls.stream()
                        .filter(c -> c.collective() == Collective.AllReduce && c.nBytes() == 16384)
                        .findFirst()
                        .orElseThrow());
        Compilation c = Compiler.compile(
                Fixtures.read("h200-2rank-sweep_allreduce.rep1.csv"), Compiler.Options.defaults("h200"));
        List<Workload.Savings> s = Workload.evaluate(c, calls);
        assertEquals(1, s.size());
        Workload.Savings w = s.getFirst();
        assertEquals(257, w.calls());
        assertEquals(257, w.priced());
        // 64 calls each at 16, 64, 256 KiB and 1 MiB, one at 4 B; NCCL's times vs the policy's picks
        // (the robust compile takes RING/SIMPLE at 16 and 64 KiB, where TREE/LL and TREE/SIMPLE were
        // fastest in single readings next to slow ones)
        double nccl = 64 * (4531.264 + 4545.760 + 4559.136 + 4621.536) + 4806.560;
        double policy = 64 * (2455.104 + 2458.048 + 2454.304 + 2504.384) + 2453.248;
        double best = 64 * (2440.064 + 2442.400 + 2454.304 + 2504.384) + 2453.248;
        assertEquals(nccl, w.defaultUs(), 1e-6);
        assertEquals(policy, w.policyUs(), 1e-6);
        assertEquals(best, w.bestUs(), 1e-6);
        assertEquals(1 - policy / nccl, w.saving(), 1e-12);
        assertEquals("45.94%", TextReport.pct(w.saving()));
        assertEquals(policy / best - 1, w.policyRegret(), 1e-12);
        String report = TextReport.render(c, s);
        assertTrue(report.contains("expected saving 45.94%"), report);
    }

    @Test
    void shadowLogJsonLines() throws Exception {
        List<Workload.Call> calls = Workload.read(Fixtures.path("shadow-seed001.jsonl"));
        // coll 6 (Send) and the decision log's "7" (Recv) are not tuner collectives
        assertEquals(5, calls.size());
        assertEquals(new Workload.Call(Collective.AllReduce, 128, 0, 0, 0, 10), calls.get(1));
        // a record as the engine's decision log (NCCL_TUNER_JAVA_LOG) writes it: a rule hit
        assertEquals(new Workload.Call(Collective.AllReduce, 1048576, 0, 0, 1, 1, true), calls.get(4));
        Compilation c = Compiler.compile(
                Fixtures.read("seed001-v100-allreduce.csv", "seed001-nccl-2.22.3-tuning.log"),
                Compiler.Options.defaults("seed001"));
        Workload.Savings w = Workload.evaluate(c, calls).getFirst();
        assertEquals(22, w.calls());
        assertEquals(21, w.priced()); // 8 MiB is outside the measured span (128 B .. 2 MiB)
        assertEquals(11 * 50.425 + 10 * 18.675, w.defaultUs(), 1e-9);
        assertEquals(11 * 41.675 + 10 * 18.675, w.policyUs(), 1e-9);
        assertEquals(11 * 41.675 + 10 * 18.660, w.bestUs(), 1e-9);
        assertEquals("12.98%", TextReport.pct(w.saving()));
        assertEquals("14.95%", TextReport.pct(w.defaultRegret()));
        assertEquals("0.02%", TextReport.pct(w.policyRegret()));
        assertEquals(1, w.pricedRuleHits());
        assertEquals(
                "over the workload's 21 priced calls, 1 of them from decision logs, only the calls a rule of the policy "
                        + "the plugin ran matched (a trace, NCCL_TUNER_JAVA_RECORD=FILE, records all calls)",
                w.baseline());
    }

    @Test
    void malformedLinesNameFileAndLine() throws Exception {
        Path f = tmp.resolve("w.jsonl");
        Files.writeString(f, "{\"collective\": \"AllReduce\", \"nBytes\": 4}\n{\"collective\": \"AllReduce\"}\n");
        InputException e = assertThrows(InputException.class, () -> Workload.read(f));
        assertEquals(f + ":2", e.where());
        Files.writeString(f, "get,0,2,2,4,x,1\n");
        e = assertThrows(InputException.class, () -> Workload.read(f));
        assertEquals(f + ":1", e.where());
        Files.writeString(f, "{\"collective\": \"AllReduse\", \"nBytes\": 4}\n");
        e = assertThrows(InputException.class, () -> Workload.read(f));
        assertTrue(e.getMessage().endsWith(":1: unknown collective 'AllReduse'"), e.getMessage());
    }
}

package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.trace.TraceFile;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every call of every captured trace under tests/traces/ (captured from NCCL 2.28.9): the captured costs lie in the ranges the logged table allows, and the model's
 * pick is NCCL's logged pick or reported ambiguous.
 */
class CapturedTracesTest {
    record Pair(String name, Path trace, Path log) {}

    static List<Pair> pairs() throws IOException, URISyntaxException {
        Path root = Path.of(System.getProperty("nccltj.repo", "..")).resolve("tests/traces");
        List<Pair> out = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path t : files.filter(f -> f.getFileName().toString().matches("trace_.*\\.csv"))
                    .sorted()
                    .toList()) {
                String name = t.getFileName().toString().replaceAll("^trace_|\\.csv$", "");
                Path log = t.resolveSibling("nccl_" + name + ".rank0.log");
                out.add(new Pair("nccl-2.28.9-h200-2rank/" + name, t, log));
            }
        }
        return out;
    }

    @Test
    void everyCapturedCallAgreesWithTheLoggedTable() throws Exception {
        List<Pair> pairs = pairs();
        assertEquals(5, pairs.size(), "trace/log pairs");
        long exact = 0;
        long ambiguous = 0;
        long calls = 0;
        long exactTight = 0;
        long ambiguousTight = 0;
        for (Pair p : pairs) {
            NcclModelLog log = NcclModelLog.read(p.log());
            assertEquals(List.of(), log.problems(), p.name() + " log problems");
            assertEquals(1, log.communicators().size(), p.name() + " communicators");
            Communicator comm = log.communicators().get(0);
            TraceFile trace = TraceFile.read(p.trace());
            CostModel model = comm.model();
            TraceCheck.Report r = TraceCheck.run(model, trace.calls(), comm.selections());
            System.out.println(p.name() + ": " + r.summary());
            r.entryProblems().stream().limit(10).forEach(s -> System.out.println("  " + s));
            r.tracePickProblems().stream().limit(10).forEach(s -> System.out.println("  " + s));
            for (TraceCheck.CallResult c : r.calls()) {
                if (c.verdict() == TraceCheck.Verdict.MISMATCH || c.verdict() == TraceCheck.Verdict.UNMATCHED) {
                    System.out.println("  " + c.verdict() + " line " + c.call().line() + " "
                            + c.call().collective() + " "
                            + c.call().nBytes() + " model " + c.prediction().pick() + " possible "
                            + c.prediction().possiblePicks()
                            + " logged " + c.loggedPick());
                }
            }
            CostModel.Tightening t = model.tighten(trace.calls());
            TraceCheck.Report rt = TraceCheck.run(t.model(), trace.calls(), comm.selections());
            System.out.println("  tightened (compute capability "
                    + t.model().shape().computeCapabilityText() + "): " + rt.summary());
            t.problems().forEach(s -> System.out.println("  " + s));
            exact += r.count(TraceCheck.Verdict.EXACT);
            ambiguous += r.count(TraceCheck.Verdict.AMBIGUOUS);
            exactTight += rt.count(TraceCheck.Verdict.EXACT);
            ambiguousTight += rt.count(TraceCheck.Verdict.AMBIGUOUS);
            calls += r.calls().size();
            assertEquals(List.of(), r.entryProblems(), p.name());
            assertEquals(List.of(), r.tracePickProblems(), p.name());
            assertEquals(0, r.count(TraceCheck.Verdict.MISMATCH), p.name() + " mismatches");
            assertEquals(0, r.count(TraceCheck.Verdict.UNMATCHED), p.name() + " unmatched");
            assertEquals(List.of(), t.problems(), p.name() + " tightening");
        }
        System.out.println("all traces: " + calls + " calls, exact " + exact + ", ambiguous " + ambiguous
                + "; after tightening: exact " + exactTight + ", ambiguous " + ambiguousTight);
        assertEquals(calls, exact + ambiguous);
        assertTrue(exact > 0);
    }

    static boolean sameTable(CostTable a, CostTable b) {
        if (a.numAlgorithms() != b.numAlgorithms()) {
            return false;
        }
        for (io.nccltuner.policy.Collective c : io.nccltuner.policy.Collective.values()) {
            for (int al = 0; al < a.numAlgorithms(); al++) {
                for (io.nccltuner.policy.Protocol pr : io.nccltuner.policy.Protocol.values()) {
                    AlgoProto ap = new AlgoProto(io.nccltuner.policy.Algorithm.ofId(al), pr);
                    if (a.latency(c, ap) != b.latency(c, ap) || a.bandwidth(c, ap) != b.bandwidth(c, ap)) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    /** Narrowed with the sweep only, the model is checked on the other four workloads' calls. */
    @Test
    void parametersNarrowedFromTheSweepCarryOverToTheOtherTraces() throws Exception {
        List<Pair> pairs = pairs();
        Pair sweep = pairs.stream()
                .filter(p -> p.name().endsWith("/sweep"))
                .findFirst()
                .orElseThrow();
        Communicator sc = NcclModelLog.read(sweep.log()).communicators().get(0);
        CostModel.Tightening t =
                sc.model().tighten(TraceFile.read(sweep.trace()).calls());
        assertEquals(List.of(), t.problems());
        assertEquals(
                ">= 80",
                t.model().shape().computeCapabilityText(),
                "x1.4 plateau: compute capability 8.0 or more (H200 is 9.0)");
        long exact = 0;
        long ambiguous = 0;
        long calls = 0;
        for (Pair p : pairs) {
            if (p == sweep) {
                continue;
            }
            Communicator c = NcclModelLog.read(p.log()).communicators().get(0);
            // same machine and release: the narrowed model applies because the logged tables are equal
            assertTrue(sameTable(sc.table(), c.table()), p.name());
            TraceCheck.Report r =
                    TraceCheck.run(t.model(), TraceFile.read(p.trace()).calls(), c.selections());
            System.out.println(p.name() + " with the sweep's narrowed model: " + r.summary());
            assertEquals(0, r.count(TraceCheck.Verdict.MISMATCH) + r.count(TraceCheck.Verdict.UNMATCHED), p.name());
            assertEquals(List.of(), r.entryProblems(), p.name());
            exact += r.count(TraceCheck.Verdict.EXACT);
            ambiguous += r.count(TraceCheck.Verdict.AMBIGUOUS);
            calls += r.calls().size();
        }
        System.out.println("held-out traces: " + calls + " calls, exact " + exact + ", ambiguous " + ambiguous);
    }
}

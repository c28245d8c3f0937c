package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Seed 001: NCCL 2.22.3 on 4 x V100 (one node). Its AllReduce table and the picks it reports over
 * 4 B .. 1 GiB: Ring/LL up to 512 KiB, Ring/LL128 at 1 and 2 MiB, Ring/SIMPLE from 4 MiB (29 of
 * 29), and at 1 MiB the times 50.530 / 39.647 / 41.907 us with NCCL's line "1048576 Bytes -> Algo 1
 * proto 1 time 39.646954".
 */
class Seed001V100Test {
    static final AlgoProto RING_LL = new AlgoProto(Algorithm.RING, Protocol.LL);
    static final AlgoProto RING_LL128 = new AlgoProto(Algorithm.RING, Protocol.LL128);
    static final AlgoProto RING_SIMPLE = new AlgoProto(Algorithm.RING, Protocol.SIMPLE);

    static Communicator comm() throws Exception {
        NcclModelLog log = NcclModelLog.read(Path.of(Seed001V100Test.class
                .getResource("/model/logs/nccl-2.22.3_4xV100_seed001.log")
                .toURI()));
        assertEquals(java.util.List.of(), log.problems());
        assertEquals(1, log.communicators().size());
        return log.communicators().get(0);
    }

    @Test
    void oneMebibyteTimesAndPick() throws Exception {
        CostModel model = comm().model();
        Prediction p = model.predict(Collective.AllReduce, 1 << 20, 1);
        assertEquals(50.530, p.candidate(RING_LL).time(), 0.0005);
        assertEquals(39.647, p.candidate(RING_LL128).time(), 0.0005);
        assertEquals(41.907, p.candidate(RING_SIMPLE).time(), 0.0005);
        assertEquals(RING_LL128, p.pick());
        assertFalse(p.ambiguous(), () -> "possible picks " + p.possiblePicks());
        // Tree at 1 MiB: logSize = log2(2^20 >> 6) = 14; corrections LL .5, LL128 .6, SIMPLE .5
        assertEquals(
                10.4 + 1048576 / (1000 * 14.5 * 0.5),
                p.candidate(new AlgoProto(Algorithm.TREE, Protocol.LL)).time(),
                1e-9);
        assertEquals(
                168.0 + 1048576 / (1000 * 55.2 * 0.5),
                p.candidate(new AlgoProto(Algorithm.TREE, Protocol.SIMPLE)).time(),
                1e-9);
    }

    @Test
    void loggedLineAgreesWithTheModel() throws Exception {
        Communicator c = comm();
        LoggedSelection s = c.selections().get(0);
        assertEquals(SelectionFormat.IDS_WITH_TIME, s.format());
        Prediction p = c.model().predict(Collective.AllReduce, s.loggedBytes(), 1);
        assertEquals(s.pick(), p.pick());
        assertTrue(
                p.candidate(s.pick()).range().contains(s.time(), 0),
                () -> s.time() + " not in " + p.candidate(s.pick()).range());
    }

    @Test
    void sweepFourBytesToOneGibibyte() throws Exception {
        CostModel model = comm().model();
        int agree = 0;
        int sizes = 0;
        StringBuilder out = new StringBuilder();
        for (long n = 4; n <= (1L << 30); n <<= 1) {
            AlgoProto expected = n <= 512 * 1024 ? RING_LL : n <= 2 * 1024 * 1024 ? RING_LL128 : RING_SIMPLE;
            Prediction p = model.predict(Collective.AllReduce, n, 1);
            assertNotNull(p.pick());
            sizes++;
            if (p.pick().equals(expected) && !p.ambiguous()) {
                agree++;
            }
            out.append(String.format(
                    "%11d %-12s %10.3f %s%n",
                    n, p.pick(), p.pickTime(), p.ambiguous() ? "ambiguous " + p.possiblePicks() : ""));
        }
        System.out.print(out);
        System.out.println("seed 001 sweep: " + agree + " of " + sizes + " picks as NCCL logged");
        assertEquals(29, sizes);
        assertEquals(29, agree, out::toString);
    }
}

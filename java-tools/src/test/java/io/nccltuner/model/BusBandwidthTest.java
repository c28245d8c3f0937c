package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Collective;
import org.junit.jupiter.api.Test;

/**
 * nccl-tests' bus bandwidth (src/*.cu {@code GetBw}): the factors, GB/s as 1e9 bytes per second,
 * and the edges as nccl-tests has them: one rank gives busbw 0 (not algbw), an unknown rank count
 * (0) gives NaN.
 */
class BusBandwidthTest {
    @Test
    void factorsAsNcclTestsGetBw() {
        assertEquals(1.875, BusBandwidth.factor(Collective.AllReduce, 16), 1e-12);
        assertEquals(1.0, BusBandwidth.factor(Collective.AllReduce, 2), 1e-12);
        assertEquals(0.875, BusBandwidth.factor(Collective.AllGather, 8), 1e-12);
        assertEquals(0.5, BusBandwidth.factor(Collective.ReduceScatter, 2), 1e-12);
        assertEquals(1.0, BusBandwidth.factor(Collective.Broadcast, 8), 0);
        assertEquals(1.0, BusBandwidth.factor(Collective.Reduce, 8), 0);
    }

    @Test
    void gigabytesAreTenToTheNinthBytesPerSecond() {
        // nccl-tests all_reduce_perf, 2 ranks: 32 MiB in 600 us is algbw 55.92 GB/s, busbw 55.92 GB/s
        assertEquals(55.924, BusBandwidth.algbw(33554432, 600), 1e-3);
        assertEquals(55.924, BusBandwidth.busbw(Collective.AllReduce, 2, 33554432, 600), 1e-3);
        assertEquals(104.858, BusBandwidth.busbw(Collective.AllReduce, 16, 33554432, 600), 1e-3);
        assertEquals(2.0, BusBandwidth.busbw(Collective.AllGather, 2, 4_000_000, 1000), 1e-12);
    }

    @Test
    void oneRankIsZeroBusbwAsNcclTestsPrintsIt() {
        assertEquals(0.0, BusBandwidth.factor(Collective.AllReduce, 1), 0);
        assertEquals(0.0, BusBandwidth.busbw(Collective.AllReduce, 1, 1 << 20, 10), 0);
        assertEquals(0.0, BusBandwidth.busbw(Collective.AllGather, 1, 1 << 20, 10), 0);
        assertEquals(0.0, BusBandwidth.busbw(Collective.ReduceScatter, 1, 1 << 20, 10), 0);
        assertEquals(BusBandwidth.algbw(1 << 20, 10), BusBandwidth.busbw(Collective.Broadcast, 1, 1 << 20, 10), 0);
    }

    @Test
    void unknownRankCountIsNaN() {
        assertTrue(Double.isNaN(BusBandwidth.factor(Collective.AllReduce, 0)));
        assertTrue(Double.isNaN(BusBandwidth.busbw(Collective.AllReduce, 0, 1 << 20, 10)));
        assertTrue(Double.isNaN(BusBandwidth.busbw(Collective.Broadcast, -1, 1 << 20, 10)));
        assertTrue(Double.isNaN(BusBandwidth.busbw(Collective.AllReduce, 8, 1 << 20, Double.NaN)));
    }
}

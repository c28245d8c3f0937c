package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/**
 * The histogram layout the profiler fills (profiler.c histIndex, nccltj_bridge.h NCCLTJ_HIST_*):
 * bucket 0 below 2^8 ns, bucket 1 + 16k + j from 2^(8+k) x (1 + j/16), the last from 2^32 ns; and
 * the configuration codes (algorithm x 3 + protocol) the measured lines name.
 */
class MeasurementBucketsTest {
    @Test
    void bucketBoundsByHand() {
        assertEquals(0, Measurement.bucketLowNs(0));
        assertEquals(256, Measurement.bucketLowNs(1));
        assertEquals(272, Measurement.bucketLowNs(2));
        assertEquals(256 * 31 / 16.0, Measurement.bucketLowNs(16)); // the last sub-bucket of the first octave
        assertEquals(512, Measurement.bucketLowNs(17));
        assertEquals(1024 * (1 + 3 / 16.0), Measurement.bucketLowNs(1 + 2 * 16 + 3));
        assertEquals(Math.scalb(1.0, 32), Measurement.bucketLowNs(Measurement.HIST_BUCKETS - 1));
        assertEquals((496 + 512) / 2.0, Measurement.bucketMidNs(16));
    }

    @Test
    void configurationCodesAreAlgorithmTimesThreePlusProtocol() {
        assertEquals("TREE/LL", Measurement.config(0));
        assertEquals("TREE/LL128", Measurement.config(1));
        assertEquals("RING/LL", Measurement.config(3));
        assertEquals("RING/SIMPLE", Measurement.config(5));
        assertNull(Measurement.config(-1));
    }
}

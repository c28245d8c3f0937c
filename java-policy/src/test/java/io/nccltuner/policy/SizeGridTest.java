package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SizeGridTest {
    @Test
    void gridHasFourPointsPerPowerOfTwo() {
        long[] expected = {8, 10, 12, 14, 16, 20, 24, 28, 32};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], SizeGrid.lowerBound(8 + i));
        }
        assertTrue(SizeGrid.isGridPoint(24L << 20));
        assertTrue(SizeGrid.isGridPoint(28L << 20));
        assertFalse(SizeGrid.isGridPoint((24L << 20) + 1));
        assertFalse(SizeGrid.isGridPoint(1000));
        assertEquals(SizeGrid.BUCKETS - 1, SizeGrid.bucket(-1L), "SIZE_MAX is in the last bucket");
        assertEquals(0, SizeGrid.bucket(0));
    }

    /** A bucket ends where the next begins; the last has no end (-1, "inf"); a range's end bucket. */
    @Test
    void upperBoundAndEndBucket() {
        assertEquals(10, SizeGrid.upperBound(SizeGrid.bucket(8)));
        assertEquals(1, SizeGrid.upperBound(0));
        assertEquals(8, SizeGrid.upperBound(7));
        assertEquals(5L << 18, SizeGrid.upperBound(SizeGrid.bucket(1L << 20)), "[1 MiB, 1.25 MiB)");
        assertEquals(SizeGrid.lowerBound(SizeGrid.BUCKETS - 1), SizeGrid.upperBound(SizeGrid.BUCKETS - 2));
        assertEquals(-1L, SizeGrid.upperBound(SizeGrid.BUCKETS - 1), "the last bucket has no end");
        assertThrows(IllegalArgumentException.class, () -> SizeGrid.upperBound(SizeGrid.BUCKETS));
        assertThrows(IllegalArgumentException.class, () -> SizeGrid.upperBound(-1));
        assertEquals(SizeGrid.BUCKETS, SizeGrid.endBucket(-1L), "to_bytes inf covers every bucket to the last");
        assertEquals(SizeGrid.bucket(2L << 20), SizeGrid.endBucket(2L << 20));
        for (int b = 0; b < SizeGrid.BUCKETS - 1; b++) {
            assertEquals(b + 1, SizeGrid.endBucket(SizeGrid.upperBound(b)), "bucket " + b);
        }
    }

    /** [from, to) as unsigned sizes; to -1 is no end, so SIZE_MAX is in [x, inf) but not in [x, 2^63). */
    @Test
    void inRangeIsHalfOpenAndUnsigned() {
        assertTrue(SizeGrid.inRange(1L << 20, 1L << 20, 2L << 20));
        assertFalse(SizeGrid.inRange(2L << 20, 1L << 20, 2L << 20), "the end is exclusive");
        assertFalse(SizeGrid.inRange((1L << 20) - 1, 1L << 20, 2L << 20));
        assertTrue(SizeGrid.inRange(-1L, 1L << 20, -1L), "SIZE_MAX is below no end");
        assertFalse(SizeGrid.inRange(-1L, 0, 1L << 63), "unsigned: SIZE_MAX is above 2^63");
        assertTrue(SizeGrid.inRange(1L << 63, 0, -1L));
    }

    /** Bit arithmetic agrees with a plain search over the bounds, for random and edge sizes. */
    @Test
    void bucketMatchesBoundsSearch() {
        SplittableRandom rnd = new SplittableRandom(42);
        for (int i = 0; i < 200_000; i++) {
            long n = i < 1000 ? i : rnd.nextLong() >>> rnd.nextInt(64);
            int b = SizeGrid.bucket(n);
            int expect = 0;
            while (expect + 1 < SizeGrid.BUCKETS && Long.compareUnsigned(SizeGrid.lowerBound(expect + 1), n) <= 0) {
                expect++;
            }
            assertEquals(expect, b, "nBytes=" + Long.toUnsignedString(n));
        }
    }

    @Test
    void byteSizeRoundTrips() {
        assertEquals(4096, ByteSize.parse("4 KiB"));
        assertEquals(4096, ByteSize.parse("4kib"));
        assertEquals(1536L << 10, ByteSize.parse("1.5 MiB"));
        // nccl-tests' spelling (-e 64M) is binary too; SI "MB" stays refused (issue 21, item 8)
        assertEquals(64L << 20, ByteSize.parse("64M"));
        assertEquals(4096, ByteSize.parse("4k"));
        assertEquals(1L << 30, ByteSize.parse("1 G"));
        var si = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> ByteSize.parse("64MB"));
        assertEquals("unknown size unit 'MB' in '64MB'; SI units are ambiguous here, write MiB", si.getMessage());
        assertEquals("24 MiB", ByteSize.format(24L << 20));
        assertEquals("1.25 MiB", ByteSize.format(5L << 18));
        assertEquals("1000 B", ByteSize.format(1000));
        assertEquals("~125.06 MiB", ByteSize.readable(131136000));
        assertEquals("24 MiB", ByteSize.readable(24L << 20));
        assertEquals("1.5 KiB", ByteSize.readable(1536));
        for (int b = 1; b < SizeGrid.BUCKETS; b++) {
            long v = SizeGrid.lowerBound(b);
            if (v < 0) {
                break; // grid points at and above 2^63 are reachable only as open upper ends
            }
            assertEquals(v, ByteSize.parse(ByteSize.format(v)), "grid point " + v);
        }
    }

    /**
     * The grid's top: the last bucket, 251, starts at 7 x 2^61 bytes (unsigned) and reaches
     * SIZE_MAX; no bucket 252 exists (lowerBound refuses it and -1), and there is no grid point
     * above the last one (ceilGridPoint -1), while the floor of SIZE_MAX is that last point.
     */
    @Test
    void theGridEndsAtItsLastBucket() {
        assertEquals(252, SizeGrid.BUCKETS);
        assertEquals(SizeGrid.BUCKETS - 1, SizeGrid.bucket(-1L), "SIZE_MAX");
        assertEquals(7L << 61, SizeGrid.lowerBound(SizeGrid.BUCKETS - 1));
        assertThrows(IllegalArgumentException.class, () -> SizeGrid.lowerBound(SizeGrid.BUCKETS));
        assertThrows(IllegalArgumentException.class, () -> SizeGrid.lowerBound(-1));
        assertEquals(-1L, SizeGrid.ceilGridPoint(-2L), "above the last grid point");
        assertEquals(-1L, SizeGrid.ceilGridPoint((7L << 61) + 1));
        assertEquals(7L << 61, SizeGrid.ceilGridPoint(7L << 61));
        assertEquals(7L << 61, SizeGrid.floorGridPoint(-1L));
    }
}

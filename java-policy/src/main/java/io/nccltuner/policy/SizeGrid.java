package io.nccltuner.policy;

/**
 * The message-size grid on which policy rules are expressed and looked up.
 *
 * <p>Sizes are nBytes as NCCL passes them to {@code getCollInfo} (for AllGather and ReduceScatter
 * that is nRanks times the per-rank count NCCL 2.24+ prints in its selection lines). The grid has
 * one bucket per byte below 8 B and four buckets per power of two from 8 B up: the lower bounds
 * are {@code m << (e - 2)} for {@code e >= 3} and {@code m} in {4, 5, 6, 7}, i.e. 2^e, 1.25 x 2^e,
 * 1.5 x 2^e and 1.75 x 2^e. So 8, 10, 12, 14, 16, 20, 24, 28, 32 B ... 16, 20, 24, 28 MiB ... are
 * grid points and a range like [24 MiB, 32 MiB) is expressible. The bucket of a size is computed
 * with bit arithmetic only (a leading-zero count and a shift), which is what keeps the engine's
 * lookup O(1). {@link #BUCKETS} = 252 buckets cover every {@code size_t} value up to 2^64 - 1.
 */
public final class SizeGrid {
    /** Number of buckets: 8 single-byte buckets, then 4 per power of two from 2^3 to 2^63. */
    public static final int BUCKETS = 8 + 61 * 4;

    private SizeGrid() {}

    /**
     * Bucket of a message size.
     *
     * @param nBytes size in bytes, read as an unsigned 64-bit value (a C {@code size_t})
     * @return bucket index in [0, {@link #BUCKETS})
     */
    public static int bucket(long nBytes) {
        if (Long.compareUnsigned(nBytes, 8) < 0) {
            return (int) nBytes;
        }
        int e = 63 - Long.numberOfLeadingZeros(nBytes);
        return 8 + ((e - 3) << 2) + (int) ((nBytes >>> (e - 2)) & 3);
    }

    /**
     * Lower bound, in bytes, of a bucket.
     *
     * @param bucket index in [0, {@link #BUCKETS})
     * @return the smallest size in that bucket, as an unsigned 64-bit value
     * @throws IllegalArgumentException if the bucket is out of range
     */
    public static long lowerBound(int bucket) {
        if (bucket < 0 || bucket >= BUCKETS) {
            throw new IllegalArgumentException("bucket " + bucket + " outside [0, " + BUCKETS + ")");
        }
        if (bucket < 8) {
            return bucket;
        }
        int e = 3 + ((bucket - 8) >> 2);
        long m = 4 + ((bucket - 8) & 3);
        return m << (e - 2);
    }

    /**
     * Exclusive upper bound, in bytes, of a bucket: the next bucket's lower bound, or no end for the
     * last bucket (a policy's {@code to_bytes: inf}, the decision log's {@code inf}).
     *
     * @param bucket index in [0, {@link #BUCKETS})
     * @return {@code lowerBound(bucket + 1)}, or -1 (no end) for bucket {@code BUCKETS - 1}
     * @throws IllegalArgumentException if the bucket is out of range
     */
    public static long upperBound(int bucket) {
        if (bucket < 0 || bucket >= BUCKETS) {
            throw new IllegalArgumentException("bucket " + bucket + " outside [0, " + BUCKETS + ")");
        }
        return bucket + 1 < BUCKETS ? lowerBound(bucket + 1) : -1L;
    }

    /**
     * The first bucket past a range that ends at a size: a rule's {@code [fromBytes, toBytes)} covers
     * buckets {@code bucket(fromBytes)} up to, not including, {@code endBucket(toBytes)}.
     *
     * @param toBytes the range's exclusive end, a grid point, or -1 for no end
     * @return {@link #BUCKETS} for -1, else {@code bucket(toBytes)}
     */
    public static int endBucket(long toBytes) {
        return toBytes == -1L ? BUCKETS : bucket(toBytes);
    }

    /**
     * Whether a size lies in a range of sizes as policies and the decision log write them.
     *
     * @param nBytes size in bytes, unsigned
     * @param fromBytes the range's start, inclusive, unsigned
     * @param toBytes the range's end, exclusive, unsigned, or -1 for no end ({@code inf})
     * @return whether {@code fromBytes <= nBytes < toBytes}
     */
    public static boolean inRange(long nBytes, long fromBytes, long toBytes) {
        return Long.compareUnsigned(nBytes, fromBytes) >= 0
                && (toBytes == -1L || Long.compareUnsigned(nBytes, toBytes) < 0);
    }

    /**
     * Whether a size is a grid point (the lower bound of some bucket).
     *
     * @param nBytes size in bytes, unsigned
     * @return true if {@code lowerBound(bucket(nBytes)) == nBytes}
     */
    public static boolean isGridPoint(long nBytes) {
        return lowerBound(bucket(nBytes)) == nBytes;
    }

    /**
     * The next grid point at or above a size, for error messages ("did you mean ...").
     *
     * @param nBytes size in bytes, unsigned
     * @return the smallest grid point {@code >= nBytes}, or -1 (2^64 - 1 unsigned) if none
     */
    public static long ceilGridPoint(long nBytes) {
        int b = bucket(nBytes);
        if (lowerBound(b) == nBytes) {
            return nBytes;
        }
        return upperBound(b);
    }

    /**
     * The grid point at or below a size.
     *
     * @param nBytes size in bytes, unsigned
     * @return the largest grid point {@code <= nBytes}
     */
    public static long floorGridPoint(long nBytes) {
        return lowerBound(bucket(nBytes));
    }
}

package io.nccltuner.engine;

/**
 * Which arm a call takes in canary mode: a pure function of values every rank of a communicator
 * shares, so that every rank applies the policy's candidate to the same collectives (ranks of one
 * communicator that run different algorithms hang). The draw is {@code splitmix64(seed + index *
 * 0x9e3779b97f4a7c15)}, its top 24 bits compared with {@code round(fraction * 2^24)}, where index is
 * the call's index on its communicator (every getCollInfo call counts, from 1) and seed mixes the
 * first 64 bits of the compiled table's sha256 with NCCL's commId (tuner v5+; 0 before). A timing
 * never enters it (docs/canary.md).
 */
public final class Canary {
    /** The fraction of rule hits that get the policy's candidate when NCCL_TUNER_JAVA_CANARY is unset. */
    public static final double DEFAULT_FRACTION = 0.1;

    /** The threshold of fraction 1: every call takes the policy's arm (enforce mode uses it). */
    public static final int ALL = 1 << 24;

    private Canary() {}

    /**
     * @param fraction in [0, 1]
     * @return the threshold {@link #policyArm} compares against, in [0, {@link #ALL}]
     * @throws IllegalArgumentException outside [0, 1] or NaN
     */
    public static int threshold(double fraction) {
        if (!(fraction >= 0 && fraction <= 1)) {
            throw new IllegalArgumentException("canary fraction " + fraction + " is not in [0, 1]");
        }
        return (int) Math.round(fraction * ALL);
    }

    /**
     * @return the fraction a threshold stands for, as text, to 4 significant digits: the fraction as
     *     configured ("fraction 0.1" for 0.1, whose threshold stands for 0.10000002384185791)
     */
    static String fraction(int threshold) {
        return "fraction "
                + new java.math.BigDecimal((double) threshold / ALL)
                        .round(new java.math.MathContext(4))
                        .stripTrailingZeros()
                        .toPlainString();
    }

    /**
     * @param sha256 the compiled table's sha256, hex (at least 16 digits)
     * @param commId NCCL's commId, 0 when the tuner version has none
     * @return the communicator's seed
     */
    public static long seed(String sha256, long commId) {
        return seed(seedBits(sha256), commId);
    }

    /**
     * @param sha256 the compiled table's sha256, hex (at least 16 digits)
     * @return the table's part of every seed: its first 16 hex digits (the engine keeps it per table)
     */
    static long seedBits(String sha256) {
        return Long.parseUnsignedLong(sha256.substring(0, 16), 16);
    }

    /**
     * @param seedBits from {@link #seedBits}
     * @param commId NCCL's commId, 0 when the tuner version has none
     * @return the communicator's seed, as {@link #seed(String, long)}
     */
    static long seed(long seedBits, long commId) {
        return mix(seedBits ^ commId);
    }

    /**
     * @param seed from {@link #seed}
     * @param index the call's index on its communicator, from 1
     * @param threshold from {@link #threshold}
     * @return whether this call takes the policy's arm
     */
    public static boolean policyArm(long seed, long index, int threshold) {
        return (mix(seed + index * 0x9e3779b97f4a7c15L) >>> 40) < threshold;
    }

    /** splitmix64's finaliser (Steele, Lea and Flood 2014). */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}

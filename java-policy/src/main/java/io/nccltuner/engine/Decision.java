package io.nccltuner.engine;

/**
 * The decision code {@link Engine#getCollInfo} returns for one call, which the shim hands to the
 * profiler to join with the collective NCCL then executes (docs/canary.md). The Java side of
 * {@code NCCLTJ_DECISION_*} and {@code NCCLTJ_ARM_*} in plugin-shim/include/nccltj_bridge.h
 * ({@code AbiLayoutTest} checks that they agree): 0 when the engine did not look at the call;
 * else {@link #SEEN} with the size bucket in bits 0-7, and for a rule hit {@link #RULE} with the
 * arm (bits 25-26), NCCL's pick (bits 8-12), the policy's candidate (bits 13-17), both as
 * {@code algorithm * numProto + protocol} or {@link #NONE}, and the candidate's channels (bits 18-24).
 */
public final class Decision {
    /** The engine looked at the call (it has a table for the communicator). */
    public static final int SEEN = 1 << 30;
    /** A rule matched. */
    public static final int RULE = 1 << 29;
    /** No configuration (not computed, none selectable, none offered). */
    public static final int NONE = 0x1f;
    /** Arms: NCCL's pick kept, the policy's candidate written, no candidate offered. */
    public static final int ARM_NCCL = 0;

    public static final int ARM_POLICY = 1;
    public static final int ARM_NOT_OFFERED = 2;
    /** Arms only measurements have: the engine saw the call and no rule covers it; no decision found. */
    public static final int ARM_UNRULED = 3;

    public static final int ARM_UNJOINED = 4;

    static final int NCCL_SHIFT = 8;
    static final int CAND_SHIFT = 13;
    static final int CHANNELS_SHIFT = 18;
    static final int ARM_SHIFT = 25;

    private Decision() {}

    /** @return the code of a rule hit */
    static int rule(int bucket, int arm, int ncclPick, int candidate, int channels) {
        return SEEN
                | RULE
                | bucket
                | ncclPick << NCCL_SHIFT
                | candidate << CAND_SHIFT
                | channels << CHANNELS_SHIFT
                | arm << ARM_SHIFT;
    }

    /** @return the arm of a code (ARM_UNRULED for a call no rule covers) */
    public static int arm(int code) {
        return (code & RULE) == 0 ? ARM_UNRULED : code >>> ARM_SHIFT & 3;
    }

    /** @return the size bucket of a code that has {@link #SEEN} */
    public static int bucket(int code) {
        return code & 0xff;
    }

    /** @return NCCL's pick, or {@link #NONE} */
    public static int ncclPick(int code) {
        return code >>> NCCL_SHIFT & 0x1f;
    }

    /** @return the policy's candidate, or {@link #NONE} */
    public static int candidate(int code) {
        return code >>> CAND_SHIFT & 0x1f;
    }

    /** @return the candidate's channels, 0 = NCCL decides */
    public static int channels(int code) {
        return code >>> CHANNELS_SHIFT & 0x7f;
    }

    /** @return the spelling of an arm in the decision log ("policy", "nccl", ...) */
    public static String armName(int arm) {
        return switch (arm) {
            case ARM_NCCL -> "nccl";
            case ARM_POLICY -> "policy";
            case ARM_NOT_OFFERED -> "notOffered";
            case ARM_UNRULED -> "unruled";
            default -> "unjoined";
        };
    }
}

package io.nccltuner.policy;

/**
 * What the plugin does with a policy. {@code enforce}: edit the cost table and nChannels;
 * {@code shadow}: compute and log decisions, never write; {@code off}: load and validate only;
 * {@code canary}: enforce on a fraction of the calls a rule covers ({@code NCCL_TUNER_JAVA_CANARY},
 * default 0.1) and keep NCCL's pick on the rest, so that both arms are measured in the same job
 * (docs/canary.md). Set by the policy's {@code mode} field, overridden by {@code
 * NCCL_TUNER_JAVA_MODE}. The order is part of the compiled policy format (CANARY came last).
 */
public enum Mode {
    ENFORCE,
    SHADOW,
    OFF,
    CANARY;

    /** Computed once: inits and destroys name the mode in their lines. */
    private final String spelling = name().toLowerCase(java.util.Locale.ROOT);

    /** Case-insensitive lookup; null if unknown. */
    public static Mode parse(String s) {
        return EnumNames.lookup(values(), s);
    }

    /** @return the spelling used in policy files and logs ("enforce") */
    public String spelling() {
        return spelling;
    }
}

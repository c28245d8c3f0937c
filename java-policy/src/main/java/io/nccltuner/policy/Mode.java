package io.nccltuner.policy;

/**
 * What the plugin does with a policy. {@code enforce}: edit the cost table and nChannels;
 * {@code shadow}: compute and log decisions, never write; {@code off}: load and validate only.
 * Set by the policy's {@code mode} field, overridden by {@code NCCL_TUNER_JAVA_MODE}.
 */
public enum Mode {
  ENFORCE, SHADOW, OFF;

  /** Case-insensitive lookup; null if unknown. */
  public static Mode parse(String s) {
    return EnumNames.lookup(values(), s);
  }

  /** @return the spelling used in policy files and logs ("enforce") */
  public String spelling() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}

package io.nccltuner.shim;

import io.nccltuner.engine.CompiledPolicy;
import io.nccltuner.engine.DecisionLog;
import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The plugin's configuration, read once per process from the environment, and the engine built
 * from it.
 *
 * <ul>
 *   <li>{@code NCCL_TUNER_JAVA_POLICY}: path of the YAML policy.
 *   <li>{@code NCCL_TUNER_CONFIG_FILE}: NCCL example-tuner CSV, read when no YAML policy is set.
 *   <li>{@code NCCL_TUNER_JAVA_MODE}: enforce | shadow | off, overriding the policy's mode.
 *   <li>{@code NCCL_TUNER_JAVA_LOG}: decision log path (JSON lines; %h host, %p pid).
 *   <li>{@code NCCL_TUNER_JAVA_LOG_QUEUE}: decision log ring size in records (default 65536, clamped to [2, 262144]).
 *   <li>{@code NCCL_TUNER_JAVA_TEST_THROW}: test hook (init | getCollInfo | destroy).
 * </ul>
 *
 * A configuration error yields an engine that changes nothing plus one warning, which the first
 * init logs.
 *
 * @param engine the engine to serve NCCL with
 * @param warning a one-line warning to log once, or null
 * @param info a one-line notice to log once at INFO, or null
 */
record PluginConfig(Engine engine, String warning, String info) {
  static final int DEFAULT_QUEUE = 65536;

  /**
   * Largest decision-log ring, in records: 40 bytes each, so 10 MiB of the plugin's 64 MB heap;
   * larger values are clamped (a ring of millions of records would not fit the heap).
   */
  static final int MAX_QUEUE = 1 << 18;

  /**
   * Builds the configuration from an environment map (System.getenv() in the plugin). Never
   * throws: any failure, OutOfMemoryError included, yields an engine that changes nothing and one
   * warning.
   */
  static PluginConfig fromEnvironment(Map<String, String> env, TunerLog log) {
    try {
      return read(env, log);
    } catch (Throwable t) {
      return off(log, env.get("NCCL_TUNER_JAVA_TEST_THROW"), "engine configuration failed (" + t
          + "); the plugin changes nothing");
    }
  }

  private static PluginConfig read(Map<String, String> env, TunerLog log) {
    String throwIn = env.get("NCCL_TUNER_JAVA_TEST_THROW");
    String modeEnv = env.get("NCCL_TUNER_JAVA_MODE");
    Mode override = null;
    if (modeEnv != null && !modeEnv.isBlank()) {
      override = Mode.parse(modeEnv.trim());
      if (override == null) {
        return off(log, throwIn, "NCCL_TUNER_JAVA_MODE=" + modeEnv
            + " is not a mode (enforce, shadow or off); the plugin changes nothing");
      }
    }
    String yaml = env.get("NCCL_TUNER_JAVA_POLICY");
    String csv = env.get("NCCL_TUNER_CONFIG_FILE");
    Policy policy;
    List<String> approximations = new ArrayList<>();
    try {
      if (yaml != null && !yaml.isBlank()) {
        policy = CompiledPolicy.load(Path.of(yaml)); // the YAML, or its binary form when that matches it
      } else if (csv != null && !csv.isBlank()) {
        policy = NcclConfigFile.load(Path.of(csv), approximations);
      } else {
        return new PluginConfig(new Engine(null, Mode.OFF, log, null, throwIn), null,
            jvmNotice() + "; no policy set (NCCL_TUNER_JAVA_POLICY, NCCL_TUNER_CONFIG_FILE), changing nothing");
      }
    } catch (PolicyException e) {
      return off(log, throwIn, "policy refused, the plugin changes nothing: " + e.getMessage());
    }
    Mode mode = override != null ? override : policy.mode();
    DecisionLog decisions = null;
    String logPath = env.get("NCCL_TUNER_JAVA_LOG");
    if (logPath != null && !logPath.isBlank() && mode != Mode.OFF) {
      int queue = DEFAULT_QUEUE;
      try {
        queue = Integer.parseInt(env.getOrDefault("NCCL_TUNER_JAVA_LOG_QUEUE", "" + DEFAULT_QUEUE).trim());
      } catch (NumberFormatException ignored) {
        // keep the default; the variable is a tuning knob
      }
      try {
        decisions = new DecisionLog(DecisionLog.expand(logPath), Math.max(2, Math.min(queue, MAX_QUEUE)), log);
      } catch (java.io.IOException e) {
        return new PluginConfig(new Engine(policy, mode, log, null, throwIn),
            "cannot open decision log " + logPath + " (" + e + "); decisions are not logged", jvmNotice());
      }
    }
    String info = jvmNotice();
    if (yaml != null && !yaml.isBlank() && csv != null && !csv.isBlank()) {
      info += "; NCCL_TUNER_JAVA_POLICY is set, so NCCL_TUNER_CONFIG_FILE=" + csv + " is not read";
    }
    if (!approximations.isEmpty()) {
      info += "; NCCL_TUNER_CONFIG_FILE read with " + approximations.size() + " approximation(s), first: "
          + approximations.getFirst();
    }
    return new PluginConfig(new Engine(policy, mode, log, decisions, throwIn), null, info);
  }

  /**
   * Which JVM serves the plugin: one the shim created (it sets nccltj.library) or the host's; for
   * one the shim created, whether it started from an AOT cache ({@link AotCacheStatus}).
   */
  static String jvmNotice() {
    String lib = System.getProperty("nccltj.library");
    return "engine on Java " + Runtime.version() + " from " + System.getProperty("java.home")
        + (lib != null ? " (JVM created by " + lib + "; " + AotCacheStatus.describe() + ")"
            : " (joined the process's JVM)");
  }

  private static PluginConfig off(TunerLog log, String throwIn, String warning) {
    return new PluginConfig(new Engine(null, Mode.OFF, log, null, throwIn), warning, null);
  }
}

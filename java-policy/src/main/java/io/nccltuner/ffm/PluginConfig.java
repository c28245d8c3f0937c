package io.nccltuner.ffm;

import io.nccltuner.engine.CallRecorder;
import io.nccltuner.engine.CompiledPolicy;
import io.nccltuner.engine.DecisionLog;
import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.ForcePolicy;
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
 *   <li>{@code NCCL_TUNER_JAVA_MODE}: enforce | shadow | off | canary, overriding the policy's mode.
 *   <li>{@code NCCL_TUNER_JAVA_CANARY}: canary mode's fraction of rule hits that get the policy's
 *       candidate, in [0, 1] (default 0.1; docs/canary.md); not a number in [0, 1]: one WARN and
 *       the plugin changes nothing.
 *   <li>{@code NCCL_TUNER_JAVA_FORCE}: ALGO/PROTO[/channels]: force one candidate wherever NCCL
 *       offers it ({@link io.nccltuner.policy.ForcePolicy}); replaces any policy.
 *   <li>{@code NCCL_TUNER_JAVA_RECORD}: record every tuner call as a trace CSV (%h host, %p pid), in
 *       any mode ({@link CallRecorder}).
 *   <li>{@code NCCL_TUNER_JAVA_LOG}: decision log path (JSON lines; %h host, %p pid).
 *   <li>{@code NCCL_TUNER_JAVA_LOG_CALLS}: 1 = one record per decision as well (default: only the
 *       per-communicator aggregates, written at destroy and exit; see engine.ShadowAggregate).
 *   <li>{@code NCCL_TUNER_JAVA_LOG_QUEUE}: decision log ring size in records (default 65536, clamped to [2, 262144]).
 * </ul>
 *
 * A configuration error yields an engine that changes nothing plus one warning, which the first
 * init logs.
 *
 * <p>Tests inject faults from their side: {@code -Dnccltj.engine=CLASS} (through
 * NCCL_TUNER_JAVA_OPTS, with the class on NCCL_TUNER_JAVA_CLASSPATH) names a subclass of
 * {@link Engine} with the constructor {@code (Policy, Mode, TunerLog, DecisionLog)}, built here in
 * place of the engine; nothing else in the runtime knows about tests.
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
        return fromEnvironment(env, log, Path.of(""));
    }

    /**
     * As {@link #fromEnvironment(Map, TunerLog)}, with the directory where {@code nccl_tuner.conf}
     * is looked for when neither variable names a policy (the working directory in the plugin).
     */
    static PluginConfig fromEnvironment(Map<String, String> env, TunerLog log, Path workDir) {
        String record = CallRecorder.configure(env, log); // record mode works whatever the policy says
        PluginConfig c;
        try {
            c = read(env, log, workDir);
        } catch (Throwable t) {
            c = off(log, "engine configuration failed (" + t + "); the plugin changes nothing");
        }
        if (record == null) {
            return c;
        }
        return record.startsWith("cannot")
                ? new PluginConfig(c.engine(), c.warning() == null ? record : c.warning() + "; " + record, c.info())
                : new PluginConfig(c.engine(), c.warning(), c.info() == null ? record : c.info() + "; " + record);
    }

    private static PluginConfig read(Map<String, String> env, TunerLog log, Path workDir) {
        String modeEnv = env.get("NCCL_TUNER_JAVA_MODE");
        Mode override = null;
        if (modeEnv != null && !modeEnv.isBlank()) {
            override = Mode.parse(modeEnv.trim());
            if (override == null) {
                return off(
                        log,
                        "NCCL_TUNER_JAVA_MODE=" + modeEnv
                                + " is not a mode (enforce, shadow, off or canary); the plugin changes nothing");
            }
        }
        String yaml = env.get("NCCL_TUNER_JAVA_POLICY");
        String csv = env.get("NCCL_TUNER_CONFIG_FILE");
        String defaulted = null;
        if ((yaml == null || yaml.isBlank()) && (csv == null || csv.isBlank())) {
            // NCCL's example tuner reads nccl_tuner.conf from the working directory when
            // NCCL_TUNER_CONFIG_FILE is unset (plugins/tuner/example/plugin.c, 2.27 .. 2.30.7)
            Path dflt = workDir.resolve("nccl_tuner.conf");
            if (java.nio.file.Files.isRegularFile(dflt)) {
                csv = dflt.toString();
                defaulted = csv;
            }
        }
        String force = env.get("NCCL_TUNER_JAVA_FORCE");
        Policy policy;
        List<String> approximations = new ArrayList<>();
        try {
            if (force != null && !force.isBlank()) {
                try {
                    policy = ForcePolicy.of(ForcePolicy.parse(force));
                } catch (IllegalArgumentException e) {
                    return off(log, "NCCL_TUNER_JAVA_FORCE: " + e.getMessage() + "; the plugin changes nothing");
                }
            } else if (yaml != null && !yaml.isBlank()) {
                try (HostPath p = HostPath.of("NCCL_TUNER_JAVA_POLICY", yaml)) {
                    policy = CompiledPolicy.load(p.path); // the YAML, or its binary form when that matches it
                }
            } else if (csv != null && !csv.isBlank()) {
                try (HostPath p =
                        defaulted != null ? HostPath.of("", csv) : HostPath.of("NCCL_TUNER_CONFIG_FILE", csv)) {
                    policy = NcclConfigFile.load(p.path, approximations);
                }
            } else {
                return new PluginConfig(
                        newEngine(null, Mode.OFF, log, null),
                        null,
                        jvmNotice()
                                + "; no policy set (NCCL_TUNER_JAVA_POLICY, NCCL_TUNER_CONFIG_FILE), changing nothing");
            }
        } catch (PolicyException e) {
            return off(log, "policy refused, the plugin changes nothing: " + e.getMessage());
        }
        Mode mode = override != null ? override : policy.mode();
        double canary = io.nccltuner.engine.Canary.DEFAULT_FRACTION;
        String canaryEnv = env.get("NCCL_TUNER_JAVA_CANARY");
        if (canaryEnv != null && !canaryEnv.isBlank()) {
            try {
                canary = Double.parseDouble(canaryEnv.trim());
                io.nccltuner.engine.Canary.threshold(canary);
            } catch (IllegalArgumentException e) { // NumberFormatException too
                return off(
                        log,
                        "NCCL_TUNER_JAVA_CANARY=" + canaryEnv
                                + " is not a fraction in [0, 1] (e.g. 0.1); the plugin changes nothing");
            }
        }
        DecisionLog decisions = null;
        String logPath = env.get("NCCL_TUNER_JAVA_LOG");
        if (logPath != null && !logPath.isBlank() && mode != Mode.OFF) {
            int queue = DEFAULT_QUEUE;
            try {
                queue = Integer.parseInt(env.getOrDefault("NCCL_TUNER_JAVA_LOG_QUEUE", "" + DEFAULT_QUEUE)
                        .trim());
            } catch (NumberFormatException ignored) {
                // keep the default; the variable is a tuning knob
            }
            try {
                boolean calls = "1"
                        .equals(env.getOrDefault("NCCL_TUNER_JAVA_LOG_CALLS", "")
                                .trim());
                decisions = new DecisionLog(
                        DecisionLog.expand(logPath), calls ? Math.max(2, Math.min(queue, MAX_QUEUE)) : 2, log, calls);
            } catch (java.io.IOException e) {
                Engine unlogged = newEngine(policy, mode, log, null);
                unlogged.canaryFraction(canary);
                return new PluginConfig(
                        unlogged,
                        "cannot open decision log " + logPath + " (" + e + "); decisions are not logged",
                        jvmNotice());
            }
        }
        String info = jvmNotice();
        if (mode == Mode.CANARY) {
            String prof = env.get("NCCL_PROFILER_PLUGIN");
            String lib = System.getProperty("nccltj.library");
            boolean ours = prof != null
                    && !prof.isBlank()
                    && (lib == null
                            || Path.of(prof.trim())
                                    .getFileName()
                                    .equals(Path.of(lib).getFileName()));
            info += "; canary mode, fraction " + canary
                    + (ours
                            ? ""
                            : ": NCCL_PROFILER_PLUGIN does not name this library ("
                                    + (prof == null || prof.isBlank() ? "unset" : prof)
                                    + "), so both arms run but nothing measures them (docs/canary.md)");
        }
        if (force != null && !force.isBlank()) {
            info += "; force mode " + policy.profiles().getFirst().name().substring("force:".length())
                    + ": every call where NCCL offers it uses it, calls where its entry is -1 are left to NCCL (not forced = rule hits - applied)";
            if ((yaml != null && !yaml.isBlank()) || (csv != null && !csv.isBlank())) {
                info += "; NCCL_TUNER_JAVA_FORCE is set, so the policy is not read";
            }
        } else if (defaulted != null) {
            info += "; read " + defaulted + " (NCCL_TUNER_CONFIG_FILE unset: the working directory's nccl_tuner.conf, "
                    + "as NCCL's example tuner does)";
        }
        if ((force == null || force.isBlank()) && yaml != null && !yaml.isBlank() && csv != null && !csv.isBlank()) {
            info += "; NCCL_TUNER_JAVA_POLICY is set, so NCCL_TUNER_CONFIG_FILE=" + csv + " is not read";
        }
        if (!approximations.isEmpty()) {
            info += "; NCCL_TUNER_CONFIG_FILE read with " + approximations.size() + " approximation(s), first: "
                    + approximations.getFirst();
        }
        Engine engine = newEngine(policy, mode, log, decisions);
        engine.canaryFraction(canary);
        return new PluginConfig(engine, null, info);
    }

    /**
     * Which JVM serves the plugin: one the shim created (it sets nccltj.library) or the host's; for
     * one the shim created, whether it started from an AOT cache ({@link AotCacheStatus}).
     */
    static String jvmNotice() {
        String lib = System.getProperty("nccltj.library");
        return "engine on Java " + Runtime.version() + " from " + System.getProperty("java.home")
                + (lib != null
                        ? " (JVM created by " + lib + "; " + AotCacheStatus.describe() + ")"
                        : " (joined the process's JVM)");
    }

    private static PluginConfig off(TunerLog log, String warning) {
        return new PluginConfig(newEngine(null, Mode.OFF, log, null), warning, null);
    }

    /** The engine, or the test-side subclass that {@code -Dnccltj.engine} names (class comment). */
    static Engine newEngine(Policy policy, Mode mode, TunerLog log, DecisionLog decisions) {
        String cls = System.getProperty("nccltj.engine");
        if (cls == null || cls.isEmpty()) {
            return new Engine(policy, mode, log, decisions);
        }
        try {
            return Class.forName(cls)
                    .asSubclass(Engine.class)
                    .getConstructor(Policy.class, Mode.class, TunerLog.class, DecisionLog.class)
                    .newInstance(policy, mode, log, decisions);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException("-Dnccltj.engine=" + cls + " is not an Engine subclass: " + e, e);
        }
    }
}

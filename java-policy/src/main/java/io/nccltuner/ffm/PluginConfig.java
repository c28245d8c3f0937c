package io.nccltuner.ffm;

import io.nccltuner.engine.CallRecorder;
import io.nccltuner.engine.CompiledPolicy;
import io.nccltuner.engine.DecisionLog;
import io.nccltuner.engine.Engine;
import io.nccltuner.engine.TunerLog;
import io.nccltuner.policy.ForcePolicy;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.NcclExampleConfig;
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
        if (set(modeEnv)) {
            override = Mode.parse(modeEnv.trim());
            if (override == null) {
                return off(
                        log,
                        "NCCL_TUNER_JAVA_MODE=" + modeEnv
                                + " is not a mode (enforce, shadow, off or canary); the plugin changes nothing");
            }
        }
        Sources src = Sources.of(env, workDir);
        Policy policy;
        List<String> approximations = new ArrayList<>();
        List<String> notes = new ArrayList<>(1);
        try {
            if (set(src.force())) {
                try {
                    policy = ForcePolicy.of(ForcePolicy.parse(src.force()));
                } catch (IllegalArgumentException e) {
                    return off(log, "NCCL_TUNER_JAVA_FORCE: " + e.getMessage() + "; the plugin changes nothing");
                }
            } else {
                policy = loadFile(src, approximations, notes);
            }
        } catch (PolicyException e) {
            return off(log, "policy refused, the plugin changes nothing: " + e.getMessage());
        }
        if (policy == null) {
            return new PluginConfig(
                    newEngine(null, Mode.OFF, log, null),
                    null,
                    jvmNotice() + "; no policy set (NCCL_TUNER_JAVA_POLICY, NCCL_TUNER_CONFIG_FILE), changing nothing");
        }
        Mode mode = override != null ? override : policy.mode();
        double canary = io.nccltuner.engine.Canary.DEFAULT_FRACTION;
        String canaryEnv = env.get("NCCL_TUNER_JAVA_CANARY");
        if (set(canaryEnv)) {
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
        if (set(logPath) && mode != Mode.OFF) {
            try {
                decisions = decisionLog(env, logPath, log);
            } catch (java.io.IOException e) {
                Engine unlogged = newEngine(policy, mode, log, null);
                unlogged.canaryFraction(canary);
                return new PluginConfig(
                        unlogged,
                        "cannot open decision log " + logPath + " (" + e + "); decisions are not logged",
                        jvmNotice());
            }
        }
        String info = info(env, src, mode, canary, policy, approximations);
        for (String note : notes) {
            info += "; " + note;
        }
        Engine engine = newEngine(policy, mode, log, decisions);
        engine.canaryFraction(canary);
        return new PluginConfig(engine, null, info);
    }

    /**
     * The init notice's words on which form of a YAML policy was read: {@code policy FILE read
     * from its compiled form}, or {@code policy FILE parsed from its YAML (no FILE.compiled beside
     * it; NCCL_TUNER_JAVA_POLICY=FILE bin/nccl-tuner-aot writes one ...)}: a parsed YAML starts slower
     * (docs/dev/benchmarks.md; nccl-tuner compile, import and calibrate write the form beside their output).
     *
     * @param yaml NCCL_TUNER_JAVA_POLICY as set
     * @param loaded what {@link CompiledPolicy#loadDescribed} read
     */
    static String formNote(String yaml, CompiledPolicy.Loaded loaded) {
        return loaded.compiled()
                ? "policy " + yaml.trim() + " read from its compiled form"
                : "policy " + yaml.trim() + " parsed from its YAML (" + loaded.why()
                        + "; NCCL_TUNER_JAVA_POLICY=FILE bin/nccl-tuner-aot writes one: a faster start)";
    }

    /** @return whether a variable is set to something other than blanks */
    private static boolean set(String value) {
        return value != null && !value.isBlank();
    }

    /**
     * The variables that name a policy, as set.
     *
     * @param force NCCL_TUNER_JAVA_FORCE
     * @param yaml NCCL_TUNER_JAVA_POLICY
     * @param csv NCCL_TUNER_CONFIG_FILE, or the working directory's nccl_tuner.conf
     * @param defaulted that nccl_tuner.conf when it is read for want of both variables, else null
     */
    private record Sources(String force, String yaml, String csv, String defaulted) {
        static Sources of(Map<String, String> env, Path workDir) {
            String yaml = env.get("NCCL_TUNER_JAVA_POLICY");
            String csv = env.get("NCCL_TUNER_CONFIG_FILE");
            String defaulted = null;
            if (!set(yaml) && !set(csv)) {
                // NCCL's example tuner reads nccl_tuner.conf from the working directory when
                // NCCL_TUNER_CONFIG_FILE is unset (plugins/tuner/example/plugin.c, 2.27 .. 2.30.7)
                Path dflt = workDir.resolve("nccl_tuner.conf");
                if (java.nio.file.Files.isRegularFile(dflt)) {
                    csv = dflt.toString();
                    defaulted = csv;
                }
            }
            return new Sources(env.get("NCCL_TUNER_JAVA_FORCE"), yaml, csv, defaulted);
        }
    }

    /**
     * The YAML policy (or its binary form when that matches it), else the example-tuner CSV.
     *
     * @param approximations receives the CSV's approximations
     * @param notes receives, for a YAML policy, which of its forms was read ({@link #formNote})
     * @return the policy, or null when neither is set
     * @throws PolicyException when the file is refused
     */
    private static Policy loadFile(Sources src, List<String> approximations, List<String> notes)
            throws PolicyException {
        if (set(src.yaml())) {
            try (HostPath p = HostPath.of("NCCL_TUNER_JAVA_POLICY", src.yaml())) {
                if (Boolean.TRUE.equals(NcclExampleConfig.csvByName(p.path))) {
                    // the tools take either file as a policy (try --policy nccl_tuner.conf), so the
                    // plugin does too: a CSV refused as malformed YAML left a job untuned (fifth walk)
                    notes.add("NCCL_TUNER_JAVA_POLICY=" + src.yaml().trim()
                            + " read as NCCL's example-tuner CSV (its name)");
                    return NcclConfigFile.load(p.path, approximations);
                }
                CompiledPolicy.Loaded loaded = CompiledPolicy.loadDescribed(p.path);
                notes.add(formNote(src.yaml(), loaded));
                return loaded.policy();
            }
        }
        if (set(src.csv())) {
            try (HostPath p = src.defaulted() != null
                    ? HostPath.of("", src.csv())
                    : HostPath.of("NCCL_TUNER_CONFIG_FILE", src.csv())) {
                if (src.defaulted() == null && Boolean.FALSE.equals(NcclExampleConfig.csvByName(p.path))) {
                    notes.add("NCCL_TUNER_CONFIG_FILE=" + src.csv().trim()
                            + " read as a YAML policy (its name; NCCL_TUNER_JAVA_POLICY is its variable)");
                    return CompiledPolicy.loadDescribed(p.path).policy();
                }
                return NcclConfigFile.load(p.path, approximations);
            }
        }
        return null;
    }

    /**
     * The decision log NCCL_TUNER_JAVA_LOG names: aggregates only, or every decision as well with
     * NCCL_TUNER_JAVA_LOG_CALLS=1, through a ring of NCCL_TUNER_JAVA_LOG_QUEUE records (clamped to
     * [2, {@link #MAX_QUEUE}]; not a number: {@link #DEFAULT_QUEUE}).
     */
    private static DecisionLog decisionLog(Map<String, String> env, String logPath, TunerLog log)
            throws java.io.IOException {
        int queue = DEFAULT_QUEUE;
        try {
            queue = Integer.parseInt(env.getOrDefault("NCCL_TUNER_JAVA_LOG_QUEUE", "" + DEFAULT_QUEUE)
                    .trim());
        } catch (NumberFormatException ignored) {
            // keep the default; the variable is a tuning knob
        }
        boolean calls =
                "1".equals(env.getOrDefault("NCCL_TUNER_JAVA_LOG_CALLS", "").trim());
        return new DecisionLog(
                DecisionLog.expand(logPath), calls ? Math.max(2, Math.min(queue, MAX_QUEUE)) : 2, log, calls);
    }

    /** The one-line notice of a configuration that works: the JVM, and what the mode and variables mean here. */
    private static String info(
            Map<String, String> env,
            Sources src,
            Mode mode,
            double canary,
            Policy policy,
            List<String> approximations) {
        String info = jvmNotice();
        if (mode == Mode.CANARY) {
            String prof = env.get("NCCL_PROFILER_PLUGIN");
            String lib = System.getProperty("nccltj.library");
            boolean ours = set(prof)
                    && (lib == null
                            || Path.of(prof.trim())
                                    .getFileName()
                                    .equals(Path.of(lib).getFileName()));
            info += "; canary mode, fraction " + canary
                    + (ours
                            ? ""
                            : ": NCCL_PROFILER_PLUGIN does not name this library ("
                                    + (set(prof) ? prof : "unset")
                                    + "), so both arms run but nothing measures them (docs/canary.md)");
        }
        if (set(src.force())) {
            info += "; force mode " + policy.profiles().getFirst().name().substring("force:".length())
                    + ": every call where NCCL offers it uses it, calls where its entry is -1 are left to NCCL (not forced = rule hits - applied)";
            if (set(src.yaml()) || set(src.csv())) {
                info += "; NCCL_TUNER_JAVA_FORCE is set, so the policy is not read";
            }
        } else if (src.defaulted() != null) {
            info += "; read " + src.defaulted()
                    + " (NCCL_TUNER_CONFIG_FILE unset: the working directory's nccl_tuner.conf, "
                    + "as NCCL's example tuner does)";
        }
        if (!set(src.force()) && set(src.yaml()) && set(src.csv())) {
            info += "; NCCL_TUNER_JAVA_POLICY is set, so NCCL_TUNER_CONFIG_FILE=" + src.csv() + " is not read";
        }
        // a regBuff 0/1 line converts exactly (regBuff rules): a note, not an approximation
        List<String> approx =
                approximations.stream().filter(a -> !a.contains(": regBuff ")).toList();
        int regBuffNotes = approximations.size() - approx.size();
        if (!approx.isEmpty()) {
            info += "; NCCL_TUNER_CONFIG_FILE read with " + approx.size() + " approximation(s), first: "
                    + approx.getFirst();
        }
        if (regBuffNotes > 0) {
            info += "; " + regBuffNotes + " regBuff 0/1 line(s) kept as regBuff rules (they match from NCCL 2.24, "
                    + "tuner v4)";
        }
        return info;
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

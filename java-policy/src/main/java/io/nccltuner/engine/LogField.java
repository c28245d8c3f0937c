package io.nccltuner.engine;

/**
 * The decision log's JSON field names and line types ({@code NCCL_TUNER_JAVA_LOG}): the one home
 * of the names the engine writes ({@link DecisionLog}, {@link ShadowAggregate},
 * {@link Measurement}) and the tools read back ({@code nccl-tuner report}, compile's
 * {@code --workload}). docs/report.md and {@link DecisionLog} describe what each holds. The values are
 * compile-time constants: the writers' bytecode is as with the literals, and the class is never loaded.
 */
public final class LogField {
    private LogField() {}

    /** {@code "applied"} */
    public static final String APPLIED = "applied";
    /** {@code "arm"} */
    public static final String ARM = "arm";
    /** {@code "asDecided"} */
    public static final String AS_DECIDED = "asDecided";
    /** {@code "at"} */
    public static final String AT = "at";
    /** {@code "bucket"} */
    public static final String BUCKET = "bucket";
    /** {@code "calls"} */
    public static final String CALLS = "calls";
    /** {@code "channels"} */
    public static final String CHANNELS = "channels";
    /** {@code "collective"} */
    public static final String COLLECTIVE = "collective";
    /** {@code "collectives"} */
    public static final String COLLECTIVES = "collectives";
    /** {@code "comm"} */
    public static final String COMM = "comm";
    /** {@code "commScope"} */
    public static final String COMM_SCOPE = "commScope";
    /** {@code "count"} */
    public static final String COUNT = "count";
    /** {@code "decided"} */
    public static final String DECIDED = "decided";
    /** {@code "decidedChannels"} */
    public static final String DECIDED_CHANNELS = "decidedChannels";
    /** {@code "decisionsDropped"} */
    public static final String DECISIONS_DROPPED = "decisionsDropped";
    /** {@code "executed"} */
    public static final String EXECUTED = "executed";
    /** {@code "hist"} */
    public static final String HIST = "hist";
    /** {@code "host"} */
    public static final String HOST = "host";
    /** {@code "joined"} */
    public static final String JOINED = "joined";
    /** {@code "kernelChannels"} */
    public static final String KERNEL_CHANNELS = "kernelChannels";
    /** {@code "maxUs"} */
    public static final String MAX_US = "maxUs";
    /** {@code "meanUs"} */
    public static final String MEAN_US = "meanUs";
    /** {@code "minUs"} */
    public static final String MIN_US = "minUs";
    /** {@code "mode"} */
    public static final String MODE = "mode";
    /** {@code "nBytes"} */
    public static final String N_BYTES = "nBytes";
    /** {@code "ncclPick"} */
    public static final String NCCL_PICK = "ncclPick";
    /** {@code "nNodes"} */
    public static final String N_NODES = "nNodes";
    /** {@code "nRanks"} */
    public static final String N_RANKS = "nRanks";
    /** {@code "numPipeOps"} */
    public static final String NUM_PIPE_OPS = "numPipeOps";
    /** {@code "p50Us"} */
    public static final String P50_US = "p50Us";
    /** {@code "p95Us"} */
    public static final String P95_US = "p95Us";
    /** {@code "p99Us"} */
    public static final String P99_US = "p99Us";
    /** {@code "pid"} */
    public static final String PID = "pid";
    /** {@code "policy"} */
    public static final String POLICY = "policy";
    /** {@code "policyPick"} */
    public static final String POLICY_PICK = "policyPick";
    /** {@code "profile"} */
    public static final String PROFILE = "profile";
    /** {@code "profilerVersion"} */
    public static final String PROFILER_VERSION = "profilerVersion";
    /** {@code "rank"} */
    public static final String RANK = "rank";
    /** {@code "ruleHits"} */
    public static final String RULE_HITS = "ruleHits";
    /** {@code "sha256"} */
    public static final String SHA256 = "sha256";
    /** {@code "sumSqUs"} */
    public static final String SUM_SQ_US = "sumSqUs";
    /** {@code "sumUs"} */
    public static final String SUM_US = "sumUs";
    /** {@code "timed"} */
    public static final String TIMED = "timed";
    /** {@code "toBytes"} */
    public static final String TO_BYTES = "toBytes";
    /** {@code "type"} */
    public static final String TYPE = "type";
    /** {@code "unaggregated"} */
    public static final String UNAGGREGATED = "unaggregated";
    /** {@code "unjoined"} */
    public static final String UNJOINED = "unjoined";
    /** {@code "untimed"} */
    public static final String UNTIMED = "untimed";

    /** The {@code "type"} of a {@code aggregate} line. */
    public static final String TYPE_AGGREGATE = "aggregate";
    /** The {@code "type"} of a {@code comm} line. */
    public static final String TYPE_COMM = "comm";
    /** The {@code "type"} of a {@code measured} line. */
    public static final String TYPE_MEASURED = "measured";
    /** The {@code "type"} of a {@code profiled} line. */
    public static final String TYPE_PROFILED = "profiled";
}

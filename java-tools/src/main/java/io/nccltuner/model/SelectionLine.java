package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The parser of NCCL's per-call selection line (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING, rank 0),
 * shared by the cost model's {@link NcclModelLog} and the compiler's reading of NCCL's own pick.
 *
 * <p>The message (the text after {@code NCCL INFO }) must match one {@link SelectionFormat} whole,
 * trailing blanks aside:
 *
 * <ul>
 *   <li>2.21 .. 2.22, src/enqueue.cc: {@code 1048576 Bytes -> Algo 1 proto 1 time 39.646954}
 *       (numeric ids of nccl_common.h, predicted time in microseconds);
 *   <li>2.23, src/enqueue.cc: {@code AllReduce: 1048576 Bytes -> Algo 1 proto 1 time 39.646954};
 *   <li>2.24+, src/enqueue.cc: {@code AllReduce: 1048576 Bytes -> Algo RING proto LL
 *       channel{Lo..Hi}={0..0}} (bytes {@code count * typeSize}: per rank for AllGather and
 *       ReduceScatter, see {@link LoggedSelection#perRankBytes()}).
 * </ul>
 */
public final class SelectionLine {
    /** What every selection line contains; a message without it is not one. */
    public static final String MARKER = " Bytes -> Algo ";

    private static final Pattern NAMES = Pattern.compile(
            "^(\\w+): (\\d+) Bytes -> Algo (\\S+) proto (\\S+) channel\\{Lo\\.\\.Hi\\}=\\{(-?\\d+)\\.\\.(-?\\d+)\\}\\s*$");
    private static final Pattern COLL_IDS =
            Pattern.compile("^(\\w+): (\\d+) Bytes -> Algo (-?\\d+) proto (-?\\d+) time (\\S+)\\s*$");
    private static final Pattern IDS =
            Pattern.compile("^(\\d+) Bytes -> Algo (-?\\d+) proto (-?\\d+) time (\\S+)\\s*$");

    /**
     * A well-formed selection line of a function the tuner is not asked about (e.g. {@code AlltoAll},
     * {@code SendRecv}).
     */
    public static final class OtherCollective extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        OtherCollective(String name) {
            super("'" + name + "' is not a collective the tuner sees");
        }
    }

    private SelectionLine() {}

    /**
     * Parses one INFO message.
     *
     * @param infoMessage the text after {@code NCCL INFO }
     * @param line the line number to record (1-based; any value where unknown)
     * @return the selection, or empty when the message is not a selection line (no {@link #MARKER})
     * @throws OtherCollective when the line names a collective the tuner does not see
     * @throws IllegalArgumentException when the line is in no known format, names an unknown
     *     algorithm or protocol, or its time is not finite; the message says which
     */
    public static Optional<LoggedSelection> parse(String infoMessage, int line) {
        if (!infoMessage.contains(MARKER)) {
            return Optional.empty();
        }
        Matcher m;
        if ((m = NAMES.matcher(infoMessage)).matches()) {
            return Optional.of(new LoggedSelection(
                    line,
                    SelectionFormat.COLLECTIVE_NAMES_WITH_CHANNELS,
                    collective(m.group(1)),
                    Long.parseLong(m.group(2)),
                    algoProto(m.group(3), m.group(4)),
                    Double.NaN,
                    Integer.parseInt(m.group(5)),
                    Integer.parseInt(m.group(6))));
        }
        if ((m = COLL_IDS.matcher(infoMessage)).matches()) {
            return Optional.of(new LoggedSelection(
                    line,
                    SelectionFormat.COLLECTIVE_IDS_WITH_TIME,
                    collective(m.group(1)),
                    Long.parseLong(m.group(2)),
                    algoProtoIds(m.group(3), m.group(4)),
                    time(m.group(5)),
                    -1,
                    -1));
        }
        if ((m = IDS.matcher(infoMessage)).matches()) {
            return Optional.of(new LoggedSelection(
                    line,
                    SelectionFormat.IDS_WITH_TIME,
                    null,
                    Long.parseLong(m.group(1)),
                    algoProtoIds(m.group(2), m.group(3)),
                    time(m.group(4)),
                    -1,
                    -1));
        }
        throw new IllegalArgumentException("selection line in no known format");
    }

    private static Collective collective(String name) {
        Collective c = Collective.parse(name);
        if (c == null) {
            throw new OtherCollective(name);
        }
        return c;
    }

    private static AlgoProto algoProto(String algo, String proto) {
        Algorithm a = Algorithm.parse(algo);
        Protocol p = Protocol.parse(proto);
        if (a == null || p == null) {
            throw new IllegalArgumentException("unknown algorithm/protocol '" + algo + "/" + proto + "'");
        }
        return new AlgoProto(a, p);
    }

    private static AlgoProto algoProtoIds(String algo, String proto) {
        int a = Integer.parseInt(algo);
        int p = Integer.parseInt(proto);
        if (a < 0 || a >= Algorithm.values().length || p < 0 || p >= Protocol.values().length) {
            throw new IllegalArgumentException("algorithm id " + a + " / protocol id " + p + " out of range");
        }
        return new AlgoProto(Algorithm.ofId(a), Protocol.ofId(p));
    }

    private static double time(String s) {
        double t = Double.parseDouble(s);
        if (!Double.isFinite(t)) {
            throw new IllegalArgumentException("time '" + s + "' is not finite");
        }
        return t;
    }
}

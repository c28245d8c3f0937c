package io.nccltuner.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * nRanks and nNodes of a log that lacks NCCL's {@code comm ... nRanks N nNodes M} INIT line, told
 * by the other lines the same file holds, for {@code explain}:
 *
 * <ul>
 *   <li>nccl-tests' device lines {@code #  Rank 3 Group 0 Pid 1234 on host0 device 3 [...]}: ranks
 *       when their indices run 0..n-1 without a gap; nodes as NCCL counts them from those ranks
 *       ({@link NodeCount}): their host names, or the {@code NCCL_HOSTID} NCCL's ENV lines (or a
 *       command line, one value per rank) give their processes (which still overcounts on
 *       multi-node NVLink systems, MNNVL, where NCCL counts one node per NVLink domain);
 *   <li>NCCL's {@code ncclCommInitRank... comm 0x.. rank R nranks N} lines (src/init.cc, 2.19+)
 *       and the {@code [nranks=N]} of its per-call INFO lines (src/enqueue.cc);
 *   <li>the ring lines {@code Channel 00/24 :    0   1} (src/graph/connect.cc): one entry per rank.
 * </ul>
 *
 * <p>Values disagreeing between sources give no inference (0).
 *
 * @param nRanks ranks, or 0 when nothing tells
 * @param nRanksFrom what told it ("the 2 '# Rank' lines (line 6)"), or null
 * @param nNodes nodes, or 0 when nothing tells
 * @param nNodesFrom what told it, or null
 */
public record LogShape(int nRanks, String nRanksFrom, int nNodes, String nNodesFrom) {
    private static final Pattern PREFIX = Pattern.compile("^(?:\\s*\\d+: ?|\\[\\d+,\\d+\\]<std\\w+>: ?)");
    private static final Pattern INIT_RANK =
            Pattern.compile("ncclCommInitRank\\w* comm 0x[0-9a-fA-F]+ rank \\d+ nranks (\\d+)");
    private static final Pattern CALL_NRANKS = Pattern.compile("\\[nranks=(\\d+)\\]");
    private static final Pattern RING = Pattern.compile("NCCL INFO Channel \\d+/\\d+ :((?:\\s+\\d+)+)\\s*$");

    /**
     * @param lines the log's lines
     * @return what the lines tell
     */
    public static LogShape of(List<String> lines) {
        List<Integer> idx = new ArrayList<>();
        List<NodeCount.Rank> rankLines = new ArrayList<>();
        int firstRankLine = 0;
        Map<String, String> hostIds = new LinkedHashMap<>();
        int hostIdLine = 0;
        Set<String> echoed = new LinkedHashSet<>();
        int echoLine = 0;
        Set<Integer> init = new TreeSet<>();
        int initLine = 0;
        Set<Integer> calls = new TreeSet<>();
        int callLine = 0;
        Set<Integer> rings = new TreeSet<>();
        int ringLine = 0;
        for (int i = 0; i < lines.size(); i++) {
            String l = PREFIX.matcher(lines.get(i)).replaceFirst("");
            NodeCount.Rank r = NodeCount.Rank.parse(l.strip());
            if (r != null) {
                idx.add(r.index());
                rankLines.add(r);
                firstRankLine = firstRankLine == 0 ? i + 1 : firstRankLine;
                continue;
            }
            Matcher h = NodeCount.HOSTID_INFO.matcher(l);
            if (h.find() && NodeCount.process(l) != null) {
                hostIds.putIfAbsent(NodeCount.process(l), h.group(1));
                hostIdLine = hostIdLine == 0 ? i + 1 : hostIdLine;
            }
            Set<String> ids = NodeCount.echoed(l);
            if (!ids.isEmpty()) {
                echoed.addAll(ids);
                echoLine = echoLine == 0 ? i + 1 : echoLine;
            }
            Matcher m = INIT_RANK.matcher(l);
            if (m.find()) {
                init.add(Integer.parseInt(m.group(1)));
                initLine = initLine == 0 ? i + 1 : initLine;
            }
            m = CALL_NRANKS.matcher(l);
            if (m.find()) {
                calls.add(Integer.parseInt(m.group(1)));
                callLine = callLine == 0 ? i + 1 : callLine;
            }
            m = RING.matcher(l);
            if (m.find()) {
                rings.add(m.group(1).strip().split("\\s+").length);
                ringLine = ringLine == 0 ? i + 1 : ringLine;
            }
        }
        Set<Integer> ranks = new TreeSet<>();
        List<String> from = new ArrayList<>();
        boolean complete = !idx.isEmpty()
                && idx.stream().distinct().count()
                        == idx.stream().mapToInt(Integer::intValue).max().getAsInt() + 1;
        if (complete) {
            ranks.add(idx.size());
            from.add("the " + idx.size() + " '# Rank' lines (line " + firstRankLine + ")");
        }
        if (init.size() == 1) {
            ranks.addAll(init);
            from.add("ncclCommInitRank's 'nranks' (line " + initLine + ")");
        }
        if (calls.size() == 1) {
            ranks.addAll(calls);
            from.add("the calls' '[nranks=" + calls.iterator().next() + "]' (line " + callLine + ")");
        }
        if (rings.size() == 1) {
            ranks.addAll(rings);
            from.add("the ring lines (line " + ringLine + ")");
        }
        int nRanks = ranks.size() == 1 ? ranks.iterator().next() : 0;
        NodeCount.Count count = complete ? NodeCount.of(rankLines, hostIds, echoed) : null;
        int nNodes = count != null && (nRanks == 0 || nRanks == idx.size()) ? count.nNodes() : 0;
        String nodesFrom = nNodes == 0
                ? null
                : switch (count.source()) {
                    case HOSTID_LINES ->
                        "the NCCL_HOSTID of each rank's process (NCCL's 'NCCL_HOSTID set by "
                                + "environment' lines, line " + hostIdLine + ")";
                    case HOSTID_ECHO ->
                        "the " + nNodes + " NCCL_HOSTID values set from line " + echoLine + ", one per rank";
                    default ->
                        "the host names of the '# Rank' lines (line " + firstRankLine + ")"
                                + (nNodes > 1
                                        ? "; hosts of one NVLink domain (MNNVL) are one node to NCCL: give --nnodes if so"
                                        : "");
                };
        return new LogShape(nRanks, nRanks == 0 ? null : String.join(", ", from), nNodes, nodesFrom);
    }
}

package io.nccltuner.model;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How many nodes NCCL counts in a communicator, told from what a log shows of its ranks' hosts
 * when it lacks NCCL's own {@code comm ... nRanks N nNodes M} INIT line.
 *
 * <p>NCCL's host of a rank is its host hash: the hash of {@code NCCL_HOSTID} where the rank's
 * process sets it, else of its host name and boot id (src/misc/utils.cc {@code getHostHash}, NCCL
 * 2.28.9); the ranks of one host hash make one node's topology (src/graph/topo.cc) and
 * initTransportsRank counts those nodes (src/init.cc). A process that sets NCCL_HOSTID says so in
 * an ENV INFO line, {@code NCCL_HOSTID set by environment to X}. So two ranks on one machine with a
 * distinct NCCL_HOSTID each are two nodes to NCCL (the shared H200 testbed, tests/gpu/README.md),
 * and ranks on two machines with one NCCL_HOSTID are one node, whatever the host names of
 * nccl-tests' device lines say. (Multi-node NVLink, MNNVL, makes NCCL count one node per NVLink
 * domain as well; only NCCL's INIT line says so.)
 */
public final class NodeCount {
    /** NCCL's ENV INFO line of a process that sets NCCL_HOSTID (src/misc/utils.cc). */
    public static final Pattern HOSTID_INFO = Pattern.compile("NCCL INFO NCCL_HOSTID set by environment to (\\S+)");

    /** {@code NCCL_HOSTID=VALUE} on a command line, in a {@code set -x} echo or an environment dump. */
    public static final Pattern HOSTID_ECHO = Pattern.compile("\\bNCCL_HOSTID=(\"[^\"]*\"|'[^']*'|[^\\s)\"';]*)");

    /** The host and pid of an NCCL line's prefix {@code host:pid:tid [dev] NCCL INFO} (src/debug.cc). */
    private static final Pattern PROCESS = Pattern.compile("([^\\s:\\[]+):(\\d+):\\d+ \\[-?\\d+\\] NCCL INFO");

    private static final Pattern RANK_LINE =
            Pattern.compile("^#\\s+Rank\\s+(\\d+)\\s+(?:Group\\s+\\d+\\s+)?Pid\\s+(\\d+)\\s+on\\s+(\\S+)\\s+device");

    private NodeCount() {}

    /**
     * One rank as nccl-tests' device line shows it: {@code #  Rank  1 Group  0 Pid 3039009 on host0
     * device  0 [0000:02:00] NVIDIA GeForce RTX 5090} (nccl-tests src/common.cu; no {@code Group}
     * field in the 2019 layout).
     *
     * @param index the rank
     * @param pid the rank's process
     * @param host its host name (up to the first '.', as NCCL's own line prefix has it)
     * @param device the GPU name after the bus id, or "" where the line has none
     */
    public record Rank(int index, long pid, String host, String device) {
        /**
         * @param line a line with its launcher prefix removed, stripped
         * @return the rank it shows, or null when it is not a device line
         */
        public static Rank parse(String line) {
            Matcher m = RANK_LINE.matcher(line);
            if (!m.find()) {
                return null;
            }
            int d = line.indexOf(']', m.end());
            return new Rank(
                    Integer.parseInt(m.group(1)),
                    Long.parseLong(m.group(2)),
                    m.group(3),
                    d > 0 ? line.substring(d + 1).strip() : "");
        }

        /** @return {@code host:pid}, as {@link #process(String)} names the process of an NCCL line */
        public String process() {
            return host + ":" + pid;
        }
    }

    /**
     * @param ncclLine an NCCL INFO line
     * @return {@code host:pid} of the process that printed it, or null when it has no such prefix
     */
    public static String process(String ncclLine) {
        Matcher m = PROCESS.matcher(ncclLine);
        return m.find() ? m.group(1) + ":" + m.group(2) : null;
    }

    /**
     * @param line a line of a command or an environment echo
     * @return the NCCL_HOSTID values it sets (quotes removed; an empty value unsets), in order
     */
    public static Set<String> echoed(String line) {
        Set<String> out = new LinkedHashSet<>();
        Matcher m = HOSTID_ECHO.matcher(line);
        while (m.find()) {
            String v = m.group(1);
            if (v.length() >= 2 && (v.startsWith("\"") || v.startsWith("'"))) {
                v = v.substring(1, v.length() - 1);
            }
            if (!v.isBlank()) {
                out.add(v.strip());
            }
        }
        return out;
    }

    /** What told a count. */
    public enum Source {
        /** the distinct host names of the device lines (no NCCL_HOSTID in the log) */
        HOST_NAMES,
        /** the NCCL_HOSTID each rank's process names in NCCL's ENV INFO line */
        HOSTID_LINES,
        /** as many distinct NCCL_HOSTID values on a command line as there are ranks: one node each */
        HOSTID_ECHO,
        /** nothing: the log shows NCCL_HOSTID, but not which rank has which */
        UNKNOWN
    }

    /**
     * A count.
     *
     * @param nNodes the nodes NCCL counts, or 0 when the log does not tell ({@link Source#UNKNOWN})
     * @param source what told it
     * @param hosts the distinct host names of the device lines, in rank order
     * @param hostIds the distinct NCCL_HOSTID values the log shows (INFO lines, else echoes), in order
     */
    public record Count(int nNodes, Source source, List<String> hosts, List<String> hostIds) {
        public Count {
            hosts = List.copyOf(hosts);
            hostIds = List.copyOf(hostIds);
        }
    }

    /**
     * Counts the nodes as NCCL does: a rank's node is its process's NCCL_HOSTID where NCCL's INFO
     * line names one, else its host name. Where the INFO lines name the NCCL_HOSTID of only some of
     * the ranks' processes, or (without INFO lines) commands set NCCL_HOSTID other than once per rank
     * or once on one host, which rank has which is not in the log: {@link Source#UNKNOWN}.
     *
     * @param ranks one device line per rank, all of the communicator's
     * @param hostIdByProcess NCCL_HOSTID by {@code host:pid}, from NCCL's INFO lines
     * @param echoed the distinct NCCL_HOSTID values commands or echoes before the run set
     * @return the count
     */
    public static Count of(List<Rank> ranks, Map<String, String> hostIdByProcess, Set<String> echoed) {
        List<String> hosts = ranks.stream().map(Rank::host).distinct().toList();
        if (!hostIdByProcess.isEmpty()) {
            List<String> ids = ranks.stream()
                    .map(r -> hostIdByProcess.get(r.process()))
                    .distinct()
                    .toList();
            List<String> named = ids.stream().filter(java.util.Objects::nonNull).toList();
            if (ids.contains(null)) {
                return new Count(0, Source.UNKNOWN, hosts, named);
            }
            return new Count(named.size(), Source.HOSTID_LINES, hosts, named);
        }
        if (echoed.isEmpty()) {
            return new Count(hosts.size(), Source.HOST_NAMES, hosts, List.of());
        }
        List<String> ids = List.copyOf(echoed);
        if (ids.size() > 1 && ids.size() == ranks.size()) {
            return new Count(ids.size(), Source.HOSTID_ECHO, hosts, ids);
        }
        if (ids.size() == 1 && hosts.size() == 1) {
            return new Count(1, Source.HOST_NAMES, hosts, ids); // one host, one host id: one node either way
        }
        return new Count(0, Source.UNKNOWN, hosts, ids);
    }
}

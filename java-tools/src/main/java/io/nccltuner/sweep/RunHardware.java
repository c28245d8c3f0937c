package io.nccltuner.sweep;

import io.nccltuner.policy.Signature;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The hardware a sweep's runs print: NCCL version, GPU model, nRanks and nNodes, read from
 * nccl-tests output (not the plugin's per-communicator {@link Signature}, which the engine learns at
 * init).
 *
 * <ul>
 *   <li>NCCL version: NCCL's {@code NCCL INFO NCCL version 2.28.9+cuda13.0} line
 *       (src/init.cc, printed with NCCL_DEBUG=VERSION or INFO), else nccl-tests 2.17+'s header
 *       {@code # nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809}, the library
 *       code decoded by {@link Signature#versionString} (NCCL_VERSION_CODE, nccl.h).
 *   <li>GPU model: the text after the PCI bus id of the first {@code #  Rank 0 ... device 0
 *       [0x..] MODEL} line.
 *   <li>nRanks, nNodes: NCCL's {@code comm 0x.. rank 0 nRanks N nNodes M} INFO line (2.12+),
 *       else the number of device lines and of distinct host names in them.
 * </ul>
 *
 * @param ncclVersion e.g. "2.28.9+cuda13.0", or null when the output does not say
 * @param gpu e.g. "NVIDIA H100 80GB HBM3", or null
 * @param nRanks ranks, 0 when unknown
 * @param nNodes nodes, 0 when unknown
 */
public record RunHardware(String ncclVersion, String gpu, int nRanks, int nNodes) {
    private static final Pattern VERSION = Pattern.compile("NCCL INFO NCCL version (\\S+)");
    private static final Pattern TESTS_VERSION = Pattern.compile("^# nccl-tests version \\S+.*nccl-library=(\\d+)");
    private static final Pattern RANK = Pattern.compile(
            "^#\\s+Rank\\s+(\\d+)\\s+(?:Group\\s+\\d+\\s+)?Pid\\s+\\d+\\s+on\\s+(\\S+)\\s+device\\s+\\d+\\s+\\[[^\\]]*\\]\\s+(.*?)\\s*$");
    private static final Pattern COMM =
            Pattern.compile("NCCL INFO comm 0x[0-9a-fA-F]+ rank \\d+ nRanks (\\d+) nNodes (\\d+)");

    /**
     * Reads a run's output.
     *
     * @param lines the output's lines
     * @return what the output says; fields it does not say are null or 0
     */
    public static RunHardware read(List<String> lines) {
        String version = null;
        String codeVersion = null;
        String gpu = null;
        int ranks = 0;
        Set<String> hosts = new LinkedHashSet<>();
        int commRanks = 0;
        int commNodes = 0;
        for (String l : lines) {
            Matcher m;
            if (version == null && (m = VERSION.matcher(l)).find()) {
                version = m.group(1);
            } else if (codeVersion == null && (m = TESTS_VERSION.matcher(l)).find()) {
                codeVersion = Signature.versionString(Integer.parseInt(m.group(1)));
            } else if ((m = RANK.matcher(l)).find()) {
                ranks++;
                hosts.add(m.group(2));
                if (gpu == null) {
                    gpu = m.group(3);
                }
            } else if (commRanks == 0 && (m = COMM.matcher(l)).find()) {
                commRanks = Integer.parseInt(m.group(1));
                commNodes = Integer.parseInt(m.group(2));
            }
        }
        return new RunHardware(
                version != null ? version : codeVersion,
                gpu,
                commRanks > 0 ? commRanks : ranks,
                commRanks > 0 ? commNodes : hosts.size());
    }
}

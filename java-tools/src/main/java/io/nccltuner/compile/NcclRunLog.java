package io.nccltuner.compile;

import io.nccltuner.model.AlgoProto;
import io.nccltuner.model.SelectionLine;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.InputException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The NCCL INFO lines the compiler reads: environment settings, the communicator shape and the
 * TUNING selection lines that tell what NCCL ran.
 *
 * <p>Formats, from NCCL's sources:
 *
 * <ul>
 *   <li>{@code NCCL_PROTO set by environment to LL} (src/graph/tuning.cc, string parameters) and
 *       {@code NCCL_MAX_NCHANNELS set by environment to 4.} (src/misc/param.cc, integer
 *       parameters, with a trailing dot).
 *   <li>{@code comm 0x... rank 0 nRanks 2 nNodes 2 localRanks 1 ...} (src/init.cc, 2.12+).
 *   <li>Selection lines, rank 0 only (src/enqueue.cc; 2.21 .. 2.22 numeric ids with time, 2.23 the
 *       same after the collective name, 2.24+ names with the channel range): parsed by the cost
 *       model's {@link SelectionLine}, so both read NCCL's pick alike.
 * </ul>
 */
public final class NcclRunLog {
    static final Pattern ENV = Pattern.compile("NCCL INFO (NCCL_[A-Z0-9_]+) set by environment to (.*?)\\.?\\s*$");
    static final Pattern COMM =
            Pattern.compile("NCCL INFO comm 0x[0-9a-fA-F]+ rank (\\d+) nRanks (\\d+) nNodes (\\d+)");
    private static final String INFO = "NCCL INFO ";

    private NcclRunLog() {}

    /**
     * A selection line as {@link SelectionLine} parsed it, before the communicator's nRanks is
     * applied.
     *
     * @param where {@code file:line}
     * @param line the parsed line
     */
    record RawSelection(String where, io.nccltuner.model.LoggedSelection line) {

        /** @return the collective the line names, or null where it names none (2.22 and older) */
        Collective collective() {
            return line.collective();
        }

        /**
         * @param nRanks ranks of the communicator (0 when unknown)
         * @param nNodes nodes of the communicator (0 when unknown)
         * @return the selection with bytes as the tuner sees them, or null when AllGather or
         *     ReduceScatter bytes are per rank and nRanks is unknown
         */
        RunSelection resolve(int nRanks, int nNodes) {
            return resolve(nRanks, nNodes, null);
        }

        /**
         * @param nRanks ranks of the communicator (0 when unknown)
         * @param nNodes nodes of the communicator (0 when unknown)
         * @param hardware the machine the log names, or null
         * @return the selection as {@link #resolve(int, int)}, on that machine
         */
        RunSelection resolve(int nRanks, int nNodes, Measurement.Hardware hardware) {
            if (line.perRankBytes() && nRanks <= 0) {
                return null;
            }
            AlgoProto pick = line.pick();
            return new RunSelection(
                    where,
                    line.collective(),
                    nRanks,
                    nNodes,
                    line.nBytes(nRanks),
                    pick.algorithm(),
                    pick.protocol(),
                    hardware);
        }
    }

    /**
     * Parses a selection line with {@link SelectionLine}; the message is the text after the line's
     * last {@code NCCL INFO }.
     *
     * @param where {@code file:line}
     * @param line the log line
     * @return the selection, or null when the line is not one or is one of a function the tuner is
     *     not asked about (SendRecv, AlltoAll, ...)
     * @throws InputException when the line is a selection line in no known format or naming an
     *     unknown algorithm or protocol
     */
    static RawSelection selection(String where, String line) throws InputException {
        int at = line.lastIndexOf(INFO);
        if (at < 0) {
            return null;
        }
        try {
            return SelectionLine.parse(line.substring(at + INFO.length()), 0)
                    .map(s -> new RawSelection(where, s))
                    .orElse(null);
        } catch (SelectionLine.OtherCollective e) {
            return null;
        } catch (IllegalArgumentException e) {
            String why = e.getMessage();
            throw new InputException(where, why.startsWith("selection line") ? why : "selection line: " + why);
        }
    }

    /**
     * Reads the selection lines of a standalone NCCL log ({@code NCCL_DEBUG=INFO
     * NCCL_DEBUG_SUBSYS=INIT,TUNING}), for telling which configuration NCCL's own pick was when
     * the measurements do not say (the sweep CSV's "auto" rows). The communicator shape comes from
     * the log's {@code comm ... nRanks N nNodes M} line.
     *
     * @param file the log
     * @param into receives the selections, and a warning for lines that cannot be used
     * @throws IOException if the file cannot be read
     * @throws InputException on a malformed selection line
     */
    public static void readSelections(Path file, MeasurementSet into) throws IOException, InputException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        int nRanks = 0;
        int nNodes = 0;
        List<RawSelection> raw = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher c = COMM.matcher(line);
            if (c.find()) {
                int r = Integer.parseInt(c.group(2));
                int n = Integer.parseInt(c.group(3));
                if (nRanks != 0 && (r != nRanks || n != nNodes)) {
                    throw new InputException(
                            InputException.at(file, i + 1),
                            "the log describes communicators of " + nRanks + " and " + r
                                    + " ranks; pass one log per communicator shape");
                }
                nRanks = r;
                nNodes = n;
                continue;
            }
            RawSelection s = selection(InputException.at(file, i + 1), line);
            if (s != null) {
                raw.add(s);
            }
        }
        int unusable = 0;
        Measurement.Hardware hw = machine(lines);
        for (RawSelection s : raw) {
            RunSelection sel = s.resolve(nRanks, nNodes, hw);
            if (sel == null) {
                unusable++;
            } else {
                into.add(sel);
            }
        }
        if (unusable > 0) {
            into.warn(
                    file.toString(),
                    unusable + " AllGather/ReduceScatter selection lines print bytes per "
                            + "rank and the log has no 'comm ... nRanks' line; they were not used");
        }
        if (raw.isEmpty()) {
            into.warn(
                    file.toString(),
                    "no selection lines ('Bytes -> Algo'); run with NCCL_DEBUG=INFO "
                            + "NCCL_DEBUG_SUBSYS=INIT,TUNING");
        }
        readNotOffered(file, lines, into);
    }

    private static final Pattern VERSION = Pattern.compile("NCCL INFO NCCL version (\\d+\\.\\d+\\.\\d+)");

    /**
     * The machine a log names: the GPU of its first nccl-tests {@code #  Rank 0 ... device 0 [..]
     * NVIDIA H200} line and the release of its first {@code NCCL version 2.28.9+cuda13.0} INFO line
     * (src/init.cc), as {@link NcclTestsLog} names a run's machine.
     *
     * @param lines the log's lines
     * @return the machine, or null when the log names neither
     */
    public static Measurement.Hardware machine(List<String> lines) {
        String gpu = null;
        String version = null;
        for (String line : lines) {
            String l = io.nccltuner.model.LauncherPrefix.strip(line).strip();
            if (gpu == null) {
                io.nccltuner.model.NodeCount.Rank r = io.nccltuner.model.NodeCount.Rank.parse(l);
                if (r != null && !r.device().isBlank()) {
                    gpu = r.device();
                }
            }
            if (version == null) {
                Matcher m = VERSION.matcher(l);
                if (m.find()) {
                    version = m.group(1);
                }
            }
        }
        return Measurement.Hardware.of(gpu, version);
    }

    /**
     * Reads what the log's latency/bandwidth tables do not offer ({@link
     * io.nccltuner.model.CostTable#offered}: bandwidth 0.0), per communicator whose nRanks and
     * nNodes the log gives ({@link io.nccltuner.model.NcclModelLog}, the reader {@code explain}
     * uses). A log whose run set {@code NCCL_ALGO} or {@code NCCL_PROTO} (its ENV lines) prints the
     * forced table, not the one an unforced run offers: it is not used for this, with a warning.
     *
     * @param file the log, for {@code file:line}
     * @param lines its lines
     * @param into receives one {@link MeasurementSet.NotOffered} per communicator and collective
     */
    public static void readNotOffered(Path file, List<String> lines, MeasurementSet into) {
        readNotOffered(file, lines, io.nccltuner.model.NcclModelLog.parse(file.toString(), lines), into);
    }

    /**
     * As {@link #readNotOffered(Path, List, MeasurementSet)}, for a caller that parsed the log
     * already.
     *
     * @param file the log, for {@code file:line}
     * @param lines its lines
     * @param log those lines parsed ({@link io.nccltuner.model.NcclModelLog#parse})
     * @param into receives one {@link MeasurementSet.NotOffered} per communicator and collective
     */
    public static void readNotOffered(
            Path file, List<String> lines, io.nccltuner.model.NcclModelLog log, MeasurementSet into) {
        if (log.communicators().isEmpty()) {
            return;
        }
        for (String line : lines) {
            Matcher m = ENV.matcher(line);
            if (m.find() && (m.group(1).equals("NCCL_ALGO") || m.group(1).equals("NCCL_PROTO"))) {
                into.warn(
                        file.toString(),
                        m.group(1) + " set by environment to " + m.group(2) + ": its cost table shows the forcing, "
                                + "not what NCCL offers an unforced run; not used to tell which candidates NCCL offers");
                return;
            }
        }
        for (io.nccltuner.model.Communicator c : log.communicators()) {
            if (c.nRanks() < 2 || c.nNodes() < 1) {
                continue;
            }
            notOffered(file, c, c.nRanks(), c.nNodes()).forEach(into::add);
        }
    }

    /**
     * What one communicator's latency/bandwidth table does not offer ({@link
     * io.nccltuner.model.CostTable#offered}: bandwidth 0.0), per collective the table prints, at the
     * shape given (the log's own, or one inferred from its other lines by {@code show} and {@code
     * validate}).
     *
     * @param file the log, for {@code file:line}
     * @param c the communicator, with its table
     * @param nRanks its ranks (2 or more)
     * @param nNodes its nodes (1 or more)
     * @return one entry per collective the table prints, in {@link Collective} order
     */
    public static List<MeasurementSet.NotOffered> notOffered(
            Path file, io.nccltuner.model.Communicator c, int nRanks, int nNodes) {
        List<MeasurementSet.NotOffered> got = new java.util.ArrayList<>();
        for (Collective coll : Collective.values()) {
            java.util.Set<AlgoProto> not = new java.util.LinkedHashSet<>();
            boolean printed = false;
            for (io.nccltuner.policy.Algorithm a : io.nccltuner.policy.Algorithm.values()) {
                for (io.nccltuner.policy.Protocol p : io.nccltuner.policy.Protocol.values()) {
                    AlgoProto ap = new AlgoProto(a, p);
                    printed |= c.table().has(coll, ap);
                    if (!c.table().offered(coll, ap)) {
                        not.add(ap);
                    }
                }
            }
            if (printed) {
                got.add(new MeasurementSet.NotOffered(
                        InputException.at(file, c.tableLine()), nRanks, nNodes, coll, not));
            }
        }
        return got;
    }
}

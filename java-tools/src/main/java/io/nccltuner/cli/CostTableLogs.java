package io.nccltuner.cli;

import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclRunLog;
import io.nccltuner.compile.Repeats;
import io.nccltuner.model.Communicator;
import io.nccltuner.model.LogShape;
import io.nccltuner.model.NcclModelLog;
import io.nccltuner.policy.InputException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The cost tables of {@code show} and {@code validate}'s {@code --nccl-log}, read as {@code
 * explain --log} reads a log ({@link NcclModelLog}, the same reader): a communicator's table with
 * its nRanks and nNodes from NCCL's INIT lines, as compile reads them ({@link
 * NcclRunLog#readNotOffered}), or, where the log has no such line (a log of nccl-tests with NCCL's
 * INFO lines, TUNING only), inferred as explain infers them ({@link LogShape}: the '# Rank' lines,
 * their hosts or NCCL_HOSTID, ncclCommInitRank's nranks, the calls' [nranks=N], the ring lines).
 * Each inference is said in a line; a log explain would refuse is refused with what it lacks.
 */
final class CostTableLogs {
    private CostTableLogs() {}

    /**
     * Reads the logs.
     *
     * @param logs the --nccl-log files, in order
     * @param out receives one line per table whose shape was inferred ({@code --nccl-log LOG: table 1
     *     (host h, pid 7) has no 'comm ... nRanks N nNodes M' line: nRanks 2 inferred from ..., nNodes
     *     1 inferred from ... (as explain infers them)})
     * @param err receives the logs' warnings, each {@code COMMAND: warning: ...}
     * @param command the command's name for those lines ({@code nccl-tuner show})
     * @return what each table does not offer, per communicator and collective, in log order
     * @throws InputException for an unreadable log, one with no table, or one whose tables' shape
     *     neither its INIT lines nor anything else in it tells
     * @throws IOException if reading fails
     */
    static List<MeasurementSet.NotOffered> read(List<Path> logs, PrintWriter out, PrintWriter err, String command)
            throws InputException, IOException {
        List<MeasurementSet.NotOffered> all = new ArrayList<>();
        List<String> warnings = new ArrayList<>(); // each log's, printed folded (Repeats.perFile)
        try {
            readEach(logs, out, all, warnings);
        } finally {
            Repeats.perFile(warnings).forEach(w -> err.println(command + ": warning: " + w));
        }
        return all;
    }

    /** {@link #read}'s loop: each log's tables into {@code all}, its warnings into {@code warnings}. */
    private static void readEach(
            List<Path> logs, PrintWriter out, List<MeasurementSet.NotOffered> all, List<String> warnings)
            throws InputException, IOException {
        for (Path log : logs) {
            InputFiles.requireReadable(log);
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            NcclModelLog parsed = NcclModelLog.parse(log.toString(), lines);
            MeasurementSet one = new MeasurementSet();
            NcclRunLog.readNotOffered(
                    log, lines, parsed, one); // the tables whose INIT lines give the shape; a forced run
            warnings.addAll(one.warnings());
            all.addAll(one.notOffered());
            if (parsed.communicators().isEmpty()) {
                throw new InputException(
                        log.toString(),
                        "no latency/bandwidth table (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING; only"
                                + " rank 0 of a communicator prints it)");
            }
            if (!one.warnings().isEmpty()) {
                continue; // NCCL_ALGO/NCCL_PROTO forced: its tables show the forcing (the warning says so)
            }
            LogShape hints = null;
            for (Communicator c : parsed.communicators()) {
                if (c.nRanks() >= 2 && c.nNodes() >= 1) {
                    continue; // read above
                }
                hints = hints == null ? LogShape.of(lines) : hints;
                all.addAll(inferred(log, c, hints, out));
            }
        }
    }

    /** A table without its shape in the log: its not-offered entries at the shape the log's other lines tell. */
    private static List<MeasurementSet.NotOffered> inferred(Path log, Communicator c, LogShape hints, PrintWriter out)
            throws InputException {
        int r = c.nRanks() > 0 ? c.nRanks() : hints.nRanks();
        int n = c.nNodes() > 0
                ? c.nNodes()
                : hints.nNodes() > 0 && (hints.nRanks() == 0 || hints.nRanks() == r) ? hints.nNodes() : 0;
        if (r < 2 || n < 1) {
            throw new InputException(
                    io.nccltuner.policy.InputException.at(log, c.tableLine()),
                    c.label() + ": the log gives no "
                            + (r < 2 && n < 1 ? "nRanks or nNodes" : r < 2 ? "nRanks" : "nNodes")
                            + " for this table: no 'comm ... nRanks N nNodes M' line (NCCL_DEBUG_SUBSYS=INIT; nNodes"
                            + " from NCCL 2.20), and nothing else in it tells (nccl-tests' '# Rank' lines with their"
                            + " hosts or NCCL_HOSTID, ncclCommInitRank's nranks, the calls' [nranks=N]); log the run"
                            + " with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING");
        }
        List<String> told = new ArrayList<>();
        if (c.nRanks() <= 0) {
            told.add("nRanks " + r + " inferred from " + hints.nRanksFrom());
        }
        if (c.nNodes() <= 0) {
            // explain's --nnodes advice for MNNVL hosts: show and validate have no such option for a log
            told.add("nNodes " + n + " inferred from " + hints.nNodesFrom().replaceFirst(": give --nnodes if so$", ""));
        }
        out.println("--nccl-log " + log + ": " + c.label() + " has no 'comm ... nRanks N nNodes M' line: "
                + String.join(", ", told) + " (as explain infers them)");
        return NcclRunLog.notOffered(log, c, r, n); // as the INIT-line tables, at the inferred shape
    }
}

package io.nccltuner.cli;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.MeasurementCsv;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclRunLog;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.policy.InputException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Input files of the commands: messages for files that cannot be read, naming the file ("x.log: no
 * such file"), and reading measurement files (sweep CSV or nccl-tests output) and folders of them,
 * the one place every command's {@code --measurements} goes through.
 */
final class InputFiles {
    private InputFiles() {}

    /**
     * Why a path cannot be read as an input file.
     *
     * @param p the path given
     * @return "no such file", "is a directory, not a file", "cannot be read (permission denied)",
     *     "not a regular file", or null when it is a readable regular file
     */
    static String problem(Path p) {
        if (Files.isDirectory(p)) {
            return "is a directory, not a file";
        }
        if (!Files.exists(p)) {
            return "no such file";
        }
        if (!Files.isReadable(p)) {
            return "cannot be read (permission denied)";
        }
        if (!Files.isRegularFile(p)) {
            return "not a regular file";
        }
        return null;
    }

    /**
     * An I/O exception as one line naming the file.
     *
     * @param e the exception
     * @param fallback the file to name when the exception does not
     * @return e.g. "x.log: no such file", "out/p.yaml: cannot write: Read-only file system"
     */
    static String describe(IOException e, Path fallback) {
        if (e instanceof FileSystemException f) {
            String file = f.getFile() != null ? f.getFile() : String.valueOf(fallback);
            if (f instanceof NoSuchFileException) {
                return file + ": no such file" + (f.getOtherFile() != null ? " (" + f.getOtherFile() + ")" : "");
            }
            if (f instanceof AccessDeniedException) {
                return file + ": permission denied";
            }
            return file + ": "
                    + (f.getReason() != null ? f.getReason() : f.getClass().getSimpleName());
        }
        String m = e.getMessage();
        return (fallback == null ? "" : fallback + ": ")
                + (m == null ? e.getClass().getSimpleName() : m);
    }

    /**
     * Refuses a path that cannot be read as an input file.
     *
     * @param p the path given
     * @throws InputException {@code <p>: <}{@link #problem}{@code >}
     */
    static void requireReadable(Path p) throws InputException {
        String why = problem(p);
        if (why != null) {
            throw new InputException(p.toString(), why);
        }
    }

    /**
     * Reads one measurement file into a set: a sweep or optimize_config.py CSV (detected by its
     * header) or nccl-tests output.
     *
     * @param f the file (checked with {@link #requireReadable} first)
     * @param o how to read nccl-tests output
     * @param data where the measurements go
     * @throws InputException for an unreadable file or a line the parser refuses (file:line)
     * @throws IOException if reading fails
     */
    static void readMeasurements(Path f, NcclTestsLog.Options o, MeasurementSet data)
            throws IOException, InputException {
        requireReadable(f);
        if (MeasurementCsv.looksLike(f)) {
            MeasurementCsv.parse(f, data, o.strict());
        } else {
            NcclTestsLog.parse(f, o, data);
        }
    }

    /**
     * Reads the cost tables of {@code show} and {@code validate}'s {@code --nccl-log} files, as
     * compile reads them ({@link NcclRunLog#readNotOffered}): which algorithm/protocol each logged
     * communicator's table does not offer. The logs' warnings go to {@code err}.
     *
     * @param logs the files, in order
     * @param err where the warnings go, each {@code COMMAND: warning: ...}
     * @param command the command's name for those lines ({@code nccl-tuner show})
     * @return the tables' not-offered entries of every log, in order
     * @throws InputException for an unreadable log, or one with no table of a shape it gives
     * @throws IOException if reading fails
     */
    static List<MeasurementSet.NotOffered> readCostTables(List<Path> logs, java.io.PrintWriter err, String command)
            throws InputException, IOException {
        List<MeasurementSet.NotOffered> all = new java.util.ArrayList<>();
        for (Path log : logs) {
            requireReadable(log);
            MeasurementSet one = new MeasurementSet();
            NcclRunLog.readNotOffered(log, Files.readAllLines(log, java.nio.charset.StandardCharsets.UTF_8), one);
            one.warnings().forEach(w -> err.println(command + ": warning: " + w));
            if (one.notOffered().isEmpty() && one.warnings().isEmpty()) {
                throw new InputException(
                        log.toString(),
                        "no latency/bandwidth table of a communicator whose nRanks and nNodes the log gives (run "
                                + "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)");
            }
            all.addAll(one.notOffered());
        }
        return all;
    }

    /**
     * Reads the {@code --nccl-log} files of {@code compile} and {@code report}: NCCL INFO logs whose
     * TUNING selection lines name NCCL's own pick ({@link NcclRunLog#readSelections}).
     *
     * @param logs the files, in order
     * @param data receives one selection per line
     * @throws InputException for an unreadable file or a line the parser refuses (file:line)
     * @throws IOException if reading fails
     */
    static void readNcclLogs(List<Path> logs, MeasurementSet data) throws IOException, InputException {
        for (Path log : logs) {
            requireReadable(log);
            NcclRunLog.readSelections(log, data);
        }
    }

    /** The name ending of the output a failed {@code nccl-tuner sweep} run leaves ({@code r007.failed.txt}). */
    static final String FAILED_RUN = ".failed.txt";

    /**
     * Reads the measurements of a file or a folder, as every command's {@code --measurements} takes
     * them: a file as {@link #readMeasurements}; a folder written by {@code nccl-tuner sweep} (it holds
     * {@code manifest.json}) as {@code compile} reads it ({@link io.nccltuner.sweep.SweepDirectory}: each
     * finished run with the candidate its manifest says it forced); any other folder as its
     * {@code *.csv} and {@code *.txt} files, in name order. In both kinds of folder a failed sweep
     * run's output ({@code *.failed.txt}) and an empty file (0 bytes or blank, what an interrupted run
     * leaves) are skipped, each with a note on {@code notes}; a file the parsers refuse is skipped with a warning
     * naming it (file:line) and the note says how many files were read.
     *
     * @param f a file or a folder
     * @param o how to read nccl-tests output (its placement also for a sweep folder)
     * @param data where the measurements go
     * @param notes receives one {@code note: ...} line per skipped file
     * @return the files read
     * @throws InputException for a missing path, a folder with nothing to read (every file empty,
     *     failed or refused), or a single file the parsers refuse (file:line)
     * @throws IOException if reading fails
     */
    static List<Path> readMeasurementsAt(Path f, NcclTestsLog.Options o, MeasurementSet data, java.io.PrintWriter notes)
            throws IOException, InputException {
        if (!Files.isDirectory(f)) {
            readMeasurements(f, o, data);
            return List.of(f);
        }
        List<Path> all;
        try (java.util.stream.Stream<Path> s = Files.list(f)) {
            all = s.filter(p -> Files.isRegularFile(p)
                            && (p.toString().endsWith(".csv") || p.toString().endsWith(".txt")))
                    .sorted()
                    .toList();
        }
        List<Path> in = new java.util.ArrayList<>();
        List<String> skipped = new java.util.ArrayList<>();
        for (Path p : all) {
            String why = skipReason(p);
            if (why != null) {
                skipped.add(p.getFileName().toString());
                notes.println("note: " + p + ": skipped: " + why);
            } else {
                in.add(p);
            }
        }
        if (io.nccltuner.sweep.SweepDirectory.isSweep(f)) {
            return io.nccltuner.sweep.SweepDirectory.read(f, o.placement(), data);
        }
        if (in.isEmpty()) {
            throw new InputException(
                    f.toString(),
                    skipped.isEmpty()
                            ? "no *.csv or *.txt measurement files in this folder"
                            : "no measurement file in this folder but the skipped " + String.join(", ", skipped));
        }
        return readEach(f, in, all.size(), o, data, notes);
    }

    /**
     * Reads a plain folder's files one by one: a file the parsers refuse is skipped with a warning
     * naming it (file:line and why), not the whole folder, and a note says how many were read.
     *
     * @param dir the folder
     * @param in its files to read, in name order
     * @param listed its {@code *.csv} and {@code *.txt} files, the skipped empty and failed ones too
     * @param o how to read nccl-tests output
     * @param data where the measurements go
     * @param notes receives {@code warning: FILE:LINE: ... ; skipped} per refused file, then {@code
     *     note: DIR: read N of M measurement files (K refused)} when any was refused
     * @return the files read
     * @throws InputException when every file is refused (naming each)
     * @throws IOException if reading fails
     */
    private static List<Path> readEach(
            Path dir, List<Path> in, int listed, NcclTestsLog.Options o, MeasurementSet data, java.io.PrintWriter notes)
            throws IOException, InputException {
        List<Path> read = new java.util.ArrayList<>();
        List<String> refused = new java.util.ArrayList<>();
        for (Path p : in) {
            MeasurementSet one = new MeasurementSet();
            try {
                readMeasurements(p, o, one);
            } catch (InputException e) {
                refused.add(e.getMessage());
                notes.println("warning: " + e.getMessage() + "; file skipped, the folder's other files are read");
                continue;
            }
            data.addAll(one);
            read.add(p);
        }
        if (read.isEmpty()) {
            throw new InputException(
                    dir.toString(), "no file in this folder could be read: " + String.join("; ", refused));
        }
        if (!refused.isEmpty()) {
            notes.println("note: " + dir + ": read " + read.size() + " of " + Main.count(listed, "measurement file")
                    + " (" + refused.size() + " refused, " + (listed - in.size()) + " skipped)");
        }
        notes.flush();
        return read;
    }

    /**
     * Why a file of a measurements folder is not read.
     *
     * @param p a regular file
     * @return "a failed sweep run's output (...)", "empty (0 bytes): ...", or null to read it
     * @throws IOException if it cannot be read
     */
    static String skipReason(Path p) throws IOException {
        long size = Files.size(p);
        if (p.getFileName().toString().endsWith(FAILED_RUN)) {
            return "a failed or interrupted `nccl-tuner sweep` run's output (" + size + " bytes); its runs are not "
                    + "measurements (run the sweep again to retry them)";
        }
        if (size == 0
                || (size < 1 << 16
                        && Files.readString(p, java.nio.charset.StandardCharsets.ISO_8859_1)
                                .isBlank())) {
            return "empty (" + size + " bytes), as an interrupted run leaves its output; nothing to read";
        }
        return null;
    }

    /**
     * The measurements of a file or folder ({@link #readMeasurementsAt}), for pricing picks in
     * {@code explain} and {@code replay} ({@link #pricedGroups}).
     *
     * @param f the file or folder
     * @param notes receives a note per file of a folder that is skipped
     * @return the measurements
     * @throws InputException as {@link #readMeasurementsAt}
     * @throws IOException if reading fails
     */
    static MeasurementSet measurementData(Path f, java.io.PrintWriter notes) throws IOException, InputException {
        MeasurementSet data = new MeasurementSet();
        readMeasurementsAt(f, NcclTestsLog.Options.NONE, data, notes);
        return data;
    }

    /**
     * The measured groups (collective, shape, sizes, candidates' times) that price the given calls:
     * the measurements compiled with the calls' NCCL picks as selections
     * ({@link io.nccltuner.report.ShadowReport#callPicks}), so NCCL's time is the estimate compile,
     * report and try print (unforced runs pooled with the pick's forced runs).
     *
     * @param f the file or folder, read again (its notes were printed by {@link #measurementData})
     * @param source what named the picks
     * @param calls the priced calls and NCCL's pick at each
     * @param command the command's name (in the compiler's defaults)
     * @return the groups {@link Compiler#compile} forms with its default options
     * @throws InputException as {@link #readMeasurementsAt}
     * @throws IOException if reading fails
     */
    static List<Compiler.Group> pricedGroups(
            Path f, String source, List<io.nccltuner.report.ShadowReport.PickedCall> calls, String command)
            throws IOException, InputException {
        MeasurementSet with = measurementData(f, new java.io.PrintWriter(java.io.Writer.nullWriter()));
        io.nccltuner.report.ShadowReport.callPicks(source, calls, with).forEach(with::add);
        return Compiler.compile(with, Compiler.Options.defaults(command)).groups();
    }
}

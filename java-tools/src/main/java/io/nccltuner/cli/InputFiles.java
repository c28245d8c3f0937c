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
     * Refuses a command's run where inputs were refused, once every input has been read, so that one
     * run names every refused file: one refused input is thrown as it was; several are printed on
     * stderr, one line each ({@code nccl-tuner compile: FILE:LINE: why}), then refused with {@code 2
     * of 3 inputs refused (each on its line above); nothing compiled}, with the first refused input's
     * kind: a {@link UsageException} (exit 2, a file of another kind) where it was one, else an
     * {@link InputException} (exit 1).
     *
     * @param command the lines' prefix, {@code nccl-tuner compile}
     * @param refused each refused input's {@link UsageException} or {@link InputException}, in the
     *     order the inputs were given
     * @param nInputs the inputs given
     * @param nothing what the run does not do, {@code nothing compiled}
     * @param err where the lines go
     * @throws InputException or {@link UsageException} when any input was refused
     */
    static void refuseInputs(
            String command, List<? extends Exception> refused, int nInputs, String nothing, java.io.PrintWriter err)
            throws InputException {
        if (refused.isEmpty()) {
            return;
        }
        Exception first = refused.getFirst();
        if (refused.size() == 1) {
            if (first instanceof UsageException u) {
                throw u;
            }
            throw (InputException) first;
        }
        for (Exception e : refused) {
            for (String line : e.getMessage().split("\n", -1)) { // a file's problems: one line each
                err.println((line.startsWith(" ") ? "" : command + ": ") + line); // indented: listed by the first
            }
        }
        err.flush();
        String summary = refused.size() + " of " + nInputs + " inputs refused (each on its line above); " + nothing;
        if (first instanceof UsageException) {
            throw new UsageException(summary);
        }
        throw new InputException(summary);
    }

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
        if (isEmpty(f)) {
            throw new InputException(f.toString(), EMPTY);
        }
        String other = otherKind(f, MEASUREMENTS);
        if (other != null) {
            throw new InputException(other);
        }
        if (MeasurementCsv.looksLike(f)) {
            MeasurementCsv.parse(f, data, o.strict());
        } else {
            NcclTestsLog.parse(f, o, data);
        }
    }

    /**
     * Reads the {@code --nccl-log} files of {@code report}: NCCL INFO logs whose TUNING selection
     * lines name NCCL's own pick ({@link NcclRunLog#readSelections}). {@code compile} reads its own
     * the same way, but leaves out a log of another machine or shape ({@link #otherRun}).
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

    /** What an empty measurement file is told (after its name). */
    static final String EMPTY = "empty (no text), as an interrupted run leaves its output: no measurements in it";

    /** What measurement inputs are, for {@link #otherKind}'s messages outside compile. */
    static final String MEASUREMENTS = "measurements are nccl-tests outputs, sweep CSVs or a sweep folder";

    /** What compile reads, for {@link #otherKind}'s messages. */
    static final String COMPILE_READS = "compile reads nccl-tests outputs, sweep CSVs or a sweep folder";

    /** How many bytes of a file {@link #otherKind} looks at. */
    private static final int SNIFF_BYTES = 1 << 16;

    /**
     * @param f a readable regular file
     * @return whether it holds no text: 0 bytes, or only whitespace
     * @throws IOException if it cannot be read
     */
    static boolean isEmpty(Path f) throws IOException {
        long size = Files.size(f);
        return size == 0
                || (size < SNIFF_BYTES
                        && Files.readString(f, java.nio.charset.StandardCharsets.ISO_8859_1)
                                .isBlank());
    }

    /**
     * What a file given as measurements holds when it is plainly something else, told from its first
     * 64 KiB: binary data (a NUL byte, or bytes that are not UTF-8), a policy (YAML), a decision or
     * shadow log (JSON lines), a getCollInfo trace (CSV), an NCCL example-tuner config (CSV), a CSV
     * without a {@code size_bytes} column, or an NCCL INFO log without nccl-tests size tables.
     * Anything holding an nccl-tests line ({@code # nccl-tests version}, {@code # nThread}, a
     * {@code #  size  count} column header) or a {@code size_bytes} CSV header is left to the parsers.
     *
     * @param f a readable regular file that is not empty
     * @param reads what the command reads: {@link #COMPILE_READS} (the message then says which of
     *     compile's options or which command takes such a file), or {@link #MEASUREMENTS}
     * @return {@code x.yaml: this is a policy (YAML), not measurements; <reads>[ (<where it goes>)]},
     *     one line, or null when it may be measurements
     * @throws IOException if it cannot be read
     */
    static String otherKind(Path f, String reads) throws IOException {
        String[] kind = kindOf(f);
        if (kind == null) {
            return null;
        }
        return f + ": this is " + kind[0] + ", not measurements; " + reads
                + (kind[1] != null && reads.equals(COMPILE_READS) ? " (" + kind[1] + ")" : "");
    }

    /** @return {what the file is, which option or command takes it (or null)}, or null when it may be measurements */
    private static String[] kindOf(Path f) throws IOException {
        byte[] head;
        try (java.io.InputStream in = Files.newInputStream(f)) {
            head = in.readNBytes(SNIFF_BYTES);
        }
        String[] kind = binaryKind(head);
        return kind != null
                ? kind
                : textKind(
                        f,
                        new String(head, java.nio.charset.StandardCharsets.ISO_8859_1)
                                .lines()
                                .toList());
    }

    /** @return {"binary data (...)", null} for a NUL byte or bytes that are not UTF-8, else null */
    private static String[] binaryKind(byte[] head) {
        for (int i = 0; i < head.length; i++) {
            if (head[i] == 0) {
                return new String[] {"binary data (a NUL byte at offset " + i + ")", null};
            }
        }
        java.nio.charset.CharsetDecoder d = java.nio.charset.StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(head);
        java.nio.charset.CoderResult r = d.decode(in, java.nio.CharBuffer.allocate(head.length + 1), true);
        // a sequence cut by the 64 KiB window's end is not an error of the file
        if (r.isError() && in.position() < head.length - 4) {
            return new String[] {
                String.format(
                        java.util.Locale.ROOT,
                        "binary data or text that is not UTF-8 (byte 0x%02x at offset %d)",
                        head[in.position()] & 0xff,
                        in.position()),
                null
            };
        }
        return null;
    }

    private static final java.util.regex.Pattern NCCL_TESTS_LINE =
            java.util.regex.Pattern.compile("#\\s*(?:nccl-tests version|nThread \\d|size\\s+count\\s)");
    private static final java.util.regex.Pattern CSV_HEADER =
            java.util.regex.Pattern.compile("^\\s*(?:[\\w ]+,)*\\s*size_bytes\\s*(?:,.*)?$");
    private static final java.util.regex.Pattern TRACE_ROW =
            java.util.regex.Pattern.compile("^(?:init|get|destroy),\\d+,");
    private static final java.util.regex.Pattern TUNER_ROW = java.util.regex.Pattern.compile(
            "^(?:allreduce|broadcast|reduce|allgather|reducescatter),-?\\d+,-?\\d+,\\w+,\\w+(?:,\\s*-?\\d+){3,5}\\s*$");
    private static final java.util.regex.Pattern YAML_KEY =
            java.util.regex.Pattern.compile("^[A-Za-z_][\\w.-]*:(?:\\s.*)?$");

    /**
     * @return {what the text is, where such a file goes (or null)} when its lines say it is not
     *     measurements, else null
     */
    private static String[] textKind(Path f, List<String> lines) {
        boolean ncclInfo = false;
        for (String l : lines) {
            if (NCCL_TESTS_LINE.matcher(l).find() || CSV_HEADER.matcher(l).find()) {
                return null; // nccl-tests output or a measurement CSV: the parsers tell what is wrong, if anything
            }
            ncclInfo |= l.contains("NCCL INFO") || l.contains("NCCL WARN");
        }
        String name = f.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        boolean yamlName = name.endsWith(".yaml") || name.endsWith(".yml");
        List<String> body = lines.stream()
                .map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .limit(20)
                .toList();
        String first = body.isEmpty() ? "" : body.getFirst();
        if (lines.stream().anyMatch(l -> l.startsWith("schema: nccl-tuner"))
                || (yamlName && lines.stream().anyMatch(l -> l.startsWith("profiles:")))) {
            return new String[] {"a policy (YAML)", "validate, show and try read policies"};
        }
        if (first.startsWith("{")) {
            boolean decisionLog = body.stream()
                    .anyMatch(l -> l.contains("\"" + io.nccltuner.engine.LogField.TYPE + "\"")
                            || l.contains("\"" + io.nccltuner.engine.LogField.POLICY_PICK + "\""));
            return new String[] {
                decisionLog ? "a decision log (JSON lines, NCCL_TUNER_JAVA_LOG)" : "JSON lines",
                "--workload FILE weights regret by the calls of a decision or shadow-mode log"
            };
        }
        if (first.startsWith("[")) {
            return new String[] {"JSON", "import reads a tuner's rules in JSON"};
        }
        if (TRACE_ROW.matcher(first).find()) {
            return new String[] {
                "a getCollInfo trace (CSV, NCCL_TUNER_JAVA_RECORD)", "--workload FILE weights regret by its calls"
            };
        }
        if (TUNER_ROW.matcher(first).find()) {
            return new String[] {"a tuner config (NCCL's example-tuner CSV)", "import converts it into a policy"};
        }
        if (ncclInfo) {
            return new String[] {
                "an NCCL INFO log without nccl-tests size tables ('#  size  count  type ...' and rows)",
                "--nccl-log FILE reads its selection lines as NCCL's own picks"
            };
        }
        if (yamlName
                || (!first.isEmpty()
                        && body.stream().allMatch(l -> YAML_KEY.matcher(l).find() || l.startsWith("- ")))) {
            return new String[] {"YAML but not a policy", null};
        }
        if (first.contains(",") && name.endsWith(".csv")) {
            return new String[] {
                "a CSV without a size_bytes column (its header: "
                        + (first.length() > 80 ? first.substring(0, 80) + "..." : first) + ")",
                null
            };
        }
        return null;
    }

    /**
     * A plain folder's entries as compile reads them ({@link #folderEntries}).
     *
     * @param files the files to read, in name order
     * @param skipped every other entry's name (a subfolder's with a trailing {@code /}) and why it is
     *     not read
     */
    record FolderEntries(List<Path> files, java.util.Map<String, String> skipped) {}

    /** The name endings of the files compile reads from a plain folder. */
    static final List<String> FOLDER_FILES = List.of(".txt", ".log", ".out", ".csv");

    /**
     * Sorts a folder's entries (not its subfolders' ones) into the files compile reads and the
     * others: a subfolder, a name not ending {@link #FOLDER_FILES}, a failed sweep run's output or an
     * empty file ({@link #skipReason}), and another kind of file than measurements ({@link
     * #otherKind}: an NCCL log without nccl-tests tables, a policy, a trace, ...).
     *
     * @param dir the folder
     * @return the files to read and the skipped entries with why
     * @throws IOException if the folder or a file cannot be read
     */
    static FolderEntries folderEntries(Path dir) throws IOException {
        List<Path> all;
        try (java.util.stream.Stream<Path> s = Files.list(dir)) {
            all = s.sorted().toList();
        }
        List<Path> files = new java.util.ArrayList<>();
        java.util.Map<String, String> skipped = new java.util.LinkedHashMap<>();
        for (Path p : all) {
            String name = p.getFileName().toString();
            if (Files.isDirectory(p)) {
                skipped.put(name + "/", "a folder: subfolders are not read");
                continue;
            }
            if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
                skipped.put(name, problem(p) == null ? "not a regular file" : problem(p));
                continue;
            }
            if (FOLDER_FILES.stream().noneMatch(name::endsWith)) {
                skipped.put(
                        name,
                        "not "
                                + String.join(
                                        ", ",
                                        FOLDER_FILES.stream().map(e -> "*" + e).toList()));
                continue;
            }
            String why = skipReason(p);
            if (why == null) {
                String[] kind = kindOf(p);
                why = kind == null ? null : kind[0] + ", not measurements" + (kind[1] == null ? "" : "; " + kind[1]);
            }
            if (why != null) {
                skipped.put(name, why);
            } else {
                files.add(p);
            }
        }
        return new FolderEntries(files, skipped);
    }

    /**
     * Whether an NCCL log ran where the measurements did, for {@code compile --nccl-log}: its machine
     * ({@link NcclRunLog#machine}) against the measurements' ({@link
     * io.nccltuner.compile.Measurement.Hardware#sameMachine}, where both name one; measurements that
     * name none match any log), and its communicator shape (the selections' {@code comm ... nRanks
     * N nNodes M} line, else its cost tables', else what its other lines tell, {@link
     * io.nccltuner.model.LogShape}) against the measured ones.
     *
     * @param log the log
     * @param read what {@link NcclRunLog#readSelections} read from it
     * @param measured the measurements
     * @return why the log is not used ({@code its run (NCCL 2.27.7, nRanks=2 nNodes=1) is another
     *     machine and communicator shape than the measurements' (NVIDIA H200 NCCL 2.28.9 at nRanks=8
     *     nNodes=2): not used, ...}), or null when it belongs to them
     * @throws IOException if the log cannot be read
     */
    static String otherRun(Path log, MeasurementSet read, List<io.nccltuner.compile.Measurement> measured)
            throws IOException {
        List<String> lines = Files.readAllLines(log, java.nio.charset.StandardCharsets.ISO_8859_1);
        io.nccltuner.compile.Measurement.Hardware hw = NcclRunLog.machine(lines);
        int nRanks = 0;
        int nNodes = 0;
        String inferred = "";
        for (var s : read.selections()) {
            if (s.nRanks() > 0) {
                nRanks = s.nRanks();
                nNodes = s.nNodes();
                break;
            }
        }
        if (nRanks == 0 && !read.notOffered().isEmpty()) {
            nRanks = read.notOffered().getFirst().nRanks();
            nNodes = read.notOffered().getFirst().nNodes();
        }
        if (nRanks == 0) {
            io.nccltuner.model.LogShape shape = io.nccltuner.model.LogShape.of(lines);
            nRanks = shape.nRanks();
            nNodes = shape.nRanks() > 0 ? shape.nNodes() : 0;
            inferred = nRanks > 0 ? ", told by " + shape.nRanksFrom() : "";
        }
        boolean anyUnnamed = measured.stream().anyMatch(m -> m.hardware() == null);
        boolean otherMachine = hw != null
                && !anyUnnamed
                && measured.stream().noneMatch(m -> m.hardware().sameMachine(hw));
        final int r = nRanks;
        final int n = nNodes;
        boolean otherShape = r > 0 && measured.stream().noneMatch(m -> m.nRanks() == r && (n <= 0 || m.nNodes() == n));
        if (!otherMachine && !otherShape) {
            return null;
        }
        java.util.Map<String, java.util.Set<String>> byMachine = new java.util.LinkedHashMap<>();
        for (var m : measured) {
            byMachine
                    .computeIfAbsent(machineText(m.hardware()), x -> new java.util.LinkedHashSet<>())
                    .add(io.nccltuner.model.JobShape.of(m.nRanks(), m.nNodes()));
        }
        List<String> groups = new java.util.ArrayList<>();
        byMachine.forEach((m, shapes) -> groups.add(m + " at " + String.join(", ", shapes)));
        List<String> run = new java.util.ArrayList<>();
        if (hw != null) {
            run.add(machineText(hw));
        }
        if (r > 0) {
            run.add((n > 0 ? io.nccltuner.model.JobShape.of(r, n) : "nRanks=" + r) + inferred);
        }
        String differs = otherMachine && otherShape
                ? "another machine and communicator shape"
                : otherMachine ? "another machine" : "another communicator shape";
        return "its run (" + String.join(", ", run) + ") is " + differs + " than the measurements' ("
                + String.join("; ", groups) + "): not used, since its selection lines name NCCL's picks and its "
                + "cost table the candidates NCCL offers on that run, not on the measured ones; give the log of the "
                + "measured runs (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)";
    }

    /** @return {@link io.nccltuner.compile.Measurement.Hardware#label}, or {@code machine not printed} */
    static String machineText(io.nccltuner.compile.Measurement.Hardware hw) {
        return hw == null ? "machine not printed" : hw.label();
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
     * naming it (file:line) and the note says how many files were read. Every row the parsers did not
     * use is told on {@code notes} ({@link MeasurementSet#skippedRowLines}): a warning per mangled row
     * naming file:line and why, and a count.
     *
     * @param f a file or a folder
     * @param o how to read nccl-tests output (its placement also for a sweep folder)
     * @param data where the measurements go
     * @param notes receives one {@code note: ...} line per skipped file, and the skipped rows' lines
     * @return the files read
     * @throws InputException for a missing path, a folder with nothing to read (every file empty,
     *     failed or refused), or a single file the parsers refuse (file:line)
     * @throws IOException if reading fails
     */
    static List<Path> readMeasurementsAt(Path f, NcclTestsLog.Options o, MeasurementSet data, java.io.PrintWriter notes)
            throws IOException, InputException {
        int before = data.refused().size();
        List<Path> read = readAt(f, o, data, notes);
        warnSkippedRows(data.refused().subList(before, data.refused().size()), f.toString(), notes);
        return read;
    }

    /**
     * Prints {@link MeasurementSet#skippedRowLines} of rows the parsers refused, so that no command
     * reading measurements drops one silently.
     *
     * @param refused the refused rows of what was read, {@code file:line: reason}
     * @param source what was read, as the user named it
     * @param notes where the lines go
     */
    static void warnSkippedRows(List<String> refused, String source, java.io.PrintWriter notes) {
        MeasurementSet.skippedRowLines(refused, source).forEach(notes::println);
        notes.flush();
    }

    private static List<Path> readAt(Path f, NcclTestsLog.Options o, MeasurementSet data, java.io.PrintWriter notes)
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
                refused.add(e.getMessage().replace("\n", "; "));
                skippedFileLines(e, "warning: ").forEach(notes::println);
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
     * The warning lines of a folder's file the parsers refuse, the folder's other files read: each
     * line of the refusal (a file's problems, one line each, then what to do), the last followed by
     * {@code ; file skipped, the folder's other files are read}.
     *
     * @param e the file's refusal
     * @param prefix each line's start, {@code warning: }
     * @return the lines
     */
    static List<String> skippedFileLines(InputException e, String prefix) {
        List<String> lines = new java.util.ArrayList<>(e.getMessage()
                .lines()
                .map(l -> l.startsWith(" ") ? l : prefix + l)
                .toList());
        lines.set(lines.size() - 1, lines.getLast() + "; file skipped, the folder's other files are read");
        return lines;
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
        return pricedGroups(List.of(f), source, calls, command);
    }

    /**
     * {@link #pricedGroups(Path, String, List, String)} over several files or folders read as one
     * set (explain's repeatable {@code --measurements}).
     *
     * @param fs the files or folders, read again
     * @param source what named the picks
     * @param calls the priced calls and NCCL's pick at each
     * @param command the command's name
     * @return the groups
     * @throws InputException as {@link #readMeasurementsAt}
     * @throws IOException if reading fails
     */
    static List<Compiler.Group> pricedGroups(
            List<Path> fs, String source, List<io.nccltuner.report.ShadowReport.PickedCall> calls, String command)
            throws IOException, InputException {
        MeasurementSet with = new MeasurementSet();
        for (Path f : fs) {
            readMeasurementsAt(
                    f, NcclTestsLog.Options.NONE, with, new java.io.PrintWriter(java.io.Writer.nullWriter()));
        }
        io.nccltuner.report.ShadowReport.callPicks(source, calls, with).forEach(with::add);
        return Compiler.compile(with, Compiler.Options.defaults(command)).groups();
    }
}

package io.nccltuner.sweep;

import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a sweep directory for {@code nccl-tuner compile SWEEP_DIR}: the manifest tells which run
 * forced which candidate; each finished run's output is parsed as nccl-tests output with that
 * candidate assumed ({@link NcclTestsLog.Options}), NCCL's-pick runs as NCCL's own pick. Where a
 * forced candidate was not offered (its entry -1), NCCL's TUNING selection lines in the output
 * tell what ran, and the parser uses that.
 */
public final class SweepDirectory {
    private SweepDirectory() {}

    /** @return whether {@code dir} is a directory holding a sweep manifest */
    public static boolean isSweep(Path dir) {
        return Files.isDirectory(dir) && Files.isRegularFile(dir.resolve(Manifest.FILE));
    }

    /**
     * Parses every finished run.
     *
     * @param dir the sweep directory
     * @param placement which nccl-tests columns to use
     * @param into receives the measurements; warnings that would call a run of NCCL's own pick
     *     "not forced, counted as NCCL's choice" are dropped (the manifest says so)
     * @return the files read
     * @throws IOException if the manifest or an output cannot be read
     * @throws InputException if an output does not parse, or no run has finished
     */
    public static List<Path> read(Path dir, NcclTestsLog.Placement placement, MeasurementSet into)
            throws IOException, InputException {
        return read(dir, placement, false, into);
    }

    /**
     * As {@link #read(Path, NcclTestsLog.Placement, MeasurementSet)}; with {@code strict}, a run's
     * output with a mangled row is refused there, as compile's {@code --strict} refuses a file
     * (a sweep folder read without it, found by the ninth newcomer walk).
     *
     * @param strict whether a mangled row refuses the run's output instead of being skipped
     */
    public static List<Path> read(Path dir, NcclTestsLog.Placement placement, boolean strict, MeasurementSet into)
            throws IOException, InputException {
        Manifest m = Manifest.read(dir.resolve(Manifest.FILE));
        List<Path> files = new ArrayList<>();
        int pending = 0;
        for (Manifest.RunRecord r : m.runs()) {
            Path f = dir.resolve(r.file());
            if (!"done".equals(r.status()) || !Files.isRegularFile(f)) {
                pending++;
                continue;
            }
            Algorithm a = r.algorithm() == null ? null : Algorithm.parse(r.algorithm());
            Protocol p = r.protocol() == null ? null : Protocol.parse(r.protocol());
            if ((r.algorithm() != null && a == null) || (r.protocol() != null && p == null)) {
                throw new InputException(
                        dir.resolve(Manifest.FILE).toString(),
                        "run " + r.id() + " names an unknown candidate " + r.label());
            }
            MeasurementSet one = new MeasurementSet();
            NcclTestsLog.parse(
                    f, new NcclTestsLog.Options(null, a, p, r.channels(), 0, 0, placement, false, strict), one);
            one.measurements().forEach(into::add);
            into.sameRuns(f.toString(), "the sweep " + dir);
            one.selections().forEach(into::add);
            for (String why : one.refused()) {
                int at = why.indexOf(": ");
                into.refuse(at > 0 ? why.substring(0, at) : f.toString(), at > 0 ? why.substring(at + 2) : why);
            }
            for (String w : one.warnings()) {
                if (a == null && (w.contains("no forced configuration") || w.contains("cannot be told apart"))) {
                    continue;
                }
                int at = w.indexOf(": ");
                into.warn(at > 0 ? w.substring(0, at) : f.toString(), at > 0 ? w.substring(at + 2) : w);
            }
            files.add(f);
        }
        if (files.isEmpty()) {
            throw new InputException(
                    dir.toString(),
                    "no finished run in this sweep (" + m.runs().size() + " planned, seed "
                            + m.seed()
                            + "): run it, or resume it, with the command that planned it, `nccl-tuner sweep -o " + dir
                            + " --seed " + m.seed() + " --replicates " + m.replicates() + " ...` (the same options: "
                            + dir
                            + "/manifest.json lists its programs, candidates and launcher; finished runs are skipped), then compile "
                            + dir);
        }
        if (pending > 0) {
            into.unfinished(new MeasurementSet.Unfinished(
                    dir.toString(), pending, m.runs().size()));
            into.warn(
                    dir.toString(),
                    pending + " of " + m.runs().size() + io.nccltuner.compile.TextReport.UNFINISHED
                            + " (run the sweep again to finish it)");
        }
        return files;
    }
}

package io.nccltuner.sweep;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

/**
 * A sweep directory's {@code manifest.json}: what was run, how, and on what.
 *
 * @param schema {@link #SCHEMA}
 * @param created ISO-8601 instant the sweep was first started
 * @param seed the order's seed ({@link SweepPlan})
 * @param replicates R
 * @param programs nccl-tests programs without {@code _perf}
 * @param candidates the forced candidates' labels (RING/LL128/16); NCCL's own pick is implied
 * @param launch the launcher's words ({@code srun -N 2 --ntasks-per-node 8}), empty for none
 * @param plugin the tuner plugin the runs loaded (NCCL_TUNER_PLUGIN)
 * @param testsArgs the nccl-tests options every run got ({@code -b 4 -e 64M -f 2 ...})
 * @param environment the variables the runs saw that matter to NCCL (NCCL_*, CUDA_*, ...), as
 *     set for every run; a run's own additions are in {@link RunRecord#env}
 * @param signature the hardware signature read from the first finished run, or null
 * @param warnings runs whose signature differs from the first, and similar notes
 * @param runs every run of the plan, in execution order
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Manifest(
        String schema,
        String created,
        long seed,
        int replicates,
        List<String> programs,
        List<String> candidates,
        List<String> launch,
        String plugin,
        List<String> testsArgs,
        Map<String, String> environment,
        RunHardware signature,
        List<String> warnings,
        List<RunRecord> runs) {
    /** The schema string this release writes and reads. */
    public static final String SCHEMA = "nccl-tuner-java/sweep-v1";

    /** The file's name inside a sweep directory. */
    public static final String FILE = "manifest.json";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    /**
     * One run.
     *
     * @param id unique id, also the output's file stem
     * @param program nccl-tests program without {@code _perf}
     * @param algorithm forced algorithm, null for NCCL's own pick
     * @param protocol forced protocol, null for NCCL's own pick
     * @param channels forced channel count, 0 = NCCL decides
     * @param replicate 1..R
     * @param order position in the sweep, 0-based
     * @param file the raw output, relative to the directory ({@code runs/<id>.txt})
     * @param command the command line, words as passed to the OS
     * @param env variables set for this run on top of {@link #environment}
     * @param status pending, done, failed (the program exited non-zero, or the sweep's {@code
     *     --timeout} killed it) or interrupted (a signal from outside stopped it: Ctrl-C, SIGTERM; see
     *     {@link Sweep#INTERRUPTED})
     * @param exitCode the process's exit status, null until it ran (and for a run interrupted by
     *     stopping the sweep itself)
     * @param seconds wall time, null until it ran
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record RunRecord(
            String id,
            String program,
            String algorithm,
            String protocol,
            int channels,
            int replicate,
            int order,
            String file,
            List<String> command,
            Map<String, String> env,
            String status,
            Integer exitCode,
            Double seconds) {
        /**
         * @param newStatus done, failed or interrupted
         * @param exit the process's exit status; null where the sweep was stopped before it ended
         * @param secs its wall time, seconds
         * @return the same run with a new outcome
         */
        public RunRecord finished(String newStatus, Integer exit, double secs) {
            return new RunRecord(
                    id, program, algorithm, protocol, channels, replicate, order, file, command, env, newStatus, exit,
                    secs);
        }

        /** @return the same run with another command line (the binary found elsewhere on a resume) */
        public RunRecord withCommand(List<String> newCommand) {
            return new RunRecord(
                    id,
                    program,
                    algorithm,
                    protocol,
                    channels,
                    replicate,
                    order,
                    file,
                    newCommand,
                    env,
                    status,
                    exitCode,
                    seconds);
        }

        /** @return "NCCL" for NCCL's own pick, else ALGO/PROTO[/channels] */
        public String label() {
            return algorithm == null ? "NCCL" : algorithm + "/" + protocol + (channels > 0 ? "/" + channels : "");
        }
    }

    /** @return the same manifest with other runs, signature and warnings */
    public Manifest with(List<RunRecord> newRuns, RunHardware sig, List<String> newWarnings) {
        return new Manifest(
                schema,
                created,
                seed,
                replicates,
                programs,
                candidates,
                launch,
                plugin,
                testsArgs,
                environment,
                sig,
                newWarnings,
                newRuns);
    }

    /**
     * Reads a manifest.
     *
     * @param file manifest.json
     * @return the manifest
     * @throws IOException if it cannot be read or is not a sweep manifest of this schema
     */
    public static Manifest read(Path file) throws IOException {
        Manifest m = JSON.readValue(file.toFile(), Manifest.class);
        if (!SCHEMA.equals(m.schema())) {
            throw new IOException(file + ": schema '" + m.schema() + "' is not " + SCHEMA);
        }
        if (m.runs() == null) {
            throw new IOException(file + ": no runs");
        }
        return m;
    }

    /**
     * Writes the manifest atomically (a temporary file, then a rename), so an interrupted sweep
     * never leaves half a manifest.
     *
     * @param file where
     * @throws IOException if it cannot be written
     */
    public void write(Path file) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), this);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}

package io.nccltuner.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs {@link Main} with stdout and stderr captured; and the setup the CLI tests share: the
 * repository's traces and fixtures, {@code try} through the build tree's harness and plugin
 * (skipped without them), and fixture files written into a test's folder.
 */
record CliRun(int exit, String out, String err) {
    /** The repository's root (the tests run in java-tools). */
    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));
    /** The build tree's host harness (make build). */
    static final Path HARNESS = REPO.resolve("build/tests/harness");
    /** The build tree's plugin (make build). */
    static final Path PLUGIN = REPO.resolve("build/lib/libnccl-tuner-java.so");

    /** Skips the calling test where the build tree has no harness or plugin. */
    static void needBuild() {
        Assumptions.assumeTrue(Files.isExecutable(HARNESS) && Files.isRegularFile(PLUGIN), "make build first");
    }

    /** @return {@code try --harness HARNESS --plugin PLUGIN}, then {@code more} */
    static List<String> tryArgs(String... more) {
        List<String> a =
                new ArrayList<>(List.of("try", "--harness", HARNESS.toString(), "--plugin", PLUGIN.toString()));
        a.addAll(List.of(more));
        return a;
    }

    /** Runs {@link #tryArgs} (skipped without a build: {@link #needBuild}). */
    static CliRun tryRun(String... more) {
        needBuild();
        return run(tryArgs(more).toArray(String[]::new));
    }

    /** Runs {@code args}, then {@code more}. */
    static CliRun run(List<String> args, String... more) {
        List<String> a = new ArrayList<>(args);
        a.addAll(List.of(more));
        return run(a.toArray(String[]::new));
    }

    /**
     * compile's one note for the runs that name no forced configuration, as its stderr prints it.
     *
     * @param where each file with its tables' lines, {@code a.txt:18} or {@code b.txt:4,10}
     * @return the line, newline included
     */
    static String unforcedNote(String... where) {
        return "nccl-tuner compile: note: runs in " + where.length + (where.length == 1 ? " file" : " files")
                + " name no forced configuration (no NCCL INFO 'set by environment' lines, no --algo/--proto): "
                + "counted as NCCL's own choice (tables at " + String.join(", ", where)
                + "); if NCCL_ALGO/NCCL_PROTO were set for a file's runs, say so with --in FILE --algo X --proto Y\n";
    }

    /** @return the file {@code name} in {@code dir}, written with {@code text} */
    static Path write(Path dir, String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    /** @return a file of the repository ({@code policies/h200-2rank.yaml}) as a string */
    static String repoFile(String path) {
        return REPO.resolve(path).toString();
    }

    static CliRun run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.run(args);
            return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    static String trace(String name) {
        return REPO.resolve("tests/traces").resolve(name).toString();
    }

    static String fixture(String name) {
        try {
            return Path.of(CliRun.class.getResource("/compile/" + name).toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}

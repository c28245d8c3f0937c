package io.nccltuner.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relocatable tarball of `make dist`: unpacked into a temporary folder and used with an empty
 * environment (no JAVA_HOME, no java on PATH), the plugin finds its bundled runtime and jar.
 */
class DistIT {
    static Path tarball() throws Exception {
        Path dist = Harness.REPO.resolve("dist");
        assertTrue(Files.isDirectory(dist), "dist/ is missing: run `make dist` (make test does)");
        try (Stream<Path> s = Files.list(dist)) {
            return s.filter(p -> p.getFileName().toString().endsWith("-linux-x86_64.tar.gz"))
                    .findFirst()
                    .orElseThrow();
        }
    }

    @Test
    void unpackedAnywhereWorksWithoutJdk(@TempDir Path tmp) throws Exception {
        Harness.requireBuilt();
        Path tgz = tarball();
        assertTrue(Files.size(tgz) <= 25L << 20, "packed size " + Files.size(tgz) + " B is over 25 MiB");
        Harness.Result untar =
                Harness.exec(List.of("/bin/tar", "-C", tmp.toString(), "-xzf", tgz.toString()), Map.of(), false);
        assertEquals(0, untar.exit(), untar.text());
        Path root;
        try (Stream<Path> s = Files.list(tmp)) {
            root = s.findFirst().orElseThrow();
        }
        for (String f : List.of(
                "lib/libnccl-tuner-java.so",
                "lib/nccl-tuner-java.jar",
                "runtime/lib/server/libjvm.so",
                "bin/nccl-tuner",
                "bin/nccl-tuner-aot",
                "policies/h200-2rank.yaml",
                "examples/traces/trace_tp_infer.csv",
                "examples/traces/nccl_sweep.rank0.log",
                "examples/measurements/h200-2rank-sweep_allreduce.rep1.csv")) {
            assertTrue(Files.exists(root.resolve(f)), f);
        }
        Map<String, String> env = Map.of(
                "NCCL_DEBUG",
                "INFO",
                "NCCL_TUNER_PLUGIN",
                root.resolve("lib/libnccl-tuner-java.so").toString(),
                "NCCL_TUNER_JAVA_POLICY",
                root.resolve("policies/h200-2rank.yaml").toString());
        List<String> replay = List.of(
                Harness.BIN.toString(),
                "--trace",
                Harness.TRACES.resolve("trace_tp_infer.csv").toString());
        Harness.Result r = Harness.exec(replay, env, true);
        assertEquals(0, r.exit(), r.text());
        assertTrue(r.warnings().isEmpty(), r.text());
        assertTrue(r.summary().contains("calls=273 changed=257 warn=0"), r.summary());
        assertEquals(1, r.grep("; no AOT cache: ").size(), r.text());

        // The scripts need a shell's basic tools but no java: a PATH holding only those.
        Path tools = Files.createDirectories(tmp.resolve("tools"));
        for (String t : List.of("rm", "dirname")) {
            Files.createSymbolicLink(tools.resolve(t), Path.of("/bin", t).toRealPath());
        }
        Map<String, String> toolsPath = Map.of("PATH", tools.toString());

        // The optional AOT cache, built on the target by the bundled runtime, is then used.
        Harness.Result aot =
                Harness.exec(List.of(root.resolve("bin/nccl-tuner-aot").toString()), toolsPath, true);
        assertEquals(0, aot.exit(), aot.text());
        assertTrue(Files.size(root.resolve("lib/nccl-tuner-java.aot")) > 1 << 20);
        // it says what it wrote, each policy's compiled form and the cache, and nothing else: not the
        // JVM's lines about the cache it assembles ("Picked up JAVA_TOOL_OPTIONS", "AOTCache creation ...")
        List<String> said = new java.util.ArrayList<>();
        try (Stream<Path> s = Files.list(root.resolve("policies"))) {
            s.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml"))
                    .sorted()
                    .forEach(n -> said.add("nccl-tuner-aot: wrote " + root.resolve("policies/" + n) + ".compiled"));
        }
        assertEquals(said, aot.lines().subList(0, aot.lines().size() - 1), aot.text());
        assertTrue(
                aot.lines()
                        .getLast()
                        .matches(java.util.regex.Pattern.quote(
                                        "nccl-tuner-aot: wrote " + root.resolve("lib/nccl-tuner-java.aot") + " (")
                                + "\\d+ MiB\\), the AOT cache the plugin starts from \\(trained on \\d+ tuner calls of the "
                                + "trace bundled in the jar\\)"),
                aot.text());
        long unpacked;
        try (Stream<Path> s = Files.walk(root)) {
            unpacked = s.filter(Files::isRegularFile)
                    .mapToLong(p -> p.toFile().length())
                    .sum();
        }
        assertTrue(unpacked <= 60L << 20, "unpacked with the AOT cache: " + unpacked + " B, over 60 MiB");
        Map<String, String> withLog = new java.util.HashMap<>(env);
        withLog.put("NCCL_TUNER_JAVA_OPTS", "-Xlog:aot=info");
        Harness.Result r2 = Harness.exec(replay, withLog, true);
        assertEquals(0, r2.exit(), r2.text());
        assertTrue(r2.summary().contains("calls=273 changed=257 warn=0"), r2.summary());
        assertTrue(r2.text().contains("Using AOT-linked classes") || r2.text().contains("Opened AOT cache"), r2.text());
        // the first INFO line says the cache was used
        Harness.Result r3 = Harness.exec(replay, env, true);
        assertEquals(
                1,
                r3.grep("; AOT cache " + root.toRealPath().resolve("lib/nccl-tuner-java.aot") + ")")
                        .size(),
                r3.text());

        Harness.Result help =
                Harness.exec(List.of(root.resolve("bin/nccl-tuner").toString(), "--help"), toolsPath, true);
        assertEquals(0, help.exit(), help.text());
        assertTrue(help.text().contains("Usage: nccl-tuner"), help.text());

        // The README's examples run on the files the distribution carries.
        Harness.Result compile = Harness.exec(
                List.of(
                        root.resolve("bin/nccl-tuner").toString(),
                        "compile",
                        root.resolve("examples/measurements/h200-2rank-sweep_allreduce.rep1.csv")
                                .toString(),
                        "--nccl-log",
                        root.resolve("examples/traces/nccl_sweep.rank0.log").toString(),
                        "--workload",
                        root.resolve("examples/traces/trace_tp_infer.csv").toString(),
                        "-o",
                        tmp.resolve("measured.yaml").toString()),
                toolsPath,
                true);
        assertEquals(0, compile.exit(), compile.text());
        Harness.Result replayEx = Harness.exec(
                List.of(
                        root.resolve("bin/nccl-tuner").toString(),
                        "replay",
                        "--trace",
                        root.resolve("examples/traces/trace_tp_infer.csv").toString(),
                        "--policy",
                        tmp.resolve("measured.yaml").toString()),
                toolsPath,
                true);
        assertEquals(0, replayEx.exit(), replayEx.text());

        // The README's task path: try the compiled policy through the real plugin, no GPU, no JDK
        // (libexec/nccl-tuner-harness loads lib/'s plugin on the bundled runtime).
        assertTrue(Files.isExecutable(root.resolve("libexec/nccl-tuner-harness")), "libexec/nccl-tuner-harness");
        Harness.Result tried = Harness.exec(
                List.of(
                        root.resolve("bin/nccl-tuner").toString(),
                        "try",
                        "--policy",
                        tmp.resolve("measured.yaml").toString(),
                        "--trace",
                        root.resolve("examples/traces/trace_tp_infer.csv").toString(),
                        "--measurements",
                        root.resolve("examples/measurements/h200-2rank-sweep_allreduce.rep1.csv")
                                .toString()),
                toolsPath,
                true);
        assertEquals(0, tried.exit(), tried.text());
        assertTrue(
                tried.text().contains("plugin " + root.toRealPath().resolve("lib/libnccl-tuner-java.so")),
                tried.text());
        assertTrue(tried.text().contains("from " + root.toRealPath().resolve("runtime")), tried.text());
        assertTrue(
                tried.text().contains("INFO TUNER/Java: policy measured profile nRanks2-nNodes2 mode shadow rules 5"),
                tried.text());
        assertTrue(tried.text().contains("== nccl-tuner report of the decision logs"), tried.text());
        assertTrue(tried.text().contains("expected saving: "), tried.text());
        assertTrue(tried.text().contains("try: the policy would change "), tried.text());
    }

    /**
     * A root-owned install (lib/ not writable by the user running bin/nccl-tuner-aot): the script
     * fails with a message that says what to do, and writes nothing. Run as root, the test runs the
     * script as nobody (setpriv); otherwise it makes lib/ read-only.
     */
    @Test
    void aotScriptFailsClearlyWhenLibIsNotWritable(@TempDir Path tmp) throws Exception {
        Harness.requireBuilt();
        Harness.Result untar = Harness.exec(
                List.of("/bin/tar", "-C", tmp.toString(), "-xzf", tarball().toString()), Map.of(), false);
        assertEquals(0, untar.exit(), untar.text());
        Path root;
        try (Stream<Path> s = Files.list(tmp)) {
            root = s.findFirst().orElseThrow();
        }
        Path lib = root.resolve("lib");
        List<String> cmd;
        if ("root".equals(System.getProperty("user.name"))) {
            Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
            cmd = List.of(
                    "/usr/bin/setpriv",
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    root.resolve("bin/nccl-tuner-aot").toString());
        } else {
            Files.setPosixFilePermissions(lib, java.nio.file.attribute.PosixFilePermissions.fromString("r-xr-xr-x"));
            cmd = List.of(root.resolve("bin/nccl-tuner-aot").toString());
        }
        try {
            Harness.Result aot = Harness.exec(cmd, Map.of("PATH", "/usr/bin:/bin"), true);
            assertEquals(1, aot.exit(), aot.text());
            assertTrue(aot.text().contains("nccl-tuner-aot: " + lib + " is not writable by "), aot.text());
            assertTrue(aot.text().contains("run bin/nccl-tuner-aot as the owner of " + lib), aot.text());
            assertTrue(Files.notExists(lib.resolve("nccl-tuner-java.aot")));
        } finally {
            Files.setPosixFilePermissions(lib, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    /**
     * libexec/fake-cuda/libcuda.so.1 stands in for the CUDA driver in {@code nccl-tuner try --gpu}
     * only (TryHardware LD_PRELOADs it into the harness it starts). On a job's library path it would
     * shadow the real driver, so: no script in bin/ names it or puts libexec/ on LD_LIBRARY_PATH or
     * LD_PRELOAD, no line of the shipped docs (README.md, docs/, examples/README.md) puts it on
     * LD_LIBRARY_PATH, and the plugin has no RPATH/RUNPATH at all (readelf -d), so none that names it.
     */
    @Test
    void fakeCudaIsOnNoJobsLibraryPath(@TempDir Path tmp) throws Exception {
        Harness.requireBuilt();
        Harness.Result untar = Harness.exec(
                List.of("/bin/tar", "-C", tmp.toString(), "-xzf", tarball().toString()), Map.of(), false);
        assertEquals(0, untar.exit(), untar.text());
        Path root;
        try (Stream<Path> s = Files.list(tmp)) {
            root = s.findFirst().orElseThrow();
        }
        assertTrue(Files.isRegularFile(root.resolve("libexec/fake-cuda/libcuda.so.1")), "the try path's driver");
        List<String> bad = new java.util.ArrayList<>();
        try (Stream<Path> s = Files.list(root.resolve("bin"))) {
            for (Path f : s.toList()) {
                String text = new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1);
                int n = 0;
                for (String line : text.split("\n")) {
                    n++;
                    boolean loads = line.contains("LD_LIBRARY_PATH") || line.contains("LD_PRELOAD");
                    if (line.contains("fake-cuda") || (loads && line.contains("libexec"))) {
                        bad.add("bin/" + f.getFileName() + ":" + n + ": " + line.strip());
                    }
                }
            }
        }
        List<Path> docs = new java.util.ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> s = Files.walk(root.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).forEach(docs::add);
        }
        if (Files.exists(root.resolve("examples/README.md"))) {
            docs.add(root.resolve("examples/README.md"));
        }
        for (Path f : docs) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.contains("LD_LIBRARY_PATH") && (line.contains("fake-cuda") || line.contains("libexec"))) {
                    bad.add(root.relativize(f) + ":" + (i + 1) + ": " + line.strip());
                }
            }
        }
        assertEquals(List.of(), bad, "lines that put the fake CUDA driver on a library path");
        assertTrue(docs.size() > 5, "docs scanned: " + docs);
        Harness.Result elf = Harness.exec(
                List.of(
                        "/usr/bin/readelf",
                        "-d",
                        root.resolve("lib/libnccl-tuner-java.so").toString()),
                Map.of(),
                false);
        assertEquals(0, elf.exit(), elf.text());
        assertTrue(elf.text().contains("(SONAME)"), elf.text());
        assertTrue(
                !elf.text().contains("(RPATH)") && !elf.text().contains("(RUNPATH)"),
                "the plugin must have no RPATH/RUNPATH (it could name libexec/fake-cuda): " + elf.text());
    }
}

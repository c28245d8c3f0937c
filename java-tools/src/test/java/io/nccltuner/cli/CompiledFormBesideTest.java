package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.PolicyYaml;
import io.nccltuner.engine.CompiledPolicy;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23 item 5: the commands that write a policy (compile, import, calibrate, report
 * --emit-policy) write its compiled form beside it, so that the plugin starts without parsing
 * YAML; the form is what the plugin builds from the YAML as written, and an edit of the YAML makes
 * the plugin parse the YAML again.
 */
class CompiledFormBesideTest {
    @TempDir
    Path tmp;

    /** The written policy's compiled form is there, current, and holds what the YAML gives. */
    static void compiledBeside(Path yaml) throws Exception {
        Path bin = CompiledPolicy.pathFor(yaml);
        assertTrue(Files.isRegularFile(bin), bin + " written");
        assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(bin)));
        assertTrue(CompiledPolicy.isCurrent(yaml), "the plugin would read " + bin + " instead of parsing the YAML");
        assertEquals(PolicyLoader.load(yaml), CompiledPolicy.load(yaml));
    }

    @Test
    void compileWritesTheCompiledFormAndAnEditMakesItStale() throws Exception {
        Path yaml = tmp.resolve("h200.yaml");
        CliRun r = CliRun.run("compile", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"), "-o", yaml.toString());
        assertEquals(0, r.exit(), r.err());
        compiledBeside(yaml);
        Policy before = PolicyLoader.load(yaml);
        Files.writeString(yaml, Files.readString(yaml).replace("name: h200", "name: edit"));
        assertFalse(CompiledPolicy.isCurrent(yaml), "stale once the YAML is edited");
        Policy after = CompiledPolicy.load(yaml);
        assertNotEquals(before.name(), after.name());
        assertEquals(PolicyLoader.load(yaml), after);
    }

    @Test
    void importWritesTheCompiledForm() throws Exception {
        Path yaml = tmp.resolve("imported.yaml");
        CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", yaml.toString());
        assertEquals(0, r.exit(), r.err());
        compiledBeside(yaml);
    }

    @Test
    void reportEmitPolicyWritesTheCompiledForm() throws Exception {
        Path yaml = tmp.resolve("promoted.yaml");
        CliRun r = CliRun.run(CanaryReportCommandTest.args(
                "--policy", CanaryReportCommandTest.res("canary-policy.yaml"), "--emit-policy", yaml.toString()));
        assertEquals(0, r.exit(), r.err());
        compiledBeside(yaml);
    }

    @Test
    void aPolicyPrintedOnStdoutLeavesNoFile() {
        CliRun r = CliRun.run("import", CliRun.fixture("example-tuner.conf"), "-o", "-");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("schema: nccl-tuner-java/v1"), r.out());
        assertFalse(Files.exists(Path.of("-")) || Files.exists(Path.of("-" + CompiledPolicy.SUFFIX)));
    }

    /** What calibrate writes (a profile with constants and a gpu match) goes through the same call. */
    @Test
    void constantsAndHardwareMatchesAreInTheCompiledForm() throws Exception {
        Policy p = PolicyLoader.parse("calibrated.yaml", """
                schema: nccl-tuner-java/v1
                name: calibrated
                profiles:
                  - name: calibrated
                    match: {nNodes: {min: 2, max: 16}, gpu: H100, computeCapability: "9.0"}
                    constants:
                      baseLatencies.RING.LL: 6.8
                      hwLatencies.NET.RING.SIMPLE: 14.25
                    rules: []
                """);
        Path yaml = tmp.resolve("calibrated.yaml");
        assertEquals(
                CompiledPolicy.pathFor(yaml),
                PolicyYaml.writeFiles(
                        yaml,
                        PolicyYaml.writeChecked(p, List.of("calibrated"), Map.of(), "x"),
                        new java.io.PrintWriter(java.io.Writer.nullWriter()),
                        "test"));
        compiledBeside(yaml);
        Policy.Profile prof = CompiledPolicy.load(yaml).profiles().getFirst();
        assertEquals("H100", prof.hardware().gpu());
        assertEquals(2, prof.constants().size());
    }
}

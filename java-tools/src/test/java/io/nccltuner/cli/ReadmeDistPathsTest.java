package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's "Trying a policy without a GPU" gives the distribution's form alone (bin/nccl-tuner,
 * examples/ files that make/dist.mk copies from tests/traces/ and the compile fixtures); the build
 * tree's form is in docs/dev/building.md, not in the README a tarball user reads; docs/compile.md
 * names input folders that exist.
 */
class ReadmeDistPathsTest {
    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));

    @Test
    void tryingWithoutAGpuStartsWithTheDistributionForm() throws Exception {
        String readme = Files.readString(REPO.resolve("README.md"));
        int at = readme.indexOf("### Trying a policy without a GPU");
        String section = readme.substring(at, readme.indexOf("\n## ", at));
        int dist = section.indexOf(
                "bin/nccl-tuner try --policy my-policy.yaml --trace examples/traces/trace_tp_infer.csv");
        assertTrue(dist > 0, section);
        assertTrue(!section.contains("build/tests/harness"), "the README names the build tree's harness: " + section);
        String dev = Files.readString(REPO.resolve("docs/dev/building.md"));
        assertTrue(
                dev.contains("build/tests/harness --plugin build/lib/libnccl-tuner-java.so --nccl-era 2.28"),
                "docs/dev/building.md gives the build tree's form");
        Matcher m = Pattern.compile("examples/(traces|measurements)/(\\S+)").matcher(section);
        int n = 0;
        while (m.find()) {
            Path inTree = m.group(1).equals("traces")
                    ? REPO.resolve("tests/traces").resolve(m.group(2))
                    : REPO.resolve("java-tools/src/test/resources/compile").resolve(m.group(2));
            assertTrue(Files.isRegularFile(inTree), m.group() + " (shipped from " + inTree + ")");
            n++;
        }
        assertEquals(4, n, section); // the trace, the sweep, and in try's line the sweep's NCCL log (--nccl-log)
        String dist2 = Files.readString(REPO.resolve("make/dist.mk"));
        assertTrue(
                dist2.contains("cp $(REPO)/tests/traces/trace_*.csv"), "dist.mk ships tests/traces as examples/traces");
    }

    @Test
    void compileDocNamesPathsThatExist() throws Exception {
        String doc = Files.readString(REPO.resolve("docs/compile.md"));
        assertTrue(!doc.contains("../shared/data"), "docs/compile.md points outside the tree");
        assertTrue(Files.isRegularFile(
                REPO.resolve("java-tools/src/test/resources/compile/h200-2rank-sweep_allreduce.rep1.csv")));
        // the file ships as examples/measurements/ (make/dist.mk); the doc, for a tarball user, names that alone
        assertTrue(doc.contains("- **Sweep format** (`examples/measurements/`): `collective,size_bytes,"), doc);
        assertTrue(!doc.contains("java-tools/src/test/resources"), "docs/compile.md names a source-tree path");
        String canary = Files.readString(REPO.resolve("docs/canary.md"));
        assertTrue(canary.contains("`ncclTunerPlugin_v3` .. `_v7`"), "docs/canary.md lists the tuner's exports");
    }
}

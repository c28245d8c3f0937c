package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first example (get a policy, try it, ship it) does something: its compile and try
 * commands run on the files they name (the distribution's examples/ are tests/traces and the
 * compile fixtures here), try's verdict is a change, not "changes nothing", and every torchrun
 * line's shape (nRanks = nnodes x nproc-per-node, nNodes = nnodes) is one the policy it ships
 * matches.
 */
@Timeout(240)
class ReadmeExampleTest {
    @TempDir
    Path tmp;

    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));

    private static String block(String readme, String heading) {
        int h = readme.indexOf(heading);
        assertTrue(h >= 0, heading);
        int a = readme.indexOf("```sh\n", h) + 6;
        return readme.substring(a, readme.indexOf("```", a)).replace("\\\n", " ");
    }

    private static List<String> words(String line) {
        List<String> w = new ArrayList<>();
        for (String x : line.trim().split("\\s+")) {
            if (x.startsWith("#")) {
                break;
            }
            w.add(x.replace("examples/traces/", REPO.resolve("tests/traces/") + "/")
                    .replace(
                            "examples/measurements/h200-2rank-sweep_allreduce.rep1.csv",
                            CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv")));
        }
        return w;
    }

    private static void assertShapeMatches(String block, Policy p) {
        Matcher m = Pattern.compile("torchrun --nnodes (\\d+) --nproc-per-node (\\d+)")
                .matcher(block);
        assertTrue(m.find(), "a torchrun line with --nnodes and --nproc-per-node: " + block);
        int nodes = Integer.parseInt(m.group(1));
        int ranks = nodes * Integer.parseInt(m.group(2));
        assertNotNull(
                p.profileFor(ranks, nodes),
                "the example's job (nRanks " + ranks + ", nNodes " + nodes + ") matches a profile of " + p.name());
    }

    @Test
    void theTaskPathRunsAndItsShapesMatch() throws Exception {
        String readme = Files.readString(REPO.resolve("README.md"));
        assertTrue(
                readme.indexOf("## From nccl-tests outputs and logs to a policy in your job")
                        < readme.indexOf("## Environment variables"),
                "the task path comes first");
        String b = block(readme, "## From nccl-tests outputs and logs to a policy in your job");
        Path yaml = tmp.resolve("my-policy.yaml");
        String compileLine = b.lines()
                .filter(l -> l.startsWith("bin/nccl-tuner compile"))
                .findFirst()
                .orElseThrow();
        List<String> compile = words(compileLine.replace("my-policy.yaml", yaml.toString()));
        CliRun c = CliRun.run(compile.subList(1, compile.size()).toArray(String[]::new));
        assertEquals(0, c.exit(), c.err());
        assertTrue(
                c.out().startsWith("summary: 5 rules from 25 measured sizes in 1 group (nRanks=2 nNodes=2): "),
                c.out());
        Policy p = PolicyLoader.load(yaml);
        assertShapeMatches(b, p);

        Path harness = REPO.resolve("build/tests/harness");
        Path plugin = REPO.resolve("build/lib/libnccl-tuner-java.so");
        Assumptions.assumeTrue(Files.isExecutable(harness) && Files.isRegularFile(plugin), "make build first");
        String tryLine = b.lines()
                .filter(l -> l.startsWith("bin/nccl-tuner try"))
                .findFirst()
                .orElseThrow();
        List<String> t = new ArrayList<>(words(tryLine.replace("my-policy.yaml", yaml.toString())));
        t.addAll(List.of("--harness", harness.toString(), "--plugin", plugin.toString()));
        CliRun r = CliRun.run(t.subList(1, t.size()).toArray(String[]::new));
        assertEquals(0, r.exit(), r.err() + r.out());
        assertTrue(r.out().contains("\ntry: the policy would change 65 of 273 calls"), r.out());
    }

    @Test
    void theTrainingJobExampleMatchesItsPolicy() throws Exception {
        String readme = Files.readString(REPO.resolve("README.md"));
        String b = block(readme, "## Using it in a training job");
        Matcher m = Pattern.compile("NCCL_TUNER_JAVA_POLICY=\\S*/(policies/\\S+\\.yaml)")
                .matcher(b);
        assertTrue(m.find(), b);
        assertShapeMatches(b, PolicyLoader.load(REPO.resolve(m.group(1))));
    }
}

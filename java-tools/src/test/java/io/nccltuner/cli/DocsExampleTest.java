package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/compile.md's worked example cannot drift: the compile of
 * examples/nccl-tests/h100-8ranks-1host_all_reduce.txt (shipped from the compile fixtures) runs as
 * the doc writes it, and every line of the output the doc pastes after it is a line the command
 * prints today (a line ending in " ..." the start of one; a "..." line stands for lines left out),
 * the summary's rule count (1) included.
 */
@Timeout(120)
class DocsExampleTest {
    @TempDir
    Path tmp;

    static final String EXAMPLE = "examples/nccl-tests/h100-8ranks-1host_all_reduce.txt";
    static final String COMMAND = "bin/nccl-tuner compile " + EXAMPLE + " -o my-h100-policy.yaml";

    /** @return the lines of the first fenced block after {@code marker} in {@code doc} */
    private static List<String> blockAfter(String doc, String marker) {
        int m = doc.indexOf(marker);
        assertTrue(m >= 0, marker);
        int a = doc.indexOf("```", m);
        a = doc.indexOf('\n', a) + 1;
        return doc.substring(a, doc.indexOf("```", a)).lines().toList();
    }

    @Test
    void compileDocsNcclInfoExamplePrintsWhatTheDocPastes() throws Exception {
        String doc = Files.readString(CliRun.REPO.resolve("docs/compile.md"));
        assertTrue(doc.contains("\n" + COMMAND + "\n"), "docs/compile.md's example block runs: " + COMMAND);
        List<String> pasted = blockAfter(doc, "What that last compile prints");
        assertEquals(
                "summary: 1 rule from 5 measured sizes in 1 group (nRanks=8 nNodes=1): 3 sizes get a rule; no rule at:",
                pasted.getFirst());

        String file = CliRun.fixture("h100-8ranks-1host_all_reduce.txt");
        Path yaml = tmp.resolve("my-h100-policy.yaml");
        CliRun r = CliRun.run("compile", file, "-o", yaml.toString());
        assertEquals(0, r.exit(), r.err());
        List<String> printed = new ArrayList<>();
        for (String s : (r.out() + r.err()).lines().toList()) {
            printed.add(s.replace(file, EXAMPLE).replace(yaml.toString(), "my-h100-policy.yaml"));
        }
        assertEquals(pasted.getFirst(), printed.getFirst());
        int checked = 0;
        for (String line : pasted) {
            if (line.strip().equals("...")) {
                continue;
            }
            if (line.endsWith(" ...")) {
                String start = line.substring(0, line.length() - 3);
                assertTrue(
                        printed.stream().anyMatch(p -> p.startsWith(start)),
                        "docs/compile.md pastes the start of a line compile no longer prints: " + line);
            } else {
                assertTrue(printed.contains(line), "docs/compile.md pastes a line compile no longer prints: " + line);
            }
            checked++;
        }
        assertTrue(printed.contains("rules: 1"), String.join("\n", printed));
        assertTrue(pasted.contains("rules: 1"), String.join("\n", pasted));
        assertTrue(checked >= 5, "lines checked: " + checked);
        assertTrue(Files.readString(yaml).contains("RING"), Files.readString(yaml));
    }
}

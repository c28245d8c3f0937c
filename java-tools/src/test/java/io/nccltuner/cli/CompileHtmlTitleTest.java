package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * compile --html titles the page by what it shows (issue 21: the collective and communicator shape,
 * the machine where the inputs name one; the count of groups where there are several), not by the
 * file -o writes; the line under the heading names the policy and its inputs.
 */
@Timeout(120)
class CompileHtmlTitleTest {
    @TempDir
    Path tmp;

    @Test
    void pageIsTitledByWhatItShows() throws Exception {
        Path html = tmp.resolve("c.html");
        CliRun r =
                CliRun.run("compile", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"), "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        assertTrue(page.contains("<title>nccl-tuner compile: AllReduce, nRanks 2, nNodes 2</title>"), head(page));
        assertTrue(
                page.contains("<h1>nccl-tuner compile: AllReduce, nRanks 2, nNodes 2</h1>\n<p>Policy compiled from "
                        + "h200-2rank-sweep_allreduce.rep1.csv. Compiled by nccl-tuner compile: threshold 5.00%"),
                head(page));
        CliRun named = CliRun.run(
                "compile",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "-o",
                tmp.resolve("mine.yaml").toString(),
                "--html",
                html.toString());
        assertEquals(0, named.exit(), named.err());
        String mine = Files.readString(html);
        assertTrue(mine.contains("<title>nccl-tuner compile: AllReduce, nRanks 2, nNodes 2</title>"), head(mine));
        assertTrue(
                mine.contains("<p>Policy mine.yaml, compiled from h200-2rank-sweep_allreduce.rep1.csv. "), head(mine));
    }

    /** nccl-tests output names the GPU and NCCL's version: the title says them; two machines, the count. */
    @Test
    void pageNamesTheMachineOrTheGroupsCount() throws Exception {
        Path html = tmp.resolve("c.html");
        String h100 = CliRun.fixture("h100-8ranks-1host_all_reduce.txt");
        CliRun r = CliRun.run("compile", h100, "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        String what = "nccl-tuner compile: AllReduce, nRanks 8, nNodes 1 (H100 80GB HBM3, NCCL 2.28.9)";
        assertTrue(page.contains("<title>" + what + "</title>"), head(page));
        assertTrue(page.contains("<h1>" + what + "</h1>"), head(page));

        CliRun two = CliRun.run(
                "compile", h100, CliRun.fixture("gh200-8ranks-2hosts_all_reduce.txt"), "--html", html.toString());
        assertEquals(0, two.exit(), two.err());
        String both = Files.readString(html);
        assertTrue(both.contains("<title>nccl-tuner compile: 2 groups (AllReduce; 2 machines)</title>"), head(both));
    }

    private static String head(String page) {
        return page.substring(0, Math.min(1200, page.length()));
    }
}

package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** compile --html without -o titles the page by its inputs, not "Policy compiled". */
@Timeout(120)
class CompileHtmlTitleTest {
    @TempDir
    Path tmp;

    @Test
    void pageWithoutOutputIsTitledByItsInputs() throws Exception {
        Path html = tmp.resolve("c.html");
        CliRun r =
                CliRun.run("compile", CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"), "--html", html.toString());
        assertEquals(0, r.exit(), r.err());
        String page = Files.readString(html);
        assertTrue(
                page.contains("<title>compiled from h200-2rank-sweep_allreduce.rep1.csv - nccl-tuner compile</title>"),
                page.substring(0, 300));
        assertTrue(
                page.contains("<h1>Policy compiled from h200-2rank-sweep_allreduce.rep1.csv</h1>"),
                page.substring(0, 800));
        CliRun named = CliRun.run(
                "compile",
                CliRun.fixture("h200-2rank-sweep_allreduce.rep1.csv"),
                "-o",
                tmp.resolve("mine.yaml").toString(),
                "--html",
                html.toString());
        assertEquals(0, named.exit(), named.err());
        String mine = Files.readString(html);
        assertTrue(
                mine.contains(
                        "<title>mine.yaml, compiled from h200-2rank-sweep_allreduce.rep1.csv - nccl-tuner compile</title>"),
                mine.substring(0, 300));
    }
}

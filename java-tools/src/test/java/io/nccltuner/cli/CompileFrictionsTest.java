package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 of nccl-tuner-java (a newcomer with nccl-tests outputs and NCCL logs): what {@code
 * compile} did silently or cryptically, and what it says now. The fixtures under {@code
 * compile/frictions/} are written for these tests from the formats: two 8-rank, 2-node nccl-tests
 * outputs of an H200 machine (NCCL 2.28.9) and an H100 one (NCCL 2.27.3), each an unforced run and
 * one forced to RING/LL by NCCL's {@code set by environment} lines; NCCL INFO logs of the H100 run
 * (2.27.3, nRanks 8 nNodes 2) and of an A100 run (2.27.7, nRanks 2 nNodes 1); a getCollInfo trace
 * of a 2-rank, 2-node job; an nccl-tests output with a row cut by a glued NCCL INFO line and one cut
 * by another print; and one with a row after its table's footer.
 */
@Timeout(120)
class CompileFrictionsTest {
    @TempDir
    Path tmp;

    static String fx(String name) {
        return CliRun.fixture("frictions/" + name);
    }

    static final String H200 = fx("h200-8ranks-2nodes_all_reduce.txt");
    static final String H100 = fx("h100-8ranks-2nodes_all_reduce.txt");

    /** Item 1: the summary's first line names each machine the shape was compiled apart by. */
    @Test
    void summaryNamesTheMachinesItCompiledApart() throws Exception {
        Path yaml = tmp.resolve("two.yaml");
        CliRun r = CliRun.run("compile", H200, H100, "-o", yaml.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "summary: 2 rules from 6 measured sizes in 2 groups, compiled apart by machine (NVIDIA H100 80GB HBM3 "
                        + "NCCL 2.27.3 at nRanks=8 nNodes=2; NVIDIA H200 NCCL 2.28.9 at nRanks=8 nNodes=2): 3 sizes get "
                        + "a rule; no rule at:",
                r.out().lines().findFirst().orElseThrow());
        // the two profiles the summary explains
        Policy p = PolicyLoader.load(yaml);
        assertEquals(
                java.util.List.of("nRanks8-nNodes2-H100-80GB-HBM3-nccl2.27.3", "nRanks8-nNodes2-H200-nccl2.28.9"),
                p.profiles().stream().map(Policy.Profile::name).toList());
        // one machine: the shape alone, as before
        CliRun one = CliRun.run("compile", H200, "--summary");
        assertEquals(
                "summary: 1 rule from 3 measured sizes in 1 group (nRanks=8 nNodes=2): 2 sizes get a rule; no rule at:",
                one.out().lines().findFirst().orElseThrow());
    }

    /**
     * Item 2: a log of another machine (an NCCL release no measurement has) or of another shape is
     * not used, with one warning line naming both; a log of one of the measured machines is used for
     * that machine's group only.
     */
    @Test
    void ncclLogOfAnotherMachineOrShapeIsNotUsedAndSaysSo() throws Exception {
        String a100 = fx("nccl-2.27.7_2ranks-1node_tuning.log");
        CliRun shape = CliRun.run("compile", H200, "--nccl-log", a100, "--summary");
        assertEquals(0, shape.exit(), shape.err());
        String warning = "nccl-tuner compile: warning: --nccl-log " + a100
                + ": its run (NCCL 2.27.7, nRanks=2 nNodes=1) is another machine and communicator shape than the "
                + "measurements' (NVIDIA H200 NCCL 2.28.9 at nRanks=8 nNodes=2): not used, since its selection lines "
                + "name NCCL's picks and its cost table the candidates NCCL offers on that run, not on the measured "
                + "ones; give the log of the measured runs (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)\n";
        assertEquals(warning, shape.err()); // its unforced run is NCCL's pick: no note
        assertTrue(shape.out().contains("\n  " + warning.substring("nccl-tuner compile: warning: ".length())));

        String h100Log = fx("nccl-2.27.3_8ranks-2nodes_tuning.log");
        CliRun release = CliRun.run("compile", H200, "--nccl-log", h100Log);
        assertEquals(0, release.exit(), release.err());
        assertEquals(
                "nccl-tuner compile: warning: --nccl-log " + h100Log
                        + ": its run (NCCL 2.27.3, nRanks=8 nNodes=2) is another machine than the measurements' (NVIDIA "
                        + "H200 NCCL 2.28.9 at nRanks=8 nNodes=2): not used, since its selection lines name NCCL's "
                        + "picks and its cost table the candidates NCCL offers on that run, not on the measured ones; "
                        + "give the log of the measured runs (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)\n",
                release.err());
        assertFalse(release.out().contains("auto=RING/LL"), release.out());

        // both machines measured: the H100 log's picks name NCCL's pick in the H100 group, not the H200 one
        CliRun both = CliRun.run("compile", H200, H100, "--nccl-log", h100Log, "--verbose"); // the H100 group's table
        assertEquals(0, both.exit(), both.err());
        assertEquals("", both.err());
        String out = both.out().replaceAll(" +", " ");
        int h100 = out.indexOf("AllReduce, nRanks 8, nNodes 2, numPipeOps 1, NVIDIA H100 80GB HBM3, NCCL 2.27.3:");
        int h200 = out.indexOf("AllReduce, nRanks 8, nNodes 2, numPipeOps 1, NVIDIA H200, NCCL 2.28.9:");
        assertTrue(h100 >= 0 && h200 > h100, out);
        assertTrue(out.substring(h100, h200).contains("\n1 MiB .. 2 MiB auto=RING/LL 70.000 NCCL 70.000"), out);
        assertTrue(out.substring(h200).contains("\n1 MiB .. 2 MiB auto 60.000 RING/LL 40.000 RING/LL 50.00%"), out);
    }

    /** Item 3: a workload of another communicator shape has its weights not applied, and says so. */
    @Test
    void workloadOfAnotherShapeSaysItsWeightsAreNotApplied() throws Exception {
        String trace = fx("trace_allreduce_2ranks-2nodes.csv");
        CliRun r = CliRun.run("compile", H200, "--workload", trace, "--summary");
        assertEquals(0, r.exit(), r.err());
        String w = "--workload " + trace
                + ": its 4 calls (AllReduce at nRanks=2 nNodes=2: 4) match no measured group (AllReduce at nRanks=8 "
                + "nNodes=2): its weights are not applied, no call of it is priced";
        // once: among the report's warnings, not again on stderr (the ninth walk)
        assertEquals("", r.err());
        assertTrue(r.out().contains("\n  " + w + "\n"), r.out());
        assertEquals(1, r.out().split(java.util.regex.Pattern.quote(w), -1).length - 1, r.out());

        Path mixed = tmp.resolve("shadow.jsonl");
        Files.writeString(
                mixed,
                "{\"collective\":\"AllReduce\",\"nBytes\":1048576,\"nRanks\":8,\"nNodes\":2,\"count\":10}\n"
                        + "{\"collective\":\"AllReduce\",\"nBytes\":1048576,\"nRanks\":16,\"nNodes\":2,\"count\":3}\n");
        CliRun some = CliRun.run("compile", H200, "--workload", mixed.toString(), "--summary");
        assertEquals(0, some.exit(), some.err());
        assertEquals("", some.err());
        assertTrue(
                some.out()
                        .contains("\n  --workload " + mixed
                                + ": 3 of its 13 calls (AllReduce at nRanks=16 nNodes=2: 3) match no measured group "
                                + "(AllReduce at nRanks=8 nNodes=2): those 3 are not weighted (another communicator "
                                + "shape), the other 10 are where their collective was measured\n"),
                some.out());
    }

    /**
     * Item 4: a row with an NCCL INFO line glued after a space (nccl-tests' 1 MiB row, cut after its
     * in-place time) used to be read as an NCCL line and vanish; now it and a row cut by another
     * print are skipped with a warning each naming file:line, and counted in the summary; {@code
     * --strict} refuses the file at the first.
     */
    @Test
    void aMangledRowIsSkippedWithAWarningAndCounted() throws Exception {
        String f = fx("glued-info-row_all_reduce.txt");
        CliRun r = CliRun.run("compile", f, "--summary");
        assertEquals(0, r.exit(), r.err());
        String header = "row has 10 fields but the column header names 13 (size count type redop root time algbw "
                + "busbw #wrong time algbw busbw #wrong); the row looks truncated or mangled";
        assertEquals(
                "nccl-tuner compile: warning: skipped 2 mangled rows (listed under refused rows in the report); "
                        + "--strict refuses the file instead\n",
                r.err());
        assertTrue(
                r.out()
                        .contains("\n  " + f + ":9: " + header
                                + " (an NCCL line glued to it on line 9 cuts it short, and line 10 is the next row); "
                                + "row skipped (--strict refuses the file)\n  " + f + ":11: "
                                + header.replace("row has 10", "row has 12")
                                + "; row skipped (--strict refuses the file)\n"),
                r.out());
        // 2, 8 and 16 MiB measured; the 1 MiB and 4 MiB rows are not
        assertTrue(
                r.out().contains("\nsummary: 0 rules from 3 measured sizes in 1 group (nRanks=2 nNodes=1)"), r.out());
        // counted on stderr (above), listed under refused rows; the summary points at the list
        assertFalse(r.out().contains("mangled rows"), r.out());
        assertTrue(r.out().contains("\nbelow: 2 refused rows"), r.out());

        CliRun strict = CliRun.run("compile", f, "--strict");
        assertEquals(1, strict.exit(), strict.err());
        assertEquals(
                "nccl-tuner compile: " + f + ":9: " + header
                        + " (an NCCL line glued to it on line 9 cuts it short, and line 10 is the next row)\n",
                strict.err());

        String after = fx("stray-row-after-footer_all_reduce.txt");
        CliRun stray = CliRun.run("compile", after, "--summary");
        assertEquals(0, stray.exit(), stray.err());
        assertTrue(
                stray.out()
                        .contains(
                                "\n  " + after + ":13: 1 line looks like a size-table row (size, count, type, ...) but "
                                        + "stands where no table is open (before a '#  size  count  type ...' column header, or "
                                        + "after the table's '# Out of bounds' / '# Avg bus bandwidth' footer): not read\n"),
                stray.out());
    }

    /**
     * Item 5: a plain folder of nccl-tests outputs (not a sweep folder) is read, its files in name
     * order, and a note names what was read and what was skipped, with why.
     */
    @Test
    void aPlainFolderIsReadAndTheNoteNamesWhatWasSkipped() throws Exception {
        Path d = tmp.resolve("runs");
        Files.createDirectories(d.resolve("old"));
        Files.copy(Path.of(H200), d.resolve("b_h200.txt"));
        Files.copy(Path.of(fx("glued-info-row_all_reduce.txt")), d.resolve("a_glued_all_reduce.log"));
        Files.copy(Path.of(fx("nccl-2.27.3_8ranks-2nodes_tuning.log")), d.resolve("rank0.log"));
        Files.writeString(d.resolve("README.md"), "runs of 2026-11-30\n");
        Files.createFile(d.resolve("c.out"));
        CliRun r = CliRun.run("compile", d.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        // the note, the count of the glued file's mangled rows (lines 9 and 11, listed in the report),
        // then the note naming the glued file's unforced run, the only run of its group (b_h200.txt's
        // stands beside a forced run of its own group: NCCL's pick, not noted)
        assertEquals(3, r.err().lines().count(), r.err());
        assertTrue(
                r.err()
                        .endsWith("\nnccl-tuner compile: warning: skipped 2 mangled rows (listed under refused rows in "
                                + "the report); --strict refuses the file instead\n"
                                + CliRun.unforcedNote(d.resolve("a_glued_all_reduce.log") + ":7")),
                r.err());
        assertTrue(r.out().contains("\n  " + d.resolve("a_glued_all_reduce.log") + ":9: row has 10 fields"), r.out());
        assertTrue(
                r.err()
                        .startsWith("nccl-tuner compile: note: " + d
                                + ": not a `nccl-tuner sweep` folder (no manifest.json): read 2 of 6 entries in name order, "
                                + "not its subfolders: a_glued_all_reduce.log, b_h200.txt; skipped README.md (not *.txt, "
                                + "*.log, *.out, *.csv), c.out (empty (0 bytes), as an interrupted run leaves its output; "
                                + "nothing to read), old/ (a folder: subfolders are not read), rank0.log (an NCCL INFO log "
                                + "without nccl-tests size tables ('#  size  count  type ...' and rows), not measurements; "
                                + "--nccl-log FILE reads its selection lines as NCCL's own picks)\n"),
                r.err());
        assertTrue(
                r.out()
                        .startsWith("summary: 1 rule from 6 measured sizes in 2 groups (nRanks=2 nNodes=1; nRanks=8 "
                                + "nNodes=2)"),
                r.out());

        Path none = tmp.resolve("empty-dir");
        Files.createDirectories(none);
        CliRun e = CliRun.run("compile", none.toString());
        assertEquals(1, e.exit(), e.err());
        assertEquals(
                "nccl-tuner compile: " + none + ": no *.txt, *.log, *.out or *.csv file in this folder (and no "
                        + "manifest.json: not a `nccl-tuner sweep` folder); compile reads nccl-tests outputs, sweep CSVs "
                        + "or a sweep folder\n",
                e.err());
    }

    /**
     * Item 6: files of another kind than measurements say in one line what they look like and what
     * compile reads (a usage error, exit 2: the command line names the wrong file); an empty file is
     * an input error (exit 1).
     */
    @Test
    void filesOfAnotherKindSayWhatTheyAreAndWhatCompileReads() throws Exception {
        String reads = ", not measurements; compile reads nccl-tests outputs, sweep CSVs or a sweep folder";
        Path yaml = tmp.resolve("x.yaml");
        Files.writeString(yaml, "schema: nccl-tuner-java/v1\nname: x\nprofiles: []\n");
        Path jsonl = tmp.resolve("decisions.jsonl");
        Files.writeString(
                jsonl,
                "{\"type\":\"comm\",\"nRanks\":2,\"nNodes\":2}\n"
                        + "{\"type\":\"aggregate\",\"collective\":\"AllReduce\",\"nBytes\":1024,\"count\":3}\n");
        String trace = fx("trace_allreduce_2ranks-2nodes.csv");
        String log = fx("nccl-2.27.3_8ranks-2nodes_tuning.log");
        Path bin = tmp.resolve("core.bin");
        Files.write(bin, new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0});
        String[][] cases = {
            {yaml.toString(), "a policy (YAML)", " (validate, show and try read policies)"},
            {
                jsonl.toString(),
                "a decision log (JSON lines, NCCL_TUNER_JAVA_LOG)",
                " (--workload FILE weights regret by the calls of a decision or shadow-mode log)"
            },
            {
                trace,
                "a getCollInfo trace (CSV, NCCL_TUNER_JAVA_RECORD)",
                " (--workload FILE weights regret by its calls)"
            },
            {
                log,
                "an NCCL INFO log without nccl-tests size tables ('#  size  count  type ...' and rows)",
                " (--nccl-log FILE reads its selection lines as NCCL's own picks)"
            },
            {bin.toString(), "binary data (a NUL byte at offset 7)", ""}
        };
        for (String[] c : cases) {
            CliRun r = CliRun.run("compile", c[0]);
            assertEquals(2, r.exit(), r.err());
            assertEquals(
                    "nccl-tuner compile: " + c[0] + ": this is " + c[1] + reads + c[2] + "\n"
                            + "see 'nccl-tuner compile --help'\n",
                    r.err());
        }
        // the same through --in FILE
        CliRun in = CliRun.run("compile", "--in", trace, "--algo", "RING", "--proto", "LL");
        assertEquals(2, in.exit(), in.err());
        assertTrue(in.err().startsWith("nccl-tuner compile: " + trace + ": this is a getCollInfo trace"), in.err());

        Path empty = tmp.resolve("all_reduce.txt");
        Files.writeString(empty, "\n");
        CliRun e = CliRun.run("compile", empty.toString());
        assertEquals(1, e.exit(), e.err());
        assertEquals(
                "nccl-tuner compile: " + empty + ": empty (no text), as an interrupted run leaves its output: no "
                        + "measurements in it; compile reads nccl-tests outputs, sweep CSVs or a sweep folder\n",
                e.err());
    }
}

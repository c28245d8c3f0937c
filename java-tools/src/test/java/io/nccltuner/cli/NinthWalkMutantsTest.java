package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Behaviours of the ninth walk's changes that a deliberate bug in them left unseen by every other
 * test (a mutation pass over the session's diff): each test here fails with that bug in place.
 */
@Timeout(120)
class NinthWalkMutantsTest {
    @TempDir
    Path tmp;

    /**
     * A JSON rule with {@code "max_bytes"} alone (no {@code "min_bytes"}, no {@code "bytes"}) gets
     * the advice in its own key, not as a {@code "bytes"} interval it does not use.
     */
    @Test
    void aJsonRuleWithMaxBytesAloneIsAdvisedInThatKey() throws Exception {
        Path f = CliRun.write(
                tmp,
                "ncclx.json",
                "{\"rules\": [\n {\"collective\": \"allreduce\", \"max_bytes\": 65536, \"algorithm\": \"ring\","
                        + " \"protocol\": \"ll\"}\n]}\n");
        CliRun imp = CliRun.run(
                "import", f.toString(), "-o", tmp.resolve("ncclx.yaml").toString());
        assertEquals(0, imp.exit(), imp.err());
        List<String> advice = imp.err()
                .lines()
                .filter(l -> l.contains("; write "))
                .map(l -> l.substring(l.indexOf("; write ") + 2))
                .toList();
        assertEquals(
                List.of("write \"max_bytes\": 65535 to end it at 64 KiB, but the 65536 B calls then leave it (as is,"
                        + " they stay on this line, as in NCCL)"),
                advice,
                imp.err());
    }

    /**
     * {@code --allow-empty} writes the empty policy only with {@code -o}: without it, compile's
     * first line is still the verdict, as without {@code --allow-empty}.
     */
    @Test
    void allowEmptyWithoutMinusOKeepsTheVerdictLine() {
        CliRun r = CliRun.run(
                "compile",
                CliRun.fixture("plain-all_reduce_auto.txt"),
                CliRun.fixture("plain-all_reduce_ring_ll.txt"),
                "--allow-empty",
                "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .startsWith(
                                "policy not written: no input measured a forced candidate (every run counts as "
                                        + "NCCL's own pick), so the policy would have no rules. Say what each file forced: "
                                        + "--in FILE --algo X --proto Y (or give NCCL_DEBUG=INFO output, whose 'set by "
                                        + "environment' lines say it); --allow-empty writes the empty policy\nsummary: 0 rules"),
                r.out());
        assertEquals("", r.err());
    }

    /**
     * A file of one prefixed line ({@code 1 line carries a launcher prefix}) folds with a file of
     * 13 ({@code 13 lines carry ...}): the verb is one for the count's sake, {@code carries} as
     * {@code carry}.
     */
    @Test
    void oneLineCarriesFoldsWithLinesCarry() throws Exception {
        String one = Files.readString(Path.of(CliRun.fixture("inputs/mpirun-tag-output_all_reduce.txt")));
        List<String> lines = one.lines().toList();
        StringBuilder single = new StringBuilder(lines.get(0) + "\n" + lines.get(1) + "\n");
        lines.subList(2, lines.size())
                .forEach(l -> single.append(l.replace("[1,0]<stdout>:", "").replace("[1,1]<stderr>:", ""))
                        .append('\n'));
        Path a = CliRun.write(tmp, "a_all_reduce.txt", single.toString());
        Path b = CliRun.write(tmp, "b_all_reduce.txt", one.replace("    30.00   34.95", "    30.10   34.84"));
        CliRun r = CliRun.run("compile", a.toString(), b.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .contains("\n  14 lines in 2 files carry a launcher prefix (mpirun --tag-output "
                                + "'[1,0]<stdout>:'); read without it (" + a + ": 1, "
                                + b + ": 13)\n"),
                r.out());
    }

    /**
     * Under the "NCCL's own pick never measured" verdict, a size that lacks only a forced
     * candidate is not what the first line is about: its no-rule line does not point there.
     */
    @Test
    void aSizeWithoutACandidateUnderTheNcclPickVerdictIsNotPointedAtTheFirstLine() throws Exception {
        Path csv = CliRun.write(
                tmp,
                "mix_perf.csv",
                Files.readString(Path.of(CliRun.fixture("inputs/optimize-config-no-auto_perf.csv")))
                        + "allreduce,2097152,auto,auto,-1,1,8,-1,-1,0.5,200.0,30.0\n");
        CliRun r = CliRun.run("compile", csv.toString(), "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(
                r.out()
                        .contains(
                                "\nsummary: 0 rules from 5 measured sizes in 2 groups (AllGather and AllReduce at nRanks=8 nNodes=1): 0 sizes "
                                        + "get a rule; no rule at:\n  4 sizes: NCCL's own pick not measured (see the first "
                                        + "line)\n  1 size: no forced candidate measured\ncollect next:\n"),
                r.out());
    }
}

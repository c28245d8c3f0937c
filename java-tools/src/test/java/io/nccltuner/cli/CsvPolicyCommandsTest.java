package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 item 5: NCCL's example-tuner CSV (the file the plugin reads from NCCL_TUNER_CONFIG_FILE)
 * is read by every command that takes a policy, its lines are named in findings (also after
 * {@code import}), and an NVIDIA-style boundary says what to write. Fixture:
 * src/test/resources/compile/nvidia-boundaries.conf (lines 3, 4: 0..65536 then 65537..; line 6:
 * AllGather NVLS; line 8: ReduceScatter TREE, which NCCL never offers).
 */
class CsvPolicyCommandsTest {
    @TempDir
    Path tmp;

    static final String F = CliRun.fixture("nvidia-boundaries.conf");
    static final String MAX_WARNING =
            F + ":3: bytes 0..65536 (inclusive) is not on the size grid; rounded to [0 B, 80 KiB): "
                    + "sizes 65537..81919 B follow this line too; write max_bytes 65535 to end it at 64 KiB, but the 65536 B calls then leave it (as is, "
                    + "they stay on this line, as in NCCL)";
    static final String MIN_WARNING = F + ":4: bytes 65537..4294967295 (inclusive) is not on the size grid; rounded to "
            + "[80 KiB, 4 GiB): sizes 65537..81919 B no longer follow this line; write min_bytes 65536 to start it at 64 KiB, "
            + "but the 65536 B calls then join it (as is, they stay off this line, as in NCCL)";

    @Test
    void validateReadsTheCsvAndNamesItsLines() {
        CliRun r = CliRun.run("validate", F);
        assertEquals(1, r.exit(), r.out() + r.err()); // a line NCCL never offers is an error, as in YAML
        String o = r.out();
        assertTrue(
                o.startsWith(
                        F + ": NCCL example-tuner CSV (read as the plugin reads NCCL_TUNER_CONFIG_FILE), 2 warnings:\n"
                                + "  warning: " + MAX_WARNING + "\n  warning: " + MIN_WARNING + "\n"),
                o);
        assertTrue(
                o.contains("\nerror: " + F + ":8 (ReduceScatter [0 B, inf)): can never apply: NCCL offers none of its "
                        + "candidates for ReduceScatter; NCCL's example plugin passes over such a line silently (NCCL picks"
                        + " there): delete the line, or import the file (import leaves it out)\n"),
                o);
        // the result counts the CSV's 2 warnings too (it said "1 warning" under "2 warnings:")
        assertTrue(o.endsWith("result: FAILED (1 error, 3 warnings: 2 from reading the CSV, 1 of the policy)\n"), o);
    }

    @Test
    void validateOfTheImportedYamlNamesTheCsvLine() throws Exception {
        Path csv = tmp.resolve("fallback.conf");
        java.nio.file.Files.writeString(
                csv, "reducescatter,0,-1,tree,simple,-1,-1,-1\nreducescatter,0,-1,ring,simple,-1,-1,-1\n");
        Path y = tmp.resolve("imported.yaml");
        assertEquals(0, CliRun.run("import", csv.toString(), "-o", y.toString()).exit());
        CliRun r = CliRun.run("validate", y.toString());
        assertEquals(0, r.exit(), r.out());
        assertTrue(
                r.out()
                        .contains("\nwarning: " + y + ":13:13: profiles[0].rules[0] from " + csv
                                + ":1,2 (ReduceScatter [0 B, inf))" + ".candidates[0]: TREE/SIMPLE is never offered: "),
                r.out());
    }

    @Test
    void aRefusedCsvLineIsNamed() throws Exception {
        Path bad = tmp.resolve("nccl_tuner.conf");
        java.nio.file.Files.writeString(
                bad, "allreduce,0,65535,ring,ll,-1,-1,-1\nallreduce,65536,-1,rnig,ll,-1,-1,-1\n");
        CliRun r = CliRun.run("validate", bad.toString());
        assertEquals(1, r.exit());
        assertEquals(
                bad + ": NCCL example-tuner CSV: refused, 1 problem:\n  " + bad
                        + ":2: unknown algorithm 'rnig' (NCCL's example "
                        + "plugin would silently use 'ring'); did you mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat\n"
                        + "result: FAILED (the plugin would change nothing and log this line)\n",
                r.out());
        CliRun replay = CliRun.run("replay", "--trace", CliRun.trace("trace_fsdp.csv"), "--policy", bad.toString());
        assertEquals(1, replay.exit());
        assertEquals(
                "nccl-tuner replay: " + bad + ":2: unknown algorithm 'rnig' (NCCL's example plugin would silently use "
                        + "'ring'); did you mean 'ring'? use one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat\n",
                replay.err());
    }

    @Test
    void replayAndExplainTakeTheCsv() {
        CliRun r = CliRun.run("replay", "--trace", CliRun.trace("trace_fsdp.csv"), "--policy", F);
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.err().contains("warning: " + MAX_WARNING + "\n"), r.err());
        assertTrue(r.out().contains("policy nvidia-boundaries (" + F + ", mode enforce in the file)"), r.out());
        CliRun e =
                CliRun.run("explain", "--log", CliRun.trace("nccl_sweep.rank0.log"), "--policy", F, "--sizes", "1MiB");
        assertEquals(0, e.exit(), e.err());
        assertTrue(
                e.out().contains("Policy nvidia-boundaries (" + F + ", mode enforce in the file), run in enforce mode"),
                e.out());
    }
}

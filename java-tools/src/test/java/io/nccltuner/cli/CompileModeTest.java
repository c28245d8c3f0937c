package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Mode;
import io.nccltuner.policy.PolicyLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, point 10: compile's policy starts in shadow (the product's flow: shadow, then canary,
 * then enforce), {@code --mode shadow|canary|enforce|off} says otherwise, and compile's last line
 * says the mode and how to switch. Before, compile wrote {@code mode: enforce} by default and took
 * no {@code canary}.
 */
@Timeout(120)
class CompileModeTest {
    @TempDir
    Path tmp;

    /** NCCL's own run and one forced to RING/LL128 on 8 H100s: 1 rule. */
    private static final String H100 = CliRun.fixture("h100-8ranks-1host_all_reduce.txt");

    private static final String SHADOW_LINE = "mode: shadow (the plugin logs what the policy would change and changes "
            + "nothing); when its logs agree, run it with NCCL_TUNER_JAVA_MODE=canary, then enforce, or compile with "
            + "--mode enforce (docs/canary.md)\n";

    private static final String ENFORCE_LINE = "mode: enforce (the plugin applies the policy's picks); "
            + "NCCL_TUNER_JAVA_MODE=shadow in the job, or compile with --mode shadow, only logs them\n";

    private static final String CANARY_LINE = "mode: canary (the policy's picks on a fraction of the calls each rule "
            + "covers, NCCL_TUNER_JAVA_CANARY, default 0.1; NCCL's on the rest); when `nccl-tuner report` on its "
            + "logs says so, run it with NCCL_TUNER_JAVA_MODE=enforce, or compile with --mode enforce "
            + "(docs/canary.md)\n";

    private static final String OFF_LINE = "mode: off (the plugin loads and checks the policy and changes nothing); "
            + "NCCL_TUNER_JAVA_MODE=shadow or enforce in the job, or compile with --mode shadow or enforce, runs it\n";

    @Test
    void theDefaultPolicyIsShadowAndTheLastLineSaysHowToSwitch() throws Exception {
        Path yaml = tmp.resolve("p.yaml");
        CliRun r = CliRun.run("compile", H100, "-o", yaml.toString(), "--summary");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().endsWith("\npolicy: " + yaml + " (1 rule)\n" + SHADOW_LINE), r.out());
        assertTrue(Files.readString(yaml).contains("\nmode: shadow\n"), Files.readString(yaml));
        assertEquals(Mode.SHADOW, PolicyLoader.load(yaml).mode());
    }

    @Test
    void eachModeIsWrittenAndSaid() throws Exception {
        String[][] cases = {
            {"enforce", ENFORCE_LINE}, {"canary", CANARY_LINE}, {"off", OFF_LINE}, {"SHADOW", SHADOW_LINE}
        };
        for (String[] c : cases) {
            Path yaml = tmp.resolve(c[0] + ".yaml");
            CliRun r = CliRun.run("compile", H100, "-o", yaml.toString(), "--summary", "--mode", c[0]);
            assertEquals(0, r.exit(), r.out() + r.err());
            assertTrue(r.out().endsWith("\npolicy: " + yaml + " (1 rule)\n" + c[1]), r.out());
            assertEquals(Mode.parse(c[0]), PolicyLoader.load(yaml).mode());
        }
    }

    /** With -o - stdout is the YAML alone; the mode line ends the report on stderr. */
    @Test
    void minusOKeepsTheModeLineOnTheReport() {
        CliRun r = CliRun.run("compile", H100, "-o", "-", "--summary");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\nmode: shadow\n"), r.out());
        // the report on stderr, its mode line last (no note: the unforced run is NCCL's pick beside a forced one)
        assertTrue(r.err().endsWith("\npolicy: stdout (1 rule)\n" + SHADOW_LINE), r.err());
    }

    @Test
    void anUnknownModeIsAUsageErrorNamingTheFour() {
        CliRun r = CliRun.run("compile", H100, "--mode", "enforced");
        assertEquals(2, r.exit(), r.out() + r.err());
        assertEquals(
                "nccl-tuner compile: --mode: 'enforced' is not shadow, canary, enforce or off\n"
                        + "see 'nccl-tuner compile --help'\n",
                r.err());
    }
}

package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.compile.Measurement;
import io.nccltuner.model.NcclEra;
import io.nccltuner.policy.Signature;
import io.nccltuner.report.UnchangedHits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cases of issue 21's newcomer-path changes that the first tests left open (found by deliberate
 * bugs: a folder's refused file, --strict in a folder, counts of one, option words, the hardware
 * try presents). Fixtures are those of {@code compile/frictions/} or written here from the formats.
 */
@Timeout(120)
class NewcomerMutantsTest {
    @TempDir
    Path tmp;

    static final String H200 = CompileFrictionsTest.H200;
    static final String H100 = CompileFrictionsTest.H100;

    /** A folder with one nccl-tests output and one whose header has no size table. */
    private Path folderWithARefusedFile() throws Exception {
        Path d = tmp.resolve("runs");
        Files.createDirectories(d);
        Files.copy(Path.of(H200), d.resolve("b_h200.txt"));
        Files.writeString(
                d.resolve("a_cut.txt"),
                "# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1"
                        + " validation: 1 graph: 0\n#\n# Using devices\n");
        return d;
    }

    @Test
    void aFolderNamesTheFileItsParsersRefuseAndStrictRefusesTheCompileThere() throws Exception {
        Path d = folderWithARefusedFile();
        String why = d.resolve("a_cut.txt") + ": no nccl-tests size table found (a '#  size  count  type ...' header "
                + "followed by rows); is this nccl-tests output?";
        CliRun r = CliRun.run("compile", d.toString(), "--summary");
        assertEquals(0, r.exit(), r.err());
        assertEquals(
                "nccl-tuner compile: warning: " + why + "; file skipped, the folder's other files are read\n"
                        + "nccl-tuner compile: note: " + d + ": not a `nccl-tuner sweep` folder (no manifest.json): "
                        + "read 1 of 2 entries in name order, not its subfolders: b_h200.txt; skipped a_cut.txt "
                        + "(refused: see its warning)\n",
                r.err());

        CliRun strict = CliRun.run(
                "compile", d.toString(), "--strict", "-o", tmp.resolve("p.yaml").toString());
        assertEquals(1, strict.exit(), strict.err());
        assertEquals("nccl-tuner compile: " + why + "\n", strict.err());
        assertTrue(Files.notExists(tmp.resolve("p.yaml")));
    }

    /** A short option with its value glued on, or a value that starts with '-', is no mistyped option. */
    @Test
    void optionValuesAreNotTakenForMistypedOptions() {
        for (String[] args : new String[][] {{"sweep", "-b1K"}, {"sweep", "--datatype", "-x"}}) {
            CliRun r = CliRun.run(args);
            assertEquals(2, r.exit(), r.err());
            assertEquals(
                    "nccl-tuner sweep: Missing required option: '--output=DIR'\nsee 'nccl-tuner sweep --help'\n",
                    r.err(),
                    String.join(" ", args));
        }
        // after a short option with its value glued on, the next word is read as an option again
        CliRun r = CliRun.run("sweep", "-b1K", "--ouptut", "d");
        assertEquals(2, r.exit(), r.err());
        assertEquals(
                "nccl-tuner sweep: Unknown option: '--ouptut'; did you mean --output?\nsee 'nccl-tuner sweep --help'\n",
                r.err());
    }

    /** One machine: a build suffix of NCCL's version line does not make another release. */
    @Test
    void aBuildSuffixIsTheSameMachine() {
        Measurement.Hardware logged = Measurement.Hardware.of("NVIDIA H200", "2.28.9+cuda13.0");
        assertTrue(logged.sameMachine(Measurement.Hardware.of("NVIDIA H200", "2.28.9")));
        assertTrue(!logged.sameMachine(Measurement.Hardware.of("NVIDIA H200", "2.28.3")));
    }

    @Test
    void validateNamesTheFirstNranksWithoutNnodes() {
        assertEquals(
                "--nranks 16 needs --nnodes: the communicator's nodes (a profile matches nRanks and nNodes both); "
                        + "give --nnodes M, one for all --nranks or one per --nranks",
                ValidateCommand.missingNnodes(List.of(16L, 32L)));
    }

    @Test
    void oneUnchangedHitIsSingular() {
        assertEquals(
                "1 rule hit changed nothing: already NCCL's pick 1",
                new UnchangedHits(0, 1, 0, 1, false).line(UnchangedHits.NOT_OFFERED_WHY));
        assertEquals(
                "2 rule hits would change nothing: candidate not offered (" + UnchangedHits.NOT_OFFERED_WHY
                        + ") 1, already NCCL's pick 1",
                new UnchangedHits(1, 1, 0, 2, true).line(UnchangedHits.NOT_OFFERED_WHY));
    }

    /** --cc is said as the source of the compute capability, and the plugin sees major 8, minor 0. */
    @Test
    void theGivenComputeCapabilityIsPresentedAsMajorAndMinor() throws Exception {
        NcclEra era = NcclEra.parse("2.28");
        TryHardware hw = TryHardware.resolve("NVIDIA H200", "8.0", era, false, List.of(), null);
        assertEquals(
                "presents GPU NVIDIA H200 (cc 8.0, --gpu, --cc) and NCCL " + Signature.versionString(era.versionCode())
                        + " (--nccl-era 2.28's release)",
                hw.presents());
        Signature s = hw.signature(8, 2);
        assertEquals(8, s.ccMajor());
        assertEquals(0, s.ccMinor());
        assertEquals(80, s.computeCapability());
    }

    /** Two inputs naming two NCCL releases: neither is presented, the era's own release is. */
    @Test
    void inputsOfTwoReleasesPresentTheErasOwn() throws Exception {
        Path a = Path.of(CompileFrictionsTest.fx("nccl-2.27.3_8ranks-2nodes_tuning.log"));
        Path b = Path.of(CompileFrictionsTest.fx("nccl-2.27.7_2ranks-1node_tuning.log"));
        NcclEra era = NcclEra.parse(
                NcclEra.forVersion(Signature.parseVersion("2.27.3")).name());
        TryHardware hw = TryHardware.resolve(null, null, era, false, List.of(a, b), null);
        assertEquals("--nccl-era " + era.name() + "'s release", hw.versionFrom());
        assertEquals(NcclEra.parse(era.name()).versionCode(), hw.era().versionCode());
    }

    /** The GPU two inputs name is said to come from the first of them (the --nccl-log). */
    @Test
    void theGpuComesFromTheFirstInputNamingIt() throws Exception {
        Path m = tmp.resolve("h100.txt");
        Files.copy(Path.of(H100), m);
        NcclEra era = NcclEra.parse("2.28");
        TryHardware hw = TryHardware.resolve(null, null, era, false, List.of(Path.of(H100)), m);
        assertEquals("NVIDIA H100 80GB HBM3", hw.gpu());
        assertEquals("named by --nccl-log " + H100, hw.gpuFrom());
    }
}

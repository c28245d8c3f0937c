package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What explain infers of a log without NCCL's INIT 'comm' line (issue 21): nodes as NCCL counts
 * them, a rank's NCCL_HOSTID being its host (src/misc/utils.cc getHostHash), not the host names.
 */
class LogShapeTest {
    private static List<String> fixture(String name) throws Exception {
        return Files.readAllLines(Path.of(
                LogShapeTest.class.getResource("/compile/inputs/" + name).toURI()));
    }

    @Test
    void ncclHostIdLinesCountTheNodes() throws Exception {
        assertEquals(
                new LogShape(
                        2,
                        "the 2 '# Rank' lines (line 9)",
                        2,
                        "the NCCL_HOSTID of each rank's process (NCCL's 'NCCL_HOSTID set by environment' lines, line 11)"),
                LogShape.of(fixture("hostid-two-ranks-one-host_all_reduce.txt")));
    }

    @Test
    void oneNcclHostIdPerRankOnTheCommandLineCountsOneNodeEach() throws Exception {
        assertEquals(
                new LogShape(
                        2,
                        "the 2 '# Rank' lines (line 9)",
                        2,
                        "the 2 NCCL_HOSTID values set from line 3, one per rank"),
                LogShape.of(fixture("hostid-echoed-per-rank_all_reduce.txt")));
    }

    @Test
    void withoutNcclHostIdTheHostNamesCount() throws Exception {
        List<String> lines = fixture("hostid-two-ranks-one-host_all_reduce.txt").stream()
                .filter(l -> !l.contains("NCCL_HOSTID set by environment"))
                .toList();
        assertEquals(
                new LogShape(2, "the 2 '# Rank' lines (line 9)", 1, "the host names of the '# Rank' lines (line 9)"),
                LogShape.of(lines));
    }
}

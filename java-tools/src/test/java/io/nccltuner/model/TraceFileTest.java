package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nccltuner.bindings.NcclTunerAbi;
import io.nccltuner.trace.TraceCall;
import io.nccltuner.trace.TraceFile;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Errors in a captured trace name the file, line, field and what the field should hold. */
class TraceFileTest {
    static final String COSTS = ",111.58,-1,61.3421,43.9067,-1,64.6133" + ",-1".repeat(15);

    static String error(String row) {
        return assertThrows(
                        IllegalArgumentException.class,
                        () -> TraceFile.parse(Path.of("t_bad.csv"), List.of("# header", "init,0,2,2", row)))
                .getMessage();
    }

    @Test
    void goodRowParses() {
        TraceFile t = TraceFile.parse(Path.of("t.csv"), List.of("init,0,2,2", "get,0,2,2,4,16384,1,7,3,0" + COSTS));
        assertEquals(111.58f, t.calls().getFirst().costs()[0]);
    }

    @Test
    void badFieldsAreNamed() {
        assertEquals(
                "t_bad.csv:3: field 11 (cost of TREE/LL) '11x.58' is not a number; costs are microseconds, -1 where "
                        + "NCCL does not offer the entry",
                error("get,0,2,2,4,16384,1,7,3,0" + COSTS.replace("111.58", "11x.58")));
        assertEquals(
                "t_bad.csv:3: field 13 (cost of TREE/SIMPLE) 'NaN' is not a number; costs are microseconds, -1 where "
                        + "NCCL does not offer the entry",
                error("get,0,2,2,4,16384,1,7,3,0" + COSTS.replace("61.3421", "NaN")));
        assertEquals(
                "t_bad.csv:3: field 6 (nBytes) '16k' is not a whole number of bytes",
                error("get,0,2,2,4,16k,1,7,3,0" + COSTS));
        assertEquals(
                "t_bad.csv:3: field 7 (numPipeOps) 'x' is not a whole number",
                error("get,0,2,2,4,16384,x,7,3,0" + COSTS));
        assertEquals("t_bad.csv:3: field 3 (nRanks) 'two' is not a whole number", error("init,0,two,2"));
    }

    /**
     * An init row is init,comm,nRanks,nNodes and a get row names the same three first: a
     * communicator of 8 ranks on 2 nodes reads so from both; a cost's tolerance is half a unit of
     * its last printed digit (111.58: 0.005 us; 61.3421: 0.00005 us).
     */
    @Test
    void initAndGetRowsReadRanksThenNodesAndCostsTheirPrintedPrecision() {
        TraceFile t = TraceFile.parse(
                Path.of("t.csv"), List.of("init,3,8,2", "get,3,8,2,4,16384,1,7,3,0" + COSTS, "destroy,3"));
        TraceFile.Init init = (TraceFile.Init) t.events().getFirst();
        assertEquals(3, init.comm());
        assertEquals(8, init.nRanks());
        assertEquals(2, init.nNodes());
        TraceCall c = t.calls().getFirst();
        assertEquals(8, c.nRanks());
        assertEquals(2, c.nNodes());
        int tree = NcclTunerAbi.NCCL_ALGO_TREE();
        assertEquals(0.005, c.tolerance(tree, NcclTunerAbi.NCCL_PROTO_LL()), 1e-12);
        assertEquals(0.00005, c.tolerance(tree, NcclTunerAbi.NCCL_PROTO_SIMPLE()), 1e-12);
        assertEquals(0.5, c.tolerance(tree, NcclTunerAbi.NCCL_PROTO_LL128()), 1e-12, "-1: half a unit");
    }
}

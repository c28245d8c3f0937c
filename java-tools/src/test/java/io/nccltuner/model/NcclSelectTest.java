package io.nccltuner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.nccltuner.calibrate.ModelConstants;
import io.nccltuner.calibrate.Topology;
import io.nccltuner.calibrate.TuneModel;
import io.nccltuner.engine.Engine;
import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The tools pick as the engine does: {@link NcclSelect}, {@link CostModel#predict} and
 * {@link TuneModel#pick} agree with {@link Engine#ncclPick} (NCCL's strict float minimum from
 * 3.6e9 us, first minimum winning) on random tables with ties, -1 entries, entries at or above
 * the starting minimum and NaN.
 */
class NcclSelectTest {
    private static final float[] SPECIAL = {
        -1f,
        Float.NaN,
        Engine.NCCL_START_MINIMUM,
        4e9f,
        Float.POSITIVE_INFINITY,
        Math.nextDown(Engine.NCCL_START_MINIMUM),
        0f,
        7f
    };

    private static int engine(float[] t, int numAlgo, int numProto) {
        return Engine.ncclPick(MemorySegment.ofArray(t), numAlgo, numProto);
    }

    /** A table of small integers (so ties are common), with some special entries. */
    private static float[] randomTable(Random r, int n) {
        float[] t = new float[n];
        for (int i = 0; i < n; i++) {
            t[i] = r.nextInt(4) == 0 ? SPECIAL[r.nextInt(SPECIAL.length)] : r.nextInt(6);
        }
        return t;
    }

    @Test
    void pickAndIndexAreEnginePicksOnRandomTables() {
        Random r = new Random(22);
        for (int k = 0; k < 20000; k++) {
            int numAlgo = 1 + r.nextInt(7);
            int numProto = 1 + r.nextInt(3);
            float[] t = randomTable(r, numAlgo * numProto);
            int want = engine(t, numAlgo, numProto);
            assertEquals(want, NcclSelect.index(t));
            AlgoProto p = NcclSelect.pick(t, numProto);
            assertEquals(
                    want,
                    p == null
                            ? -1
                            : p.algorithm().id() * numProto + p.protocol().id());
            double[] d = new double[t.length];
            List<Integer> entries = new ArrayList<>();
            for (int i = 0; i < t.length; i++) {
                d[i] = t[i];
                entries.add(i);
            }
            Integer q = NcclSelect.pick(entries, d);
            assertEquals(want, q == null ? -1 : q);
        }
    }

    @Test
    void doublesArePickedAsNcclsFloats() {
        // 3.6e9 + 1 as a double is below no float minimum: NCCL's float table holds 3.6e9, never picked
        assertNull(NcclSelect.pick(List.of("a"), new double[] {3600000001.0}));
        assertNull(NcclSelect.pick(List.of("a", "b"), new double[] {Double.NaN, -1}));
        // two doubles that are one float: the first wins, as in NCCL's table
        assertEquals("a", NcclSelect.pick(List.of("a", "b"), new double[] {1.00000001, 1.0}));
        assertEquals("b", NcclSelect.pick(List.of("a", "b"), new double[] {2, 1}));
    }

    @Test
    void costModelPicksAsTheEngineOnRandomTables() {
        Random r = new Random(2209);
        String[] lat = {"0.0", "1.0", "2.0", "4000000000.0", "5.5"};
        String[] bw = {"0.0", "1.0", "2.0", "10.0"};
        for (int k = 0; k < 300; k++) {
            List<Object> entries = new ArrayList<>();
            for (int a = 0; a < 6; a++) {
                for (Protocol p : Protocol.values()) {
                    entries.add(new AlgoProto(Algorithm.ofId(a), p));
                    entries.add(lat[r.nextInt(lat.length)]);
                    entries.add(bw[r.nextInt(bw.length)]);
                }
            }
            CostModel m =
                    CostModel.of(CostModelTest.V2_28, CommShape.of(4, 1, 8), CostModelTest.table(6, entries.toArray()));
            for (Collective c : Collective.values()) {
                long nBytes = 1L << r.nextInt(30);
                Prediction pr = m.predict(c, nBytes, 1 + r.nextInt(2));
                List<CandidateTime> list = pr.candidates();
                float[] t = new float[list.size()];
                for (int i = 0; i < t.length; i++) {
                    t[i] = list.get(i).offered() ? (float) list.get(i).time() : -1f;
                }
                int want = engine(t, 1, t.length);
                assertEquals(want < 0 ? null : list.get(want).algoProto(), pr.pick(), c + " " + nBytes);
            }
        }
    }

    @Test
    void tuneModelPicksAsTheEngine() {
        Topology.Graph g = new Topology.Graph(4, 8, 40, 20, 1, 4, true);
        List<AlgoProto> all = new ArrayList<>();
        for (Algorithm a : new Algorithm[] {Algorithm.TREE, Algorithm.RING}) {
            for (Protocol p : Protocol.values()) {
                all.add(new AlgoProto(a, p));
            }
        }
        for (int nodes : new int[] {1, 2, 4}) {
            TuneModel m = TuneModel.of(new Topology(8 * nodes, nodes, 90, false, 16, g, g), ModelConstants.defaults());
            for (Collective c : Collective.values()) {
                for (int s = 0; s < 34; s++) {
                    long nBytes = 1L << s;
                    float[] t = new float[all.size()];
                    for (int i = 0; i < t.length; i++) {
                        t[i] = (float) m.time(c, all.get(i), nBytes, 1);
                    }
                    int want = engine(t, 1, t.length);
                    assertEquals(want < 0 ? null : all.get(want), m.pick(c, nBytes, all), c + " " + nBytes);
                }
            }
        }
    }
}

package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.engine.DecisionTable;
import org.junit.jupiter.api.Test;

class ForcePolicyTest {
    @Test
    void parsesNcclSpellingsAnyCase() {
        assertEquals(new ForcePolicy.Forced(Algorithm.RING, Protocol.LL128, 0), ForcePolicy.parse("ring/ll128"));
        assertEquals(
                new ForcePolicy.Forced(Algorithm.NVLS_TREE, Protocol.SIMPLE, 16),
                ForcePolicy.parse(" NVLS_TREE/Simple/16 "));
        assertEquals("RING/LL/2", ForcePolicy.parse("RING/LL/2").label());
    }

    @Test
    void refusesWhatIsNotOneCandidate() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ForcePolicy.parse("RING"))
                .getMessage()
                .contains("ALGO/PROTO"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ForcePolicy.parse("RING/LL256"))
                .getMessage()
                .contains("protocol"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ForcePolicy.parse("RING/LL/0"))
                .getMessage()
                .contains("1..64"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ForcePolicy.parse("RING/LL/65"))
                .getMessage()
                .contains("1..64"));
        assertThrows(IllegalArgumentException.class, () -> ForcePolicy.parse("RING/LL/8/x"));
    }

    @Test
    void oneRulePerCollectiveOverEverySizeAndShape() {
        Policy p = ForcePolicy.of(ForcePolicy.parse("TREE/SIMPLE/4"));
        assertEquals("force-TREE-SIMPLE-4", p.name());
        assertEquals(Mode.ENFORCE, p.mode());
        Policy.Profile prof = p.profileFor(4096, 512);
        assertEquals("force:TREE/SIMPLE/4", prof.name());
        assertEquals(prof, p.profileFor(1, 1));
        assertEquals(5, prof.rules().size());
        DecisionTable t = DecisionTable.compile(prof);
        for (Collective c : Collective.values()) {
            for (long n : new long[] {0, 1, 7, 8, 4096, 1L << 40, -1L}) {
                for (int pipe : new int[] {0, 1, 4, Integer.MAX_VALUE}) {
                    assertTrue(
                            t.find(c.id(), n, pipe) >= 0, c + " " + Long.toUnsignedString(n) + " numPipeOps " + pipe);
                }
            }
        }
    }
}

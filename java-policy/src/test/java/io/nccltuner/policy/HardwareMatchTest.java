package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link HardwareMatch#isAny}, which the compiled form's reader uses instead of the record's
 * equals (whose first call spins method-handle classes at the plugin's first init): it must agree
 * with {@code equals(ANY)} for a match naming no field and for each field named alone.
 */
class HardwareMatchTest {
    @Test
    void isAnyAgreesWithEqualsAnyFieldByField() {
        Policy.Range r = new Policy.Range(2, 8);
        List<HardwareMatch> oneField = List.of(
                new HardwareMatch(r, null, null, null, null, null),
                new HardwareMatch(null, r, null, null, null, null),
                new HardwareMatch(null, null, r, null, null, null),
                new HardwareMatch(null, null, null, new Policy.Range(22809, 22809), null, null),
                new HardwareMatch(null, null, null, null, "H200", null),
                new HardwareMatch(null, null, null, null, null, new Policy.Range(90, 90)));
        for (HardwareMatch h : oneField) {
            assertFalse(h.isAny(), h.toString());
            assertFalse(h.equals(HardwareMatch.ANY), h.toString());
        }
        HardwareMatch none = new HardwareMatch(null, null, null, null, null, null);
        assertTrue(none.isAny());
        assertTrue(HardwareMatch.ANY.isAny());
        assertEquals(HardwareMatch.ANY, none);
    }
}

package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import org.junit.jupiter.api.Test;

/**
 * A profile's name from its shape, one spelling for compile, import and the example-CSV converter
 * the plugin runs: nRanks first, an axis that matches any value left out.
 */
class ProfileNameTest {
    @Test
    void nRanksFirstAnyAxisLeftOut() {
        assertEquals("nRanks2-nNodes2", Profile.nameOf(Range.exactly(2), Range.exactly(2)));
        assertEquals("nRanks16-nNodes2", Profile.nameOf(Range.exactly(16), Range.exactly(2)));
        assertEquals("nNodes1", Profile.nameOf(Range.ANY, Range.exactly(1)));
        assertEquals("nRanks8", Profile.nameOf(Range.exactly(8), Range.ANY));
        assertEquals("nRanks2..8-nNodes2..", Profile.nameOf(new Range(2, 8), new Range(2, Long.MAX_VALUE)));
        assertEquals("any", Profile.nameOf(Range.ANY, Range.ANY));
    }
}

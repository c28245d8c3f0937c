package io.nccltuner.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A logged decision's spelling with its channels, the one home of it (DecisionLogFile.pickLabel). */
class DecisionLogFileTest {
    @Test
    void channelsAreSpelledWheneverThePickNamesThem() {
        assertEquals("RING/SIMPLE", DecisionLogFile.pickLabel("RING/SIMPLE", 0), "0: NCCL decides the channels");
        assertEquals("RING/LL/1ch", DecisionLogFile.pickLabel("RING/LL", 1), "one channel is a choice too");
        assertEquals("NVLS/SIMPLE/8ch", DecisionLogFile.pickLabel("NVLS/SIMPLE", 8));
        assertEquals("TREE/LL128/64ch", DecisionLogFile.pickLabel("TREE/LL128", 64), "NCCL_MAXCHANNELS");
    }
}

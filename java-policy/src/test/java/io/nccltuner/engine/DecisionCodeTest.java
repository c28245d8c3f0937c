package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.bindings.NcclTunerAbi;
import org.junit.jupiter.api.Test;

/** A decision code's fields read back as packed, at their largest values (64 channels: NCCL_MAXCHANNELS). */
class DecisionCodeTest {
    @Test
    void fieldsRoundTripAtTheirLargestValues() {
        int np = NcclTunerAbi.NCCL_NUM_PROTOCOLS();
        int cand = NcclTunerAbi.NCCL_ALGO_PAT() * np + NcclTunerAbi.NCCL_PROTO_SIMPLE();
        int nccl = NcclTunerAbi.NCCL_ALGO_NVLS_TREE() * np + NcclTunerAbi.NCCL_PROTO_LL128();
        int code = Decision.rule(251, Decision.ARM_POLICY, nccl, cand, 64);
        assertEquals(251, Decision.bucket(code));
        assertEquals(Decision.ARM_POLICY, Decision.arm(code));
        assertEquals(nccl, Decision.ncclPick(code));
        assertEquals(cand, Decision.candidate(code));
        assertEquals(64, Decision.channels(code), "NCCL_MAXCHANNELS");
        assertEquals(
                Decision.NONE, Decision.candidate(Decision.rule(3, Decision.ARM_NOT_OFFERED, nccl, Decision.NONE, 0)));
        assertEquals(Decision.ARM_UNRULED, Decision.arm(Decision.SEEN | 3));
    }
}

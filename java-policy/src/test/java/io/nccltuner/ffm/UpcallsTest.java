package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.bindings.nccltj_control_fn;
import io.nccltuner.bindings.nccltj_get_coll_info_fn;
import io.nccltuner.bindings.nccltj_hw_t;
import org.junit.jupiter.api.Test;

/** The hand-written upcall descriptors and nccltj_hw_t offsets are exactly the jextract-generated ones. */
class UpcallsTest {
    @Test
    void descriptorsMatchTheBindings() {
        assertEquals(nccltj_control_fn.descriptor(), Upcalls.CONTROL);
        assertEquals(nccltj_get_coll_info_fn.descriptor(), Upcalls.GET_COLL_INFO);
    }

    @Test
    void hardwareSignatureOffsetsMatchTheBindings() {
        assertEquals(nccltj_hw_t.ncclVersion$offset(), Upcalls.HW_NCCL_VERSION);
        assertEquals(nccltj_hw_t.ccMajor$offset(), Upcalls.HW_CC_MAJOR);
        assertEquals(nccltj_hw_t.ccMinor$offset(), Upcalls.HW_CC_MINOR);
        assertEquals(nccltj_hw_t.gpuName$offset(), Upcalls.HW_GPU_NAME);
        assertEquals(nccltj_hw_t.gpuName$layout().byteSize(), Upcalls.HW_GPU_NAME_BYTES);
    }
}

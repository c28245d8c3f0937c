package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.bindings.nccltj_control_fn;
import io.nccltuner.bindings.nccltj_get_coll_info_fn;
import io.nccltuner.bindings.nccltj_get_t;
import io.nccltuner.bindings.nccltj_hw_t;
import org.junit.jupiter.api.Test;

/** The hand-written upcall descriptors and nccltj_hw_t offsets are exactly the jextract-generated ones. */
class UpcallsTest {
    @Test
    void descriptorsMatchTheBindings() {
        assertEquals(nccltj_control_fn.descriptor(), Upcalls.CONTROL);
        assertEquals(nccltj_get_coll_info_fn.descriptor(), Upcalls.GET_COLL_INFO);
    }

    /** Bridge 11: getCollInfo's stub has control's method type (no method-handle classes of its own). */
    @Test
    void getCollInfosStubHasControlsMethodType() {
        assertEquals(Upcalls.CONTROL.toMethodType(), Upcalls.GET_COLL_INFO.toMethodType());
    }

    @Test
    void getCollInfoCallOffsetsMatchTheBindings() {
        assertEquals(nccltj_get_t.handle$offset(), Upcalls.GET_HANDLE);
        assertEquals(nccltj_get_t.nBytes$offset(), Upcalls.GET_NBYTES);
        assertEquals(nccltj_get_t.costTable$offset(), Upcalls.GET_COST_TABLE);
        assertEquals(nccltj_get_t.nChannels$offset(), Upcalls.GET_NCHANNELS);
        assertEquals(nccltj_get_t.collType$offset(), Upcalls.GET_COLL_TYPE);
        assertEquals(nccltj_get_t.numPipeOps$offset(), Upcalls.GET_NUM_PIPE_OPS);
        assertEquals(nccltj_get_t.numAlgo$offset(), Upcalls.GET_NUM_ALGO);
        assertEquals(nccltj_get_t.numProto$offset(), Upcalls.GET_NUM_PROTO);
        assertEquals(nccltj_get_t.regBuff$offset(), Upcalls.GET_REG_BUFF);
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

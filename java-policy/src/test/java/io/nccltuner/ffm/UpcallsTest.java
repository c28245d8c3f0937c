package io.nccltuner.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nccltuner.bindings.nccltj_destroy_fn;
import io.nccltuner.bindings.nccltj_get_chunk_size_fn;
import io.nccltuner.bindings.nccltj_get_coll_info_fn;
import io.nccltuner.bindings.nccltj_init_fn;
import org.junit.jupiter.api.Test;

/** The hand-written upcall descriptors are exactly the jextract-generated ones. */
class UpcallsTest {
  @Test
  void descriptorsMatchTheBindings() {
    assertEquals(nccltj_init_fn.descriptor(), Upcalls.INIT);
    assertEquals(nccltj_get_coll_info_fn.descriptor(), Upcalls.GET_COLL_INFO);
    assertEquals(nccltj_destroy_fn.descriptor(), Upcalls.DESTROY);
    assertEquals(nccltj_get_chunk_size_fn.descriptor(), Upcalls.GET_CHUNK_SIZE);
  }
}

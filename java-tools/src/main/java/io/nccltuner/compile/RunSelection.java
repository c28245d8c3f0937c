package io.nccltuner.compile;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;

/**
 * What NCCL ran for one call, for the compiler: a TUNING selection line of an NCCL INFO log (parsed
 * by {@link io.nccltuner.model.SelectionLine}, e.g. {@code AllReduce: 1048576 Bytes -> Algo RING
 * proto LL channel{Lo..Hi}={0..0}}) placed in its communicator, or what an nccl-tests run forced.
 *
 * @param source {@code file:line}
 * @param collective the collective, or null when the line does not name it (2.22 and older)
 * @param nRanks ranks of the communicator the log describes, or 0 when unknown
 * @param nNodes nodes of that communicator, or 0 when unknown
 * @param nBytes size in bytes as the tuner sees it (2.24+ lines print AllGather and
 *     ReduceScatter per rank; the parser multiplies those by nRanks)
 * @param algorithm the algorithm NCCL ran
 * @param protocol the protocol NCCL ran
 * @param hardware the machine the log or run names (GPU of its {@code # Rank} device lines, NCCL's
 *     {@code NCCL version} line), or null where it names none: a selection of one machine is not
 *     NCCL's pick on another, so it applies only to groups of its machine where the measurements of
 *     a shape were compiled apart by machine
 */
public record RunSelection(
        String source,
        Collective collective,
        int nRanks,
        int nNodes,
        long nBytes,
        Algorithm algorithm,
        Protocol protocol,
        Measurement.Hardware hardware) {
    /** A selection of a machine the input does not name. */
    public RunSelection(
            String source,
            Collective collective,
            int nRanks,
            int nNodes,
            long nBytes,
            Algorithm algorithm,
            Protocol protocol) {
        this(source, collective, nRanks, nNodes, nBytes, algorithm, protocol, null);
    }

    /** @return the selection as a run configuration with NCCL's own channel count */
    public RunConfig config() {
        return new RunConfig(algorithm, protocol, 0);
    }
}

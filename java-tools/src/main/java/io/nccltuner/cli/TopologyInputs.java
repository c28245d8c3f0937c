package io.nccltuner.cli;

import io.nccltuner.calibrate.ModelDecisions;
import io.nccltuner.calibrate.SweepInputs;
import io.nccltuner.calibrate.Topology;
import io.nccltuner.policy.InputException;
import io.nccltuner.policy.Signature;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The topology inputs of {@code explain --topology} and {@code show --topology}: what {@code
 * calibrate} reads from its sweeps ({@link SweepInputs#readTopology}: a sweep directory or one NCCL
 * log with the graph lines), with the GPU and NCCL release the log names, which the profiles'
 * hardware match is checked against.
 *
 * @param input the path given
 * @param logged the topology read
 * @param on the GPU and NCCL release the log file names
 */
record TopologyInputs(Path input, SweepInputs.Logged logged, MeasuredOn on) {
    /**
     * Reads the inputs.
     *
     * @param inputs sweep directories or NCCL logs
     * @param model --compute-capability and --cpu
     * @return one per input
     * @throws IOException if a file cannot be read
     * @throws InputException if an input has no topology, or its GPU's compute capability is unknown
     */
    static List<TopologyInputs> read(List<Path> inputs, ModelInputOptions model) throws IOException, InputException {
        List<TopologyInputs> out = new ArrayList<>();
        for (Path p : inputs) {
            if (!java.nio.file.Files.isDirectory(p)) {
                InputFiles.requireReadable(p);
            }
            int cc = model.computeCapability();
            SweepInputs.Logged first = null;
            if (cc == 0) { // the GPU name the log prints, as calibrate reads it
                SweepInputs.Logged l = SweepInputs.readTopology(p, 90, "intel");
                MeasuredOn on = MeasuredOn.of(l.file());
                cc = on.gpus().isEmpty()
                        ? 0
                        : MeasuredOn.computeCapability(on.gpus().first());
                first = l;
            }
            SweepInputs.Logged l = SweepInputs.readTopology(first != null ? first.file() : p, cc, model.cpu());
            out.add(new TopologyInputs(p, l, MeasuredOn.of(l.file())));
        }
        return out;
    }

    /**
     * The input to predict a shape with: the one measured at that shape, else the one whose nNodes is
     * nearest (in powers of two; the larger on a tie). NCCL searches its graphs within a node, so any
     * of them describes the hardware; the nearest is the least likely to differ.
     *
     * @param all the inputs, at least one
     * @param nRanks ranks of the shape
     * @param nNodes nodes of the shape
     * @return the input
     */
    static TopologyInputs nearest(List<TopologyInputs> all, long nRanks, long nNodes) {
        TopologyInputs best = null;
        double bestD = Double.POSITIVE_INFINITY;
        for (TopologyInputs t : all) {
            Topology o = t.topology();
            double d = o.nRanks() == nRanks && o.nNodes() == nNodes
                    ? -1
                    : Math.abs(Math.log((double) o.nNodes() / nNodes)) - 1e-9 * o.nNodes();
            if (d < bestD) {
                bestD = d;
                best = t;
            }
        }
        return best;
    }

    /** @return the topology */
    Topology topology() {
        return logged.topology();
    }

    /** @return the GPU name the log prints ("NVIDIA H100 80GB HBM3"), or "" */
    String gpu() {
        return on.gpus().isEmpty() ? "" : on.gpus().first();
    }

    /**
     * @return what the plugin would learn at init on this hardware under NCCL 2.28 (tuner v5): the
     *     GPU and compute capability, and NCCL's version where the log prints it
     */
    Signature signature() {
        int cc = topology().computeCapability();
        long v = on.ncclVersions().isEmpty()
                ? -1
                : Signature.parseVersion(on.ncclVersions().first());
        return new Signature(ModelDecisions.TUNER_VERSION, 0, -1, -1, -1, (int) v, gpu(), cc / 10, cc % 10);
    }

    /** @return "sweep-4nodes/runs/x.txt (32 ranks on 4 nodes, cc 9.0, Intel CPU, 16 coll channels)" */
    String describe() {
        Topology t = topology();
        return String.format(Locale.ROOT, "%s (%s, %d coll channels)", logged.file(), shape(t), t.nChannels());
    }

    /**
     * A topology's shape and hardware, as {@code calibrate} prints each sweep's and {@link
     * #describe} each input's.
     *
     * @param t the topology
     * @return "32 ranks on 4 nodes, cc 9.0, Intel CPU" (the compute capability as MAJOR.MINOR)
     */
    static String shape(Topology t) {
        return String.format(
                Locale.ROOT,
                "%d ranks on %d nodes, cc %d.%d, %s CPU",
                t.nRanks(),
                t.nNodes(),
                t.computeCapability() / 10,
                t.computeCapability() % 10,
                t.amdCpu() ? "AMD" : "Intel");
    }
}

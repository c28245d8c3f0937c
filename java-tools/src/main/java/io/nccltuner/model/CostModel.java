package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import io.nccltuner.trace.TraceCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * NCCL's own cost model for one communicator, rebuilt from the latency/bandwidth table it logged.
 *
 * <p>Per call and cost-table entry (NCCL src/graph/tuning.cc, {@code ncclTopoGetAlgoTime}, 2.18 ..
 * 2.30):
 *
 * <pre>
 * time [us] = latency [us] * latFactor * latCount + nBytes / (1000 * bandwidth [GB/s] * bwFactor)
 * </pre>
 *
 * where bwFactor is the Tree correction ({@link NcclFacts#treeCorrection}; NVLS_TREE's from 2.29),
 * latCount is numPipeOps for Ring and {@code ceil(numPipeOps / maxBatchColls)} otherwise, and
 * latFactor is 1.9 (minCompCap below 80) or 1.4 for Ring/SIMPLE AllReduce on more than one node
 * once {@code nBytes / (nChannels * nRanks) >= 64}. An entry whose bandwidth is 0 costs -1 (not
 * offered). NCCL picks the strict minimum of the entries {@code >= 0}, algorithm-major
 * (src/enqueue.cc, topoGetAlgoInfo).
 *
 * <p>The printed table has one decimal, so each entry stands for a box of (latency, bandwidth)
 * values; unknown communicator properties (compute capability, nChannels, CPU) stand for a set of
 * factors. The model carries both: every {@link CandidateTime} has a nominal time and the range of
 * all times the log allows, and a {@link Prediction} lists every entry that may be the pick. {@link
 * #tighten} narrows the boxes with cost tables captured by a tuner.
 *
 * <p>Not modelled: the Ring "backup" bandwidth of 2.19 .. 2.23 (used only when no entry is
 * offered; it is not in the log), user-forced channel counts of 2.18 .. 2.21 ({@code
 * info->nChannels}), and the fp8 x1024 penalty of Ring beyond 8 ranks (2.24+).
 */
public final class CostModel {
    /** Relative slack for NCCL computing in float rather than double. */
    static final double FLOAT_SLACK = 1e-6;

    private static final int NP = Protocol.values().length;

    private final NcclVersion version;
    private final CommShape shape;
    private final CostTable table;
    private final ParameterRegion[] regions;
    private final double[] nominalLat;
    private final double[] nominalInv;
    private final int[] observations;

    private CostModel(
            NcclVersion version,
            CommShape shape,
            CostTable table,
            ParameterRegion[] regions,
            double[] nominalLat,
            double[] nominalInv,
            int[] observations) {
        this.version = version;
        this.shape = shape;
        this.table = table;
        this.regions = regions;
        this.nominalLat = nominalLat;
        this.nominalInv = nominalInv;
        this.observations = observations;
    }

    /**
     * Builds the model from a logged table.
     *
     * @param version the NCCL release that printed the table (selects the release's facts)
     * @param shape the communicator
     * @param table the table
     * @return the model
     */
    public static CostModel of(NcclVersion version, CommShape shape, CostTable table) {
        int n = Collective.COUNT * table.numAlgorithms() * NP;
        ParameterRegion[] regions = new ParameterRegion[n];
        double[] lat = new double[n];
        double[] inv = new double[n];
        for (Collective c : Collective.values()) {
            for (int a = 0; a < table.numAlgorithms(); a++) {
                for (Protocol p : Protocol.values()) {
                    AlgoProto ap = new AlgoProto(Algorithm.ofId(a), p);
                    int i = index(table, c, ap);
                    if (!table.offered(c, ap)) {
                        continue;
                    }
                    regions[i] = ParameterRegion.box(table.latencyRange(c, ap), table.bandwidthRange(c, ap));
                    lat[i] = table.latency(c, ap);
                    inv[i] = 1 / table.bandwidth(c, ap);
                }
            }
        }
        return new CostModel(version, shape, table, regions, lat, inv, new int[n]);
    }

    private static int index(CostTable t, Collective c, AlgoProto ap) {
        return (c.id() * t.numAlgorithms() + ap.algorithm().id()) * NP
                + ap.protocol().id();
    }

    /**
     * The model with one entry's latency moved for every collective, as a changed
     * baseLatencies[algorithm][protocol] moves it (NCCL adds the base latency first and the hop
     * terms after it, src/graph/tuning.cc 2.28.3 .. 2.30.7; see {@link ConstantEdits}).
     *
     * @param ap the entry
     * @param deltaUs microseconds added to its latency
     * @return a new model; this one is unchanged
     */
    public CostModel withLatencyShift(AlgoProto ap, double deltaUs) {
        ParameterRegion[] r = regions.clone();
        double[] lat = nominalLat.clone();
        if (ap.algorithm().id() < table.numAlgorithms()) {
            for (Collective c : Collective.values()) {
                int i = index(table, c, ap);
                if (r[i] != null) {
                    r[i] = r[i].shiftLatency(deltaUs);
                    lat[i] += deltaUs;
                }
            }
        }
        return new CostModel(version, shape, table, r, lat, nominalInv.clone(), observations.clone());
    }

    /** @return the NCCL release whose facts the model uses */
    public NcclVersion version() {
        return version;
    }

    /** @return the communicator */
    public CommShape shape() {
        return shape;
    }

    /** @return the logged table */
    public CostTable table() {
        return table;
    }

    /** @return the latencies (microseconds) the model allows for an entry, or null if not offered */
    public Interval latencyRange(Collective c, AlgoProto ap) {
        ParameterRegion r = region(c, ap);
        return r == null ? null : r.latency();
    }

    /** @return the bandwidths (GB/s) the model allows for an entry, or null if not offered */
    public Interval bandwidthRange(Collective c, AlgoProto ap) {
        ParameterRegion r = region(c, ap);
        return r == null ? null : r.bandwidth();
    }

    /** @return how many captured costs narrowed an entry (0 before {@link #tighten}) */
    public int observations(Collective c, AlgoProto ap) {
        return ap.algorithm().id() < table.numAlgorithms() ? observations[index(table, c, ap)] : 0;
    }

    private ParameterRegion region(Collective c, AlgoProto ap) {
        return ap.algorithm().id() < table.numAlgorithms() ? regions[index(table, c, ap)] : null;
    }

    /**
     * Predicts one call.
     *
     * @param c the collective
     * @param nBytes message size as NCCL passes it to the tuner (for AllGather and ReduceScatter
     *     nRanks times the per-rank size), bytes, >= 0
     * @param numPipeOps pipelined operations, >= 1
     * @return every entry's time and the pick
     * @throws IllegalArgumentException for a negative size or numPipeOps below 1
     */
    public Prediction predict(Collective c, long nBytes, int numPipeOps) {
        if (nBytes < 0 || numPipeOps < 1) {
            throw new IllegalArgumentException("nBytes " + nBytes + ", numPipeOps " + numPipeOps);
        }
        List<CandidateTime> list = new ArrayList<>();
        for (int a = 0; a < table.numAlgorithms(); a++) {
            for (Protocol p : Protocol.values()) {
                list.add(candidate(c, new AlgoProto(Algorithm.ofId(a), p), nBytes, numPipeOps));
            }
        }
        double[] times = new double[list.size()];
        double minHi = Double.POSITIVE_INFINITY;
        for (int i = 0; i < times.length; i++) {
            CandidateTime t = list.get(i);
            times[i] = t.offered() ? t.time() : -1;
            if (t.offered() && t.time() >= 0) {
                minHi = Math.min(minHi, t.range().hi());
            }
        }
        CandidateTime picked = NcclSelect.pick(list, times);
        AlgoProto pick = picked == null ? null : picked.algoProto();
        List<AlgoProto> possible = new ArrayList<>();
        if (pick != null) {
            possible.add(pick);
            for (CandidateTime t : list) {
                if (t.offered() && !t.algoProto().equals(pick) && t.range().lo() <= minHi) {
                    possible.add(t.algoProto());
                }
            }
        }
        return new Prediction(c, nBytes, numPipeOps, list, pick, possible);
    }

    private CandidateTime candidate(Collective c, AlgoProto ap, long nBytes, int numPipeOps) {
        if (shape.nRanks() == 1) {
            // updateCollCostTable (2.22+): a single rank runs Ring/SIMPLE at cost 0, nothing else.
            return ap.equals(new AlgoProto(Algorithm.RING, Protocol.SIMPLE))
                    ? new CandidateTime(ap, Availability.AVAILABLE, 0, Interval.point(0))
                    : new CandidateTime(ap, Availability.UNAVAILABLE, -1, null);
        }
        int i = index(table, c, ap);
        ParameterRegion r = regions[i];
        if (r == null) {
            return new CandidateTime(ap, Availability.UNAVAILABLE, -1, null);
        }
        List<double[]> hyps = coefficients(c, ap, nBytes, numPipeOps, shape);
        double nomLo = Double.POSITIVE_INFINITY;
        double nomHi = Double.NEGATIVE_INFINITY;
        Interval range = null;
        for (double[] h : hyps) {
            double v = h[0] * nominalLat[i] + h[1] * nominalInv[i];
            nomLo = Math.min(nomLo, v);
            nomHi = Math.max(nomHi, v);
            Interval hr = r.range(h[0], h[1]);
            range = range == null ? hr : range.union(hr);
        }
        range = new Interval(
                range.lo() - FLOAT_SLACK * Math.abs(range.lo()), range.hi() + FLOAT_SLACK * Math.abs(range.hi()));
        Availability av =
                NcclFacts.isConditional(version, c, ap.algorithm()) ? Availability.CONDITIONAL : Availability.AVAILABLE;
        return new CandidateTime(ap, av, (nomLo + nomHi) / 2, range);
    }

    /**
     * The coefficients {a, b} of {@code time = a * latency + b / bandwidth}, one pair per combination
     * of factors the shape leaves possible.
     */
    List<double[]> coefficients(Collective c, AlgoProto ap, long nBytes, int numPipeOps, CommShape s) {
        List<Double> latFactors = new ArrayList<>();
        boolean plateauEntry = ap.algorithm() == Algorithm.RING
                && ap.protocol() == Protocol.SIMPLE
                && c == Collective.AllReduce
                && s.nNodes() > 1
                && !(NcclFacts.plateauSkipsMnnvl(version) && s.mnnvl());
        if (plateauEntry) {
            Boolean applies = plateauApplies(nBytes, s);
            if (applies == null || applies) {
                if (s.minCompCapLo() < 80) {
                    latFactors.add(NcclFacts.RING_PLATEAU_PRE_AMPERE);
                }
                if (s.minCompCapHi() >= 80) {
                    latFactors.add(NcclFacts.RING_PLATEAU);
                }
            }
            if (applies == null || !applies) {
                latFactors.add(1.0);
            }
        } else {
            latFactors.add(1.0);
        }
        List<Double> bwFactors = new ArrayList<>();
        if (ap.algorithm() == Algorithm.TREE && NcclFacts.treeCorrectionApplies(version, c)) {
            bwFactors.add(NcclFacts.treeCorrection(version, ap.protocol(), nBytes));
        } else if (ap.algorithm() == Algorithm.NVLS_TREE
                && c == Collective.AllReduce
                && NcclFacts.hasNvlsTreeCorrection(version)) {
            double corr = NcclFacts.nvlsTreeCorrection(ap.protocol(), nBytes);
            if (s.minCompCapHi() >= 100 && !Boolean.FALSE.equals(s.x86())) {
                bwFactors.add(corr);
            }
            if ((s.minCompCapLo() < 100 || !Boolean.TRUE.equals(s.x86())) && corr != 1.0) {
                bwFactors.add(1.0);
            }
            if (bwFactors.isEmpty()) {
                bwFactors.add(1.0);
            }
        } else {
            bwFactors.add(1.0);
        }
        int latCount = NcclFacts.latCount(version, ap.algorithm(), numPipeOps);
        List<double[]> out = new ArrayList<>();
        for (double lf : latFactors) {
            for (double bf : bwFactors) {
                out.add(new double[] {lf * latCount, nBytes / (1000.0 * bf)});
            }
        }
        return out;
    }

    /** Whether {@code nBytes / (nChannels * nRanks) >= 64}; null when nChannels is unknown and it matters. */
    private static Boolean plateauApplies(long nBytes, CommShape s) {
        long t = NcclFacts.RING_PLATEAU_BYTES_PER_RANK_CHANNEL;
        if (s.nChannels() > 0) {
            return nBytes / ((long) s.nChannels() * s.nRanks()) >= t;
        }
        if (nBytes / ((long) NcclFacts.MAX_CHANNELS * s.nRanks()) >= t) {
            return true;
        }
        if (nBytes / (long) s.nRanks() < t) {
            return false;
        }
        return null;
    }

    /**
     * Narrows the model with cost tables NCCL passed to a tuner for this communicator.
     *
     * <p>Each captured cost {@code t} (printed to some number of digits) says that {@code a *
     * latency + b / bandwidth} lies within half a unit of its last digit; the entry's region keeps
     * only the part that agrees with every such cost. When the compute capability is unknown, each
     * class (below 80, 80..99, 100 and up) is tried and only those the captured costs agree with are
     * kept. Calls of other shapes (nRanks, nNodes) or table sizes are skipped; a cost that contradicts
     * the table is reported and not used.
     *
     * @param calls captured calls
     * @return the narrowed model and what changed
     */
    public Tightening tighten(List<TraceCall> calls) {
        List<String> problems = new ArrayList<>();
        List<TraceCall> usable = new ArrayList<>();
        for (TraceCall call : calls) {
            if (call.nRanks() != shape.nRanks() || call.nNodes() != shape.nNodes()) {
                problems.add("line " + call.line() + ": nRanks " + call.nRanks() + ", nNodes " + call.nNodes()
                        + " is another communicator shape; skipped");
            } else if (call.numAlgo() != table.numAlgorithms() || call.numProto() != NP) {
                problems.add("line " + call.line() + ": a " + call.numAlgo() + "x" + call.numProto()
                        + " cost table; the log's has " + table.numAlgorithms() + "x" + NP + "; skipped");
            } else {
                usable.add(call);
            }
        }
        CommShape s = shape;
        int[][] classes = {{0, 79}, {80, 99}, {100, CommShape.CC_MAX}};
        int lo = Integer.MAX_VALUE;
        int hi = Integer.MIN_VALUE;
        int tried = 0;
        for (int[] cls : classes) {
            int clo = Math.max(cls[0], shape.minCompCapLo());
            int chi = Math.min(cls[1], shape.minCompCapHi());
            if (clo > chi) {
                continue;
            }
            tried++;
            Fit fit = fit(usable, shape.withComputeCapabilityRange(clo, chi));
            if (fit.contradictions.isEmpty()) {
                lo = Math.min(lo, clo);
                hi = Math.max(hi, chi);
            }
        }
        if (tried > 1 && lo <= hi) {
            s = shape.withComputeCapabilityRange(lo, hi);
        }
        Fit fit = fit(usable, s);
        problems.addAll(fit.contradictions);
        double[] lat = nominalLat.clone();
        double[] inv = nominalInv.clone();
        List<EntryChange> changes = new ArrayList<>();
        for (Collective c : Collective.values()) {
            for (int a = 0; a < table.numAlgorithms(); a++) {
                for (Protocol p : Protocol.values()) {
                    AlgoProto ap = new AlgoProto(Algorithm.ofId(a), p);
                    int i = index(table, c, ap);
                    if (fit.observations[i] == 0 || regions[i] == null) {
                        continue;
                    }
                    double[] center = fit.regions[i].center();
                    lat[i] = center[0];
                    inv[i] = center[1];
                    changes.add(new EntryChange(
                            c,
                            ap,
                            regions[i].latency(),
                            fit.regions[i].latency(),
                            regions[i].bandwidth(),
                            fit.regions[i].bandwidth(),
                            fit.observations[i]));
                }
            }
        }
        CostModel narrowed = new CostModel(version, s, table, fit.regions, lat, inv, fit.observations);
        return new Tightening(narrowed, changes, usable.size(), problems);
    }

    private record Fit(ParameterRegion[] regions, int[] observations, List<String> contradictions) {}

    private Fit fit(List<TraceCall> calls, CommShape s) {
        ParameterRegion[] r = regions.clone();
        int[] obs = observations.clone();
        List<String> bad = new ArrayList<>();
        for (TraceCall call : calls) {
            for (int a = 0; a < table.numAlgorithms(); a++) {
                for (Protocol p : Protocol.values()) {
                    AlgoProto ap = new AlgoProto(Algorithm.ofId(a), p);
                    int i = index(table, call.collective(), ap);
                    float cost = call.cost(ap.algorithm().id(), ap.protocol().id());
                    if (r[i] == null || cost < 0) {
                        continue;
                    }
                    List<double[]> hyps = coefficients(call.collective(), ap, call.nBytes(), call.numPipeOps(), s);
                    if (hyps.size() != 1) {
                        continue;
                    }
                    double[] h = hyps.get(0);
                    double tol =
                            call.tolerance(ap.algorithm().id(), ap.protocol().id()) + FLOAT_SLACK * Math.abs(cost);
                    ParameterRegion clipped = r[i].clip(h[0], h[1], cost - tol, cost + tol);
                    if (clipped == null) {
                        Interval allowed = r[i].range(h[0], h[1]);
                        bad.add(String.format(
                                Locale.ROOT,
                                "line %d: %s %s at %d B: captured %s us is outside %s allowed so far",
                                call.line(),
                                call.collective(),
                                ap,
                                call.nBytes(),
                                Float.toString(cost),
                                allowed));
                    } else {
                        r[i] = clipped;
                        obs[i]++;
                    }
                }
            }
        }
        return new Fit(r, obs, bad);
    }

    /**
     * One entry narrowed by {@link #tighten}.
     *
     * @param collective the collective
     * @param algoProto the entry
     * @param latencyBefore latency interval from the printed table, microseconds
     * @param latencyAfter latency interval after the captured costs, microseconds
     * @param bandwidthBefore bandwidth interval from the printed table, GB/s
     * @param bandwidthAfter bandwidth interval after the captured costs, GB/s
     * @param observations captured costs used
     */
    public record EntryChange(
            Collective collective,
            AlgoProto algoProto,
            Interval latencyBefore,
            Interval latencyAfter,
            Interval bandwidthBefore,
            Interval bandwidthAfter,
            int observations) {}

    /**
     * The result of {@link #tighten}.
     *
     * @param model the narrowed model (its shape may have a narrower compute capability)
     * @param changes entries that captured costs narrowed
     * @param callsUsed calls of this communicator's shape
     * @param problems skipped calls and captured costs that contradict the table
     */
    public record Tightening(CostModel model, List<EntryChange> changes, int callsUsed, List<String> problems) {
        public Tightening {
            changes = List.copyOf(changes);
            problems = List.copyOf(problems);
        }
    }
}

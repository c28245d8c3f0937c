package io.nccltuner.calibrate;

import io.nccltuner.model.AlgoProto;
import io.nccltuner.model.NcclSelect;
import io.nccltuner.policy.Collective;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Fits NCCL's model constants to measured times of forced candidates, for selection.
 *
 * <p>Each constant the measured shapes' Ring and Tree entries depend on is a parameter {@code
 * theta_i = ln(value_i / default_i)} (so it stays positive and a factor of 2 either way costs the
 * same). The objective, over every measured (shape, collective, size):
 *
 * <pre>
 * J(theta) = mean regret + lambda x sum(theta_i^2) + mu x mean(ln(predicted / measured)^2)
 * regret   = measured time of the candidate NCCL picks with these constants / fastest measured - 1
 * </pre>
 *
 * NCCL's pick is its own rule (the strict minimum of {@link TuneModel#time}, algorithm-major) over
 * the measured candidates. Regret is piecewise constant in theta, so the search is a derivative-free
 * coordinate (pattern) search of our own: from NCCL's defaults, first with mu = 1 (a least-squares
 * start on log times, which orders the candidates roughly right), then with the given mu. Each
 * stage runs greedy coordinate line searches over the whole bound (97 values of theta_i, so a
 * bandwidth cap that binds only below some value is found past the plateau where it does not
 * bind; each round moves the one constant that lowers J most), then a pattern search trying each parameter at theta_i +- step for steps ln 2, ln 2 / 2,
 * ... down to 0.01, keeping a move whenever J falls; theta_i stays within +- ln 8. The regulariser keeps a constant the
 * measurements do not pin at NCCL's value.
 *
 * <p>Uncertainty: for each fitted constant, the interval of values (others at their fit) over which
 * J stays within {@link #TOLERANCE} of its minimum, scanned on a grid of 193 points over the bound;
 * a profile of the objective, not a statistical confidence interval. An interval that reaches the
 * bound says the data leave that side open.
 */
public final class Calibrator {
    /** Objective increase (0.005 = half a percent of mean regret) that bounds the uncertainty. */
    public static final double TOLERANCE = 0.005;
    /** Bound on |theta|: a fitted constant stays within 1/8 .. 8 x NCCL's default. */
    public static final double BOUND = Math.log(8);

    /**
     * One measured size: the median time of each forced candidate.
     *
     * @param collective the collective
     * @param nBytes bytes as NCCL passes them to the tuner
     * @param times median microseconds per candidate, in NCCL's algorithm-major order
     */
    public record Point(Collective collective, long nBytes, Map<AlgoProto, Double> times) {
        /** @return the fastest measured time, microseconds */
        public double best() {
            return times.values().stream()
                    .mapToDouble(Double::doubleValue)
                    .min()
                    .orElse(Double.NaN);
        }

        /** @return the fastest measured candidate */
        public AlgoProto bestCandidate() {
            return times.entrySet().stream()
                    .min(Map.Entry.comparingByValue())
                    .orElseThrow()
                    .getKey();
        }
    }

    /**
     * One measured communicator shape.
     *
     * @param source where it was read (a sweep directory)
     * @param topology what the model reads
     * @param points the measured sizes, ascending per collective
     */
    public record Shape(String source, Topology topology, List<Point> points) {}

    /**
     * The settings of a fit.
     *
     * @param lambda weight of the regulariser sum(theta^2)
     * @param mu weight of the log prediction error
     */
    public record Options(double lambda, double mu) {
        /** lambda 0.0005 (a factor of 2 costs 0.024% regret), mu 0.3. */
        public static final Options DEFAULT = new Options(0.0005, 0.3);
    }

    /**
     * One fitted constant.
     *
     * @param index the entry ({@link ModelConstants#name})
     * @param ncclDefault NCCL's value, us or GB/s
     * @param fitted the fitted value
     * @param low lowest value within {@link #TOLERANCE} of the optimum (others fixed)
     * @param high highest such value
     * @param lowOpen whether low is the search bound (data leave it open)
     * @param highOpen whether high is the search bound
     * @param explains crossovers reproduced with the fit and lost with this constant back at NCCL's value
     */
    public record Fitted(
            int index,
            double ncclDefault,
            double fitted,
            double low,
            double high,
            boolean lowOpen,
            boolean highOpen,
            List<String> explains) {
        /** @return the policy name */
        public String name() {
            return ModelConstants.name(index);
        }

        /** @return whether the fit moved it by more than 1% */
        public boolean changed() {
            return Math.abs(Math.log(fitted / ncclDefault)) > 0.01;
        }
    }

    /**
     * A measured crossover: the fastest candidate changes between two neighbouring measured sizes.
     *
     * @param shape the shape's label
     * @param collective the collective
     * @param below the size before it
     * @param above the size after it
     * @param from the fastest candidate at {@code below}
     * @param to the fastest at {@code above}
     */
    public record Crossover(String shape, Collective collective, long below, long above, AlgoProto from, AlgoProto to) {
        @Override
        public String toString() {
            return shape + " " + collective + " " + from + " -> " + to + " between "
                    + io.nccltuner.policy.ByteSize.format(below) + " and " + io.nccltuner.policy.ByteSize.format(above);
        }
    }

    /**
     * The result.
     *
     * @param constants the fitted constants (NCCL's defaults elsewhere)
     * @param fitted every parameter, with its uncertainty
     * @param regretDefault mean regret at the measured points with NCCL's defaults
     * @param regretFitted mean regret with the fit
     * @param crossovers the measured crossovers
     * @param reproducedDefault crossovers NCCL's defaults reproduce
     * @param reproducedFitted crossovers the fit reproduces
     * @param evaluations objective evaluations the search used
     */
    public record Result(
            ModelConstants constants,
            List<Fitted> fitted,
            double regretDefault,
            double regretFitted,
            List<Crossover> crossovers,
            List<Crossover> reproducedDefault,
            List<Crossover> reproducedFitted,
            int evaluations) {}

    private final List<Shape> shapes;
    private final Options options;
    private final int[] params;
    private int evaluations;

    private Calibrator(List<Shape> shapes, Options options) {
        this.shapes = shapes;
        this.options = options;
        this.params = sensitive(shapes);
    }

    /**
     * Fits the constants.
     *
     * @param shapes measured shapes (at least one point each)
     * @param options weights
     * @return the fit
     */
    public static Result fit(List<Shape> shapes, Options options) {
        return new Calibrator(shapes, options).run();
    }

    /** The constants with a nonzero default that change some measured candidate's predicted time. */
    static int[] sensitive(List<Shape> shapes) {
        ModelConstants d = ModelConstants.defaults();
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < ModelConstants.SIZE; i++) {
            if (d.get(i) == 0) {
                continue;
            }
            boolean moves = false;
            for (double f : new double[] {0.25, 4}) {
                ModelConstants k = d.with(i, d.get(i) * f);
                for (Shape s : shapes) {
                    TuneModel a = TuneModel.of(s.topology(), d);
                    TuneModel b = TuneModel.of(s.topology(), k);
                    for (Point p : s.points()) {
                        for (AlgoProto ap : p.times().keySet()) {
                            if (Math.abs(a.time(p.collective(), ap, p.nBytes(), 1)
                                            - b.time(p.collective(), ap, p.nBytes(), 1))
                                    > 1e-9) {
                                moves = true;
                            }
                        }
                    }
                }
            }
            if (moves) {
                out.add(i);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /** @return the constants for a parameter vector */
    ModelConstants constants(double[] theta) {
        ModelConstants k = ModelConstants.defaults();
        for (int j = 0; j < params.length; j++) {
            k = k.with(params[j], k.get(params[j]) * Math.exp(theta[j]));
        }
        return k;
    }

    /**
     * Mean regret of NCCL's selection with some constants over the measured points.
     *
     * @param shapes the measurements
     * @param k the constants
     * @return mean of (measured time of the pick / fastest measured - 1)
     */
    public static double regret(List<Shape> shapes, ModelConstants k) {
        double sum = 0;
        int n = 0;
        for (Shape s : shapes) {
            TuneModel m = TuneModel.of(s.topology(), k);
            for (Point p : s.points()) {
                AlgoProto pick =
                        m.pick(p.collective(), p.nBytes(), List.copyOf(p.times().keySet()));
                if (pick != null) {
                    sum += p.times().get(pick) / p.best() - 1;
                    n++;
                }
            }
        }
        return n == 0 ? 0 : sum / n;
    }

    private double objective(double[] theta, double mu) {
        evaluations++;
        ModelConstants k = constants(theta);
        double reg = 0;
        for (double t : theta) {
            reg += t * t;
        }
        double err = 0;
        int ne = 0;
        double sum = 0;
        int n = 0;
        for (Shape s : shapes) {
            TuneModel m = TuneModel.of(s.topology(), k);
            for (Point p : s.points()) {
                List<AlgoProto> entries = List.copyOf(p.times().keySet());
                double[] model = new double[entries.size()];
                for (int i = 0; i < model.length; i++) {
                    double t = m.time(p.collective(), entries.get(i), p.nBytes(), 1);
                    model[i] = t;
                    if (t < 0) {
                        continue;
                    }
                    double d = Math.log(t / p.times().get(entries.get(i)));
                    err += d * d;
                    ne++;
                }
                AlgoProto pick = NcclSelect.pick(entries, model);
                if (pick != null) {
                    sum += p.times().get(pick) / p.best() - 1;
                    n++;
                }
            }
        }
        return (n == 0 ? 0 : sum / n) + options.lambda() * reg + mu * (ne == 0 ? 0 : err / ne);
    }

    private double[] search(double[] start, double mu) {
        double[] th = start.clone();
        double best = objective(th, mu);
        for (double step = Math.log(2); step >= 0.01; step /= 2) {
            boolean moved = true;
            for (int pass = 0; moved && pass < 20; pass++) {
                moved = false;
                for (int j = 0; j < th.length; j++) {
                    for (double dir : new double[] {step, -step}) {
                        double keep = th[j];
                        th[j] = Math.max(-BOUND, Math.min(BOUND, keep + dir));
                        double v = objective(th, mu);
                        if (v < best - 1e-12) {
                            best = v;
                            moved = true;
                        } else {
                            th[j] = keep;
                        }
                    }
                }
            }
        }
        return th;
    }

    /**
     * Greedy coordinate line searches over the whole bound: each round scans every parameter on a
     * grid of 97 values (the others fixed) and moves only the one whose best value lowers J most,
     * until no move helps (at most 60 rounds). Moving the most useful constant first keeps one
     * constant from absorbing what another explains better (a base latency taking up a per-hop one).
     */
    private double[] lineSearches(double[] start, double mu) {
        double[] th = start.clone();
        double best = objective(th, mu);
        for (int round = 0; round < 60; round++) {
            int bestJ = -1;
            double bestV = best;
            double bestArg = 0;
            for (int j = 0; j < th.length; j++) {
                double keep = th[j];
                for (int g = 0; g < 97; g++) {
                    th[j] = -BOUND + 2 * BOUND * g / 96;
                    double v = objective(th, mu);
                    if (v < bestV - 1e-12) {
                        bestV = v;
                        bestJ = j;
                        bestArg = th[j];
                    }
                }
                th[j] = keep;
            }
            if (bestJ < 0) {
                break;
            }
            th[bestJ] = bestArg;
            best = bestV;
        }
        return th;
    }

    private Result run() {
        double[] theta = lineSearches(new double[params.length], 1.0);
        theta = search(theta, 1.0);
        theta = lineSearches(theta, options.mu());
        theta = search(theta, options.mu());
        double jBest = objective(theta, options.mu());
        ModelConstants k = constants(theta);
        List<Crossover> cross = crossovers(shapes);
        List<Crossover> withFit = reproduced(shapes, k, cross);
        List<Fitted> fitted = new ArrayList<>();
        ModelConstants d = ModelConstants.defaults();
        for (int j = 0; j < params.length; j++) {
            double lo = theta[j];
            double hi = theta[j];
            double[] th = theta.clone();
            int grid = 193;
            for (int g = 0; g < grid; g++) {
                th[j] = -BOUND + 2 * BOUND * g / (grid - 1);
                if (objective(th, options.mu()) <= jBest + TOLERANCE) {
                    lo = Math.min(lo, th[j]);
                    hi = Math.max(hi, th[j]);
                }
            }
            ModelConstants reset = k.with(params[j], d.get(params[j]));
            List<Crossover> without = reproduced(shapes, reset, cross);
            List<String> explains = withFit.stream()
                    .filter(c -> !without.contains(c))
                    .map(Crossover::toString)
                    .toList();
            double def = d.get(params[j]);
            fitted.add(new Fitted(
                    params[j],
                    def,
                    k.get(params[j]),
                    def * Math.exp(lo),
                    def * Math.exp(hi),
                    lo <= -BOUND + 1e-9,
                    hi >= BOUND - 1e-9,
                    explains));
        }
        fitted.sort(Comparator.comparing((Fitted f) -> !f.changed()).thenComparingInt(Fitted::index));
        return new Result(
                k,
                fitted,
                regret(shapes, d),
                regret(shapes, k),
                cross,
                reproduced(shapes, d, cross),
                withFit,
                evaluations);
    }

    /** @return "16 ranks on 2 nodes" */
    static String label(Topology t) {
        return t.nRanks() + " ranks on " + t.nNodes() + " node" + (t.nNodes() == 1 ? "" : "s");
    }

    /**
     * The measured crossovers: neighbouring sizes whose fastest candidates differ, each by more than
     * 2% at both sizes (so near ties do not count).
     */
    static List<Crossover> crossovers(List<Shape> shapes) {
        List<Crossover> out = new ArrayList<>();
        for (Shape s : shapes) {
            List<Point> pts = s.points();
            for (int i = 0; i + 1 < pts.size(); i++) {
                Point a = pts.get(i);
                Point b = pts.get(i + 1);
                if (a.collective() != b.collective()) {
                    continue;
                }
                AlgoProto x = a.bestCandidate();
                AlgoProto y = b.bestCandidate();
                if (x.equals(y) || !a.times().containsKey(y) || !b.times().containsKey(x)) {
                    continue;
                }
                if (a.times().get(y) > 1.02 * a.best() && b.times().get(x) > 1.02 * b.best()) {
                    out.add(new Crossover(label(s.topology()), a.collective(), a.nBytes(), b.nBytes(), x, y));
                }
            }
        }
        return out;
    }

    /** The crossovers whose two sizes NCCL's selection with {@code k} gets within 2% of the fastest. */
    static List<Crossover> reproduced(List<Shape> shapes, ModelConstants k, List<Crossover> cross) {
        List<Crossover> out = new ArrayList<>();
        for (Shape s : shapes) {
            TuneModel m = TuneModel.of(s.topology(), k);
            for (Crossover c : cross) {
                if (!c.shape().equals(label(s.topology()))) {
                    continue;
                }
                boolean ok = true;
                for (Point p : s.points()) {
                    if (p.collective() == c.collective() && (p.nBytes() == c.below() || p.nBytes() == c.above())) {
                        AlgoProto pick = m.pick(
                                p.collective(),
                                p.nBytes(),
                                List.copyOf(p.times().keySet()));
                        ok &= pick != null && p.times().get(pick) <= 1.02 * p.best();
                    }
                }
                if (ok) {
                    out.add(c);
                }
            }
        }
        return out;
    }
}

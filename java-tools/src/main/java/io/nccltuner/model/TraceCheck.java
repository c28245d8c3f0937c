package io.nccltuner.model;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Protocol;
import io.nccltuner.trace.TraceCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Checks a cost model against what NCCL did: captured tuner calls (their cost tables) and the
 * selection lines NCCL logged for the same calls.
 *
 * <p>For every call and cost-table entry the captured cost must lie in the range the logged table
 * allows ({@code -1} only where the model says the entry is unavailable or conditional), and the
 * model's pick must equal the pick NCCL logged, or be reported ambiguous with the logged pick among
 * the possible ones.
 *
 * <p>Calls are matched to selection lines in order. From 2.24 NCCL prints one line per operation
 * and a coalesced call covers several: a call takes the next lines of its collective whose bytes
 * (per-rank bytes times nRanks for AllGather and ReduceScatter) add up to its nBytes. A call that
 * finds no such run is reported unmatched and does not consume lines.
 */
public final class TraceCheck {
    private TraceCheck() {}

    /** How the model's pick compared with NCCL's logged pick for one call. */
    public enum Verdict {
        /** Not ambiguous, and equal to the logged pick. */
        EXACT,
        /** Ambiguous, and the logged pick is one of the possible picks. */
        AMBIGUOUS,
        /** The logged pick is not what the model allows. */
        MISMATCH,
        /** No selection line could be matched to the call. */
        UNMATCHED
    }

    /**
     * One checked call.
     *
     * @param call the captured call
     * @param lines the selection lines matched to it (empty when unmatched)
     * @param prediction the model's prediction
     * @param verdict how the model's pick compared
     */
    public record CallResult(TraceCall call, List<LoggedSelection> lines, Prediction prediction, Verdict verdict) {
        public CallResult {
            lines = List.copyOf(lines);
        }

        /** @return the pick NCCL logged, or null when unmatched or the matched lines disagree */
        public AlgoProto loggedPick() {
            if (lines.isEmpty()) {
                return null;
            }
            AlgoProto p = lines.get(0).pick();
            for (LoggedSelection s : lines) {
                if (!s.pick().equals(p)) {
                    return null;
                }
            }
            return p;
        }
    }

    /**
     * The outcome.
     *
     * @param calls one result per call, in trace order
     * @param entriesChecked captured cost-table entries compared with the model
     * @param entryProblems entries outside the model's range, or -1 where the model offers the entry
     *     (and the reverse)
     * @param tracePickProblems calls where the strict minimum of the captured table differs from the
     *     logged pick (a sign that calls and lines were matched wrongly)
     */
    public record Report(
            List<CallResult> calls, int entriesChecked, List<String> entryProblems, List<String> tracePickProblems) {
        public Report {
            calls = List.copyOf(calls);
            entryProblems = List.copyOf(entryProblems);
            tracePickProblems = List.copyOf(tracePickProblems);
        }

        /** @return how many calls had a verdict */
        public long count(Verdict v) {
            return calls.stream().filter(c -> c.verdict() == v).count();
        }

        /** @return "exact 120, ambiguous 3, mismatch 0, unmatched 0 of 123 calls; 2583 entries, 0 outside" */
        public String summary() {
            return String.format(
                    Locale.ROOT,
                    "exact %d, ambiguous %d, mismatch %d, unmatched %d of %d call%s; %d captured entr%s, %d outside the table's range",
                    count(Verdict.EXACT),
                    count(Verdict.AMBIGUOUS),
                    count(Verdict.MISMATCH),
                    count(Verdict.UNMATCHED),
                    calls.size(),
                    calls.size() == 1 ? "" : "s",
                    entriesChecked,
                    entriesChecked == 1 ? "y" : "ies",
                    entryProblems.size());
        }
    }

    /**
     * Matches calls to selection lines (see the class comment).
     *
     * @param calls captured calls of one communicator, in order
     * @param selections that communicator's selection lines, in order
     * @param nRanks ranks of the communicator
     * @return for each call its lines, empty when unmatched
     */
    public static List<List<LoggedSelection>> match(
            List<TraceCall> calls, List<LoggedSelection> selections, int nRanks) {
        List<List<LoggedSelection>> out = new ArrayList<>();
        int j = 0;
        for (TraceCall call : calls) {
            List<LoggedSelection> group = new ArrayList<>();
            long sum = 0;
            int k = j;
            while (k < selections.size()) {
                LoggedSelection s = selections.get(k);
                if (s.collective() != null && s.collective() != call.collective()) {
                    break;
                }
                if (!group.isEmpty() && sum >= call.nBytes()) {
                    break;
                }
                sum += s.nBytes(nRanks);
                group.add(s);
                k++;
            }
            if (!group.isEmpty() && sum == call.nBytes()) {
                out.add(group);
                j = k;
            } else {
                out.add(List.of());
            }
        }
        return out;
    }

    /**
     * Runs the checks.
     *
     * @param model the model of the communicator (as built from the log, or tightened)
     * @param calls the communicator's captured calls
     * @param selections the communicator's selection lines
     * @return the outcome
     */
    public static Report run(CostModel model, List<TraceCall> calls, List<LoggedSelection> selections) {
        List<List<LoggedSelection>> matched =
                match(calls, selections, model.shape().nRanks());
        List<CallResult> results = new ArrayList<>();
        List<String> entryProblems = new ArrayList<>();
        List<String> pickProblems = new ArrayList<>();
        int entries = 0;
        for (int i = 0; i < calls.size(); i++) {
            TraceCall call = calls.get(i);
            Prediction pr = model.predict(call.collective(), call.nBytes(), call.numPipeOps());
            for (int a = 0; a < Math.min(call.numAlgo(), model.table().numAlgorithms()); a++) {
                for (int p = 0; p < call.numProto(); p++) {
                    AlgoProto ap = new AlgoProto(Algorithm.ofId(a), Protocol.ofId(p));
                    CandidateTime ct = pr.candidate(ap);
                    float cost = call.cost(ap.algorithm().id(), ap.protocol().id());
                    entries++;
                    String where = String.format(
                            Locale.ROOT,
                            "line %d: %s %s at %d B x%d",
                            call.line(),
                            call.collective(),
                            ap,
                            call.nBytes(),
                            call.numPipeOps());
                    if (cost < 0) {
                        if (ct.availability() == Availability.AVAILABLE) {
                            entryProblems.add(where + ": captured -1 but the table offers it");
                        }
                    } else if (!ct.offered()) {
                        entryProblems.add(where + ": captured " + cost + " but the table has bandwidth 0");
                    } else if (!ct.range()
                            .contains(
                                    cost,
                                    call.tolerance(
                                            ap.algorithm().id(), ap.protocol().id()))) {
                        entryProblems.add(where + ": captured " + cost + " outside " + ct.range());
                    }
                }
            }
            List<LoggedSelection> lines = matched.get(i);
            Verdict v;
            CallResult tmp = new CallResult(call, lines, pr, Verdict.UNMATCHED);
            AlgoProto logged = tmp.loggedPick();
            if (lines.isEmpty()) {
                v = Verdict.UNMATCHED;
            } else if (logged == null) {
                v = Verdict.MISMATCH;
            } else if (!pr.ambiguous()) {
                v = logged.equals(pr.pick()) ? Verdict.EXACT : Verdict.MISMATCH;
            } else {
                v = pr.possiblePicks().contains(logged) ? Verdict.AMBIGUOUS : Verdict.MISMATCH;
            }
            if (logged != null && !logged.equals(NcclSelect.pick(call.costs(), call.numProto()))) {
                pickProblems.add("line " + call.line() + ": captured table's minimum is "
                        + NcclSelect.pick(call.costs(), call.numProto()) + ", log line "
                        + lines.get(0).line() + " says " + logged);
            }
            results.add(new CallResult(call, lines, pr, v));
        }
        return new Report(results, entries, entryProblems, pickProblems);
    }
}

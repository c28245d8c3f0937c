package io.nccltuner.it;

import io.nccltuner.policy.Policy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What NCCL ends up running for each call of a trace, computed from the trace and the policy's
 * rules directly: a linear scan for the rule (no size grid, no compiled table, no engine code),
 * then NCCL's own selection (strict minimum over entries >= 0, algorithm-major; a non-zero
 * nChannels wins). An independent oracle for the engine.
 */
final class TraceExpectation {
    static final String[] ALGOS = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
    static final String[] PROTOS = {"LL", "LL128", "SIMPLE"};
    static final String[] COLLS = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};

    record Call(
            int comm,
            long nRanks,
            long nNodes,
            int coll,
            long nBytes,
            int numPipeOps,
            int numAlgo,
            int numProto,
            float[] costs) {}

    private TraceExpectation() {}

    static List<Call> read(Path trace) throws IOException {
        List<Call> calls = new ArrayList<>();
        for (String line : Files.readAllLines(trace)) {
            String[] f = line.split(",");
            if (!f[0].equals("get")) {
                continue;
            }
            int numAlgo = Integer.parseInt(f[7]);
            int numProto = Integer.parseInt(f[8]);
            float[] costs = new float[numAlgo * numProto];
            for (int i = 0; i < costs.length; i++) {
                costs[i] = Float.parseFloat(f[10 + i]);
            }
            calls.add(new Call(
                    Integer.parseInt(f[1]),
                    Long.parseLong(f[2]),
                    Long.parseLong(f[3]),
                    Integer.parseInt(f[4]),
                    Long.parseLong(f[5]),
                    Integer.parseInt(f[6]),
                    numAlgo,
                    numProto,
                    costs));
        }
        return calls;
    }

    /** @param policy the policy, or null for NCCL's own choice; @param enforce false for shadow mode */
    static Harness.Selection expect(Call c, Policy policy, boolean enforce) {
        Policy.Profile profile = null;
        if (policy != null) {
            for (Policy.Profile p : policy.profiles()) {
                if (p.nRanks().contains(c.nRanks()) && p.nNodes().contains(c.nNodes())) {
                    profile = p;
                    break;
                }
            }
        }
        return expect(c, profile, enforce, -1);
    }

    /**
     * As {@link #expect(Call, Policy, boolean)}, for a profile the test chose itself (hardware
     * matching is the test's own statement) and the regBuff the host passes: a rule naming regBuff
     * applies only when the host passes that value (never when it passes none: -1).
     */
    static Harness.Selection expect(Call c, Policy.Profile profile, boolean enforce, int regBuff) {
        float[] t = c.costs().clone();
        int channels = 0;
        if (profile != null && enforce) {
            Policy.Rule rule = null;
            for (Policy.Rule r : profile.rules()) {
                boolean regBuffOk = r.regBuff() == null || (regBuff >= 0 && r.regBuff() == (regBuff == 1));
                if (r.collective().id() == c.coll()
                        && r.containsBytes(c.nBytes())
                        && r.numPipeOps().contains(c.numPipeOps())
                        && regBuffOk) {
                    rule = r;
                }
            }
            if (rule != null) {
                for (Policy.Candidate cand : rule.candidates()) {
                    int a = cand.algorithm().id();
                    int p = cand.protocol().id();
                    if (a < c.numAlgo() && p < c.numProto() && t[a * c.numProto() + p] >= 0) {
                        t[a * c.numProto() + p] = 0f;
                        channels = cand.channels();
                        break;
                    }
                }
            }
        }
        int best = -1;
        for (int i = 0; i < t.length; i++) {
            if (t[i] >= 0 && (best < 0 || t[i] < t[best])) {
                best = i;
            }
        }
        return new Harness.Selection(
                COLLS[c.coll()], c.nBytes(), ALGOS[best / c.numProto()], PROTOS[best % c.numProto()], channels);
    }

    /**
     * The chunk size a v6 plugin should give for NCCL's pick: the first rule (file order) covering
     * the collective and size with a candidate of the picked algorithm and protocol naming one.
     *
     * @return bytes, or 0 when NCCL's own chunk size stays
     */
    static long expectChunk(Call c, Policy.Profile profile, Harness.Selection pick) {
        for (Policy.Rule r : profile.rules()) {
            if (r.collective().id() != c.coll() || !r.containsBytes(c.nBytes())) {
                continue;
            }
            for (Policy.Candidate cand : r.candidates()) {
                if (cand.algorithm().name().equals(pick.algorithm())
                        && cand.protocol().name().equals(pick.protocol())
                        && cand.chunkSize() != 0) {
                    return cand.chunkSize();
                }
            }
        }
        return 0;
    }
}

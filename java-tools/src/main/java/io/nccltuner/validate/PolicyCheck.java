package io.nccltuner.validate;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.Signature;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a loaded policy for what can never take effect: candidates NCCL never offers for their
 * collective, rules none of whose candidates NCCL ever offers, profiles an earlier profile always
 * shadows (in shape and in hardware match), and, for a given communicator shape, which profile matches and what cannot apply there.
 * Used by {@code nccl-tuner validate}; the plugin does not need it (a candidate NCCL does not offer
 * is skipped per call, which is safe).
 *
 * <p>NCCL facts (src/graph/tuning.cc, ncclTopoTuneModel, the same in 2.23 .. 2.30.7; 2.19 .. 2.22
 * offer a subset): an algorithm/protocol pair NCCL skips there keeps bandwidth 0, and
 * updateCollCostTable (src/enqueue.cc) leaves its cost-table entry at -1, so a tuner can never
 * select it:
 *
 * <ul>
 *   <li>Broadcast and Reduce: RING only.
 *   <li>AllGather and ReduceScatter: RING, PAT, NVLS and COLLNET_DIRECT only.
 *   <li>AllReduce: every algorithm but PAT.
 *   <li>NVLS and NVLS_TREE: SIMPLE only. PAT: SIMPLE only, and with the default NCCL_PAT_ENABLE=2
 *       only when nNodes == nRanks (one GPU per node; ncclPatEnable).
 * </ul>
 *
 * <p>NCCL does not call the tuner for one-rank communicators (updateCollCostTable returns before
 * the tuner's table is used; the cost table is RING/SIMPLE 0 alone), so a shape with nRanks 1 never
 * reaches a rule.
 */
public final class PolicyCheck {
    private PolicyCheck() {}

    /** How bad a finding is. */
    public enum Level {
        /** Something in the policy can never take effect (validate exits 1). */
        ERROR,
        /** Part of a rule cannot take effect, the rest can. */
        WARNING
    }

    /**
     * One finding.
     *
     * @param level how bad
     * @param where the field path, e.g. {@code profiles[0].rules[2].candidates[1]}
     * @param message what and why, with the NCCL source
     * @param profile the index of the profile whose rule the finding is about, -1 when it is about a
     *     profile as a whole or a shape (validate groups the same finding over profiles by it)
     */
    public record Finding(Level level, String where, String message, int profile) {
        /** A finding not about one profile's rule. */
        public Finding(Level level, String where, String message) {
            this(level, where, message, -1);
        }

        @Override
        public String toString() {
            return (level == Level.ERROR ? "error: " : "warning: ") + where + ": " + message;
        }
    }

    /**
     * Why NCCL never offers a candidate for a collective, whatever the communicator: {@link
     * io.nccltuner.policy.NcclOffers#neverOffered}, which the plugin's CSV reader and import share.
     *
     * @param c the collective
     * @param a the algorithm
     * @param p the protocol
     * @return the reason, or null when NCCL may offer it
     */
    public static String neverOffered(Collective c, Algorithm a, Protocol p) {
        return io.nccltuner.policy.NcclOffers.neverOffered(c, a, p);
    }

    /**
     * Findings that hold for every communicator shape.
     *
     * @param policy a loaded policy
     * @return the findings, in file order
     */
    public static List<Finding> check(Policy policy) {
        return check(policy, PolicyCheck::rulePath);
    }

    /**
     * As {@link #check(Policy)}, naming rules with {@code ruleName} (for a policy converted from
     * NCCL's example-tuner CSV: the CSV line).
     *
     * @param policy a loaded policy
     * @param ruleName (profile index, rule index) to the rule's name in findings
     * @return the findings, in file order
     */
    public static List<Finding> check(Policy policy, java.util.function.BiFunction<Integer, Integer, String> ruleName) {
        List<Finding> out = new ArrayList<>();
        List<Profile> ps = policy.profiles();
        for (int i = 0; i < ps.size(); i++) {
            Profile p = ps.get(i);
            Policy.Range[] possible = possibleShapes(p);
            for (int j = 0; j < i; j++) {
                Profile q = ps.get(j);
                if (!covers(q.hardware(), p.hardware())) {
                    continue;
                }
                boolean every = covers(q.nRanks(), p.nRanks()) && covers(q.nNodes(), p.nNodes());
                if (every || (possible != null && covers(q.nRanks(), possible[0]) && covers(q.nNodes(), possible[1]))) {
                    out.add(new Finding(
                            Level.ERROR,
                            "profiles[" + i + "] (" + p.name() + ")",
                            "can never match: profiles[" + j + "] (" + q.name() + ") comes first and matches"
                                    + (every
                                            ? " every shape it matches"
                                            : " every shape it matches that NCCL calls the tuner with"
                                                    + " (nRanks >= 2, 1 <= nNodes <= nRanks)")
                                    + " (the first matching profile is used)"));
                    break;
                }
            }
            if (p.nRanks().max() < 2) {
                out.add(new Finding(
                        Level.ERROR,
                        "profiles[" + i + "] (" + p.name() + ")",
                        "matches only one-rank communicators, for which NCCL never calls the tuner"));
            }
            for (int r = 0; r < p.rules().size(); r++) {
                Rule rule = p.rules().get(r);
                String rw = ruleName.apply(i, r) + " (" + describe(rule) + ")";
                int never = 0;
                for (int k = 0; k < rule.candidates().size(); k++) {
                    Candidate c = rule.candidates().get(k);
                    String why = neverOffered(rule.collective(), c.algorithm(), c.protocol());
                    if (why != null) {
                        never++;
                        out.add(new Finding(
                                Level.WARNING,
                                rw + ".candidates[" + k + "]",
                                c.algorithm() + "/" + c.protocol() + " is never offered: " + why,
                                i));
                    }
                }
                if (never == rule.candidates().size()) {
                    out.add(new Finding(
                            Level.ERROR,
                            rw,
                            "can never apply: NCCL offers none of its candidates for " + rule.collective(),
                            i));
                }
            }
        }
        return out;
    }

    /**
     * Rules that name regBuff, each with what it means where the policy runs: NCCL passes regBuff
     * to getCollInfo from tuner v4 (NCCL 2.24, src/include/plugin/tuner/tuner_v4.h; 1 when NCCL can
     * register the call's user buffer, or under graph capture with NCCL_GRAPH_REGISTER), so such a
     * rule never matches under a v3 NCCL (2.22, 2.23: regBuff unknown; engine/DecisionTable); and
     * {@code try}, {@code replay} and {@code explain} call with regBuff 0 (a captured trace does not
     * record it; model.NcclEra), so a {@code regBuff: true} rule never applies there. {@code validate} reports these for a YAML
     * policy; NCCL's example CSV converter says the same per line while reading it.
     *
     * @param policy a loaded policy
     * @param ruleName (profile index, rule index) to the rule's name in findings
     * @return one warning per rule that names regBuff, in file order
     */
    public static List<Finding> regBuff(
            Policy policy, java.util.function.BiFunction<Integer, Integer, String> ruleName) {
        List<Finding> out = new ArrayList<>();
        for (int i = 0; i < policy.profiles().size(); i++) {
            List<Rule> rules = policy.profiles().get(i).rules();
            for (int r = 0; r < rules.size(); r++) {
                Rule rule = rules.get(r);
                if (rule.regBuff() != null) {
                    out.add(new Finding(
                            Level.WARNING,
                            ruleName.apply(i, r) + " (" + describe(rule) + ")",
                            regBuffMeaning(rule.regBuff()),
                            i));
                }
            }
        }
        return out;
    }

    /**
     * @param registered a rule's regBuff value
     * @return what a rule with that regBuff value applies to, where it never does, and what to write instead
     */
    static String regBuffMeaning(boolean registered) {
        return "regBuff: " + registered + ": applies only to calls on " + (registered ? "a " : "an un")
                + "registered buffer, and only from NCCL 2.24 (tuner v4 passes regBuff); never under NCCL 2.22 or"
                + " 2.23 (tuner v3)"
                + (registered ? ", nor in try, replay or explain, which call with regBuff 0" : "")
                + "; write regBuff: any for a rule every call of its range gets";
    }

    /**
     * What a communicator shape gets.
     *
     * @param nRanks ranks
     * @param nNodes nodes
     * @param profileIndex index of the matching profile, -1 for none
     * @param profile its name, or null
     * @param rules its rules
     * @param findings what cannot apply for this shape in particular
     */
    public record ShapeResult(
            long nRanks, long nNodes, int profileIndex, String profile, int rules, List<Finding> findings) {}

    /**
     * The profile a shape matches (the first whose nRanks and nNodes ranges hold it, as the plugin
     * chooses at init) and what cannot apply for that shape: PAT candidates where nRanks != nNodes,
     * a rule whose candidates are all unavailable there, a one-rank shape.
     *
     * @param policy a loaded policy
     * @param nRanks ranks (1 or more)
     * @param nNodes nodes (1 or more)
     * @return the result
     */
    public static ShapeResult shape(Policy policy, long nRanks, long nNodes) {
        return shape(policy, nRanks, nNodes, PolicyCheck::rulePath);
    }

    /**
     * As {@link #shape(Policy, long, long)}, naming rules with {@code ruleName}.
     *
     * @param policy a loaded policy
     * @param nRanks ranks (1 or more)
     * @param nNodes nodes (1 or more)
     * @param ruleName (profile index, rule index) to the rule's name in findings
     * @return the result
     */
    public static ShapeResult shape(
            Policy policy, long nRanks, long nNodes, java.util.function.BiFunction<Integer, Integer, String> ruleName) {
        List<Finding> out = new ArrayList<>();
        String shape = io.nccltuner.model.JobShape.of(nRanks, nNodes);
        if (nNodes > nRanks) {
            out.add(new Finding(Level.ERROR, shape, "more nodes than ranks: no communicator has this shape"));
        }
        int idx = -1;
        for (int i = 0; i < policy.profiles().size(); i++) {
            Profile p = policy.profiles().get(i);
            if (p.nRanks().contains(nRanks) && p.nNodes().contains(nNodes)) {
                idx = i;
                break;
            }
        }
        if (idx < 0) {
            return new ShapeResult(nRanks, nNodes, -1, null, 0, out);
        }
        Profile p = policy.profiles().get(idx);
        if (nRanks < 2) {
            out.add(new Finding(Level.ERROR, shape, "NCCL never calls the tuner for one-rank communicators"));
        }
        for (int r = 0; r < p.rules().size(); r++) {
            Rule rule = p.rules().get(r);
            String rw = ruleName.apply(idx, r) + " (" + describe(rule) + ")";
            int never = 0;
            int patOff = 0;
            for (int k = 0; k < rule.candidates().size(); k++) {
                Candidate c = rule.candidates().get(k);
                if (neverOffered(rule.collective(), c.algorithm(), c.protocol()) != null) {
                    never++;
                } else if (c.algorithm() == Algorithm.PAT && nRanks != nNodes) {
                    patOff++;
                    out.add(
                            new Finding(
                                    Level.WARNING,
                                    rw + ".candidates[" + k + "]",
                                    "PAT is offered only with one rank per node"
                                            + " (nNodes == nRanks) unless NCCL_PAT_ENABLE=1 (NCCL 2.23 .. 2.30 src/graph/tuning.cc, ncclPatEnable)"));
                }
            }
            if (patOff > 0 && never + patOff == rule.candidates().size()) {
                out.add(new Finding(
                        Level.WARNING, rw, "cannot apply at " + shape + ": none of its candidates is offered there"));
            }
        }
        return new ShapeResult(nRanks, nNodes, idx, p.name(), p.rules().size(), out);
    }

    /** @return {@code profiles[p].rules[r]}, a rule's path in the YAML */
    private static String rulePath(int p, int r) {
        return "profiles[" + p + "].rules[" + r + "]";
    }

    /**
     * Whether every process that hardware match b admits is admitted by a too (a field a leaves out
     * admits everything; a gpu substring admits every name that contains it).
     */
    static boolean covers(HardwareMatch a, HardwareMatch b) {
        return coversOrAny(a.nNvlDomains(), b.nNvlDomains())
                && coversOrAny(a.minRanksPerNvlDomain(), b.minRanksPerNvlDomain())
                && coversOrAny(a.maxRanksPerNvlDomain(), b.maxRanksPerNvlDomain())
                && coversOrAny(a.ncclVersion(), b.ncclVersion())
                && coversOrAny(a.computeCapability(), b.computeCapability())
                && (a.gpu() == null
                        || (b.gpu() != null
                                && b.gpu()
                                        .toLowerCase(java.util.Locale.ROOT)
                                        .contains(a.gpu().toLowerCase(java.util.Locale.ROOT))));
    }

    /** A null range (the field left out) holds everything; only a null range holds a null one. */
    private static boolean coversOrAny(Policy.Range a, Policy.Range b) {
        return a == null || (b != null && covers(a, b));
    }

    /**
     * What a profile's hardware match needs, for validate's report.
     *
     * @param h the match
     * @return e.g. {@code gpu "NVIDIA H200", ncclVersion 2.28.9}, or {@code any machine}
     */
    public static String describe(HardwareMatch h) {
        List<String> need = new ArrayList<>();
        if (h.gpu() != null) {
            need.add("gpu \"" + h.gpu() + "\"");
        }
        if (h.ncclVersion() != null) {
            Policy.Range v = h.ncclVersion();
            need.add("ncclVersion " + Signature.versionString(v.min())
                    + (v.min() == v.max()
                            ? ""
                            : ".." + (v.max() == Long.MAX_VALUE ? "" : Signature.versionString(v.max()))));
        }
        if (h.computeCapability() != null) {
            Policy.Range c = h.computeCapability();
            need.add("computeCapability " + io.nccltuner.policy.HardwareMatch.ccRange(c));
        }
        if (h.nNvlDomains() != null) {
            need.add("nvlDomain.nNvlDomains " + h.nNvlDomains());
        }
        if (h.minRanksPerNvlDomain() != null) {
            need.add("nvlDomain.minRanksPerNvlDomain " + h.minRanksPerNvlDomain());
        }
        if (h.maxRanksPerNvlDomain() != null) {
            need.add("nvlDomain.maxRanksPerNvlDomain " + h.maxRanksPerNvlDomain());
        }
        return need.isEmpty() ? "any machine" : String.join(", ", need);
    }

    /**
     * The profiles a shape may get, in policy order: those whose nRanks and nNodes hold it, up to and
     * including the first that names no hardware (the plugin takes the first whose hardware match
     * also holds the process's signature).
     *
     * @param policy a loaded policy
     * @param nRanks ranks
     * @param nNodes nodes
     * @return profile indices, possibly empty
     */
    public static List<Integer> shapeProfiles(Policy policy, long nRanks, long nNodes) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < policy.profiles().size(); i++) {
            Profile p = policy.profiles().get(i);
            if (p.nRanks().contains(nRanks) && p.nNodes().contains(nNodes)) {
                out.add(i);
                if (p.hardware().isAny()) {
                    break;
                }
            }
        }
        return out;
    }

    /**
     * The shapes of a profile NCCL can call the tuner with, as the nRanks and nNodes they span:
     * NCCL does not call it for one-rank communicators (updateCollCostTable, src/enqueue.cc), and a
     * communicator has 1 .. nRanks nodes. For issue 21: a profile every one of whose possible shapes
     * an earlier profile matches never applies, though the earlier one's ranges do not cover its own
     * (an earlier {@code nRanks: {min: 2}} before a later {@code nRanks: any}).
     *
     * @param p the profile
     * @return {nRanks span, nNodes span}, each the smallest range holding every possible shape's
     *     value (a rectangle's projections: covering both covers every possible shape); null when
     *     it has none
     */
    private static Policy.Range[] possibleShapes(Profile p) {
        long nodesLo = Math.max(1, p.nNodes().min());
        long ranksLo = Math.max(Math.max(2, p.nRanks().min()), nodesLo); // a shape needs nNodes <= nRanks
        long ranksHi = p.nRanks().max();
        if (ranksLo > ranksHi || nodesLo > p.nNodes().max()) {
            return null;
        }
        long nodesHi = Math.min(p.nNodes().max(), ranksHi);
        return new Policy.Range[] {new Policy.Range(ranksLo, ranksHi), new Policy.Range(nodesLo, nodesHi)};
    }

    /** Whether range a holds every value of range b. */
    private static boolean covers(Policy.Range a, Policy.Range b) {
        return a.min() <= b.min() && a.max() >= b.max();
    }

    /** @return "AllReduce [1 MiB, 2 MiB)" with ", numPipeOps ..." when not any ({@link io.nccltuner.policy.NcclOffers#describe}) */
    public static String describe(Rule r) {
        return io.nccltuner.policy.NcclOffers.describe(r);
    }
}

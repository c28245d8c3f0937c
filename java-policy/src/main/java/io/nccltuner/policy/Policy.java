package io.nccltuner.policy;

import java.nio.file.Path;
import java.util.List;

/**
 * A validated policy (schema {@code nccl-tuner-java/v1}, see docs/policy-format.md).
 *
 * @param name policy name, logged at init
 * @param mode mode from the file (before any NCCL_TUNER_JAVA_MODE override)
 * @param description free text, may be empty
 * @param profiles profiles in file order; the first matching (nRanks, nNodes) and hardware wins
 * @param source the file it came from, or null when built in memory
 */
public record Policy(String name, Mode mode, String description, List<Profile> profiles, Path source) {
    /** The only schema string this release reads and writes. */
    public static final String SCHEMA = "nccl-tuner-java/v1";

    public Policy {
        profiles = List.copyOf(profiles);
        description = description == null ? "" : description;
    }

    /**
     * @param newName the policy's name
     * @return this policy under another name
     */
    public Policy withName(String newName) {
        return new Policy(newName, mode, description, profiles, source);
    }

    /**
     * @param newProfiles the profiles, in order
     * @return this policy (name, mode, description, source) with other profiles
     */
    public Policy withProfiles(List<Profile> newProfiles) {
        return new Policy(name, mode, description, newProfiles, source);
    }

    /**
     * @param newMode the mode the policy starts in (before any NCCL_TUNER_JAVA_MODE override)
     * @return this policy (name, description, profiles, source) in another mode
     */
    public Policy withMode(Mode newMode) {
        return new Policy(name, newMode, description, profiles, source);
    }

    /**
     * @param newSource the file it came from, or null
     * @return this policy, read from another file
     */
    public Policy withSource(Path newSource) {
        return new Policy(name, mode, description, profiles, newSource);
    }

    /**
     * The first profile that matches a communicator.
     *
     * @param nRanks number of ranks in the communicator
     * @param nNodes number of nodes in the communicator
     * @return the profile, or null if none matches
     */
    public Profile profileFor(long nRanks, long nNodes) {
        int i = profileIndexFor(nRanks, nNodes);
        return i < 0 ? null : profiles.get(i);
    }

    /**
     * The index of the first profile that matches a communicator's shape, as {@link
     * #profileFor(long, long)} finds it (hardware not looked at), for naming its rules in messages
     * ({@code profiles[i].rules[j]}).
     *
     * @param nRanks number of ranks in the communicator
     * @param nNodes number of nodes in the communicator
     * @return the index into {@link #profiles()}, or -1 if none matches
     */
    public int profileIndexFor(long nRanks, long nNodes) {
        for (int i = 0; i < profiles.size(); i++) {
            Profile p = profiles.get(i);
            if (p.nRanks().contains(nRanks) && p.nNodes().contains(nNodes)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The first profile that matches a communicator's shape and the process's hardware signature.
     *
     * @param nRanks number of ranks in the communicator
     * @param nNodes number of nodes in the communicator
     * @param signature what the plugin learnt at init (fields it could not learn are unknown)
     * @param skipped receives one line per profile whose shape matched but whose hardware did not
     * @return the profile, or null if none matches
     */
    public Profile profileFor(long nRanks, long nNodes, Signature signature, List<String> skipped) {
        int i = profileIndexFor(nRanks, nNodes, signature, skipped);
        return i < 0 ? null : profiles.get(i);
    }

    /**
     * The index of the profile {@link #profileFor(long, long, Signature, List)} finds, the one the
     * engine uses at init: the first whose shape and hardware match both hold. For naming its rules
     * in messages ({@code profiles[i].rules[j]}) as the engine matched them; before issue 21 replay
     * named them from {@link #profileIndexFor(long, long)}, which ignores the hardware match.
     *
     * @param nRanks number of ranks in the communicator
     * @param nNodes number of nodes in the communicator
     * @param signature what the plugin learnt at init (fields it could not learn are unknown)
     * @param skipped receives one line per profile whose shape matched but whose hardware did not
     * @return the index into {@link #profiles()}, or -1 if none matches
     */
    public int profileIndexFor(long nRanks, long nNodes, Signature signature, List<String> skipped) {
        for (int i = 0; i < profiles.size(); i++) {
            Profile p = profiles.get(i);
            if (p.nRanks().contains(nRanks) && p.nNodes().contains(nNodes)) {
                String why = p.hardware().mismatch(signature);
                if (why == null) {
                    return i;
                }
                skipped.add("profile " + p.name() + " skipped: " + why);
            }
        }
        return -1;
    }

    /**
     * A named set of rules for communicators of a given shape.
     *
     * @param name unique within the policy
     * @param nRanks ranks matched
     * @param nNodes nodes matched
     * @param rules non-overlapping rules
     * @param hardware the hardware signature matched ({@link HardwareMatch#ANY} when not named)
     * @param constants NCCL model constants to set at init under tuner v5+ (empty for none)
     */
    public record Profile(
            String name,
            Range nRanks,
            Range nNodes,
            List<Rule> rules,
            HardwareMatch hardware,
            List<TunerConstant> constants) {
        public Profile {
            rules = List.copyOf(rules);
            hardware = hardware == null ? HardwareMatch.ANY : hardware;
            constants = constants == null ? List.of() : List.copyOf(constants);
        }

        /** A profile that names no hardware and no constants. */
        public Profile(String name, Range nRanks, Range nNodes, List<Rule> rules) {
            this(name, nRanks, nNodes, rules, HardwareMatch.ANY, List.of());
        }

        /**
         * The name compile, import and the example-CSV converter give a profile of a shape: each axis
         * the profile matches on, nRanks first, an axis that matches any value left out.
         *
         * @param nRanks the profile's nRanks range
         * @param nNodes its nNodes range
         * @return {@code nRanks2-nNodes2}, {@code nNodes1} (nRanks any), {@code nRanks2..8-nNodes2..};
         *     {@code any} when both match any value
         */
        public static String nameOf(Range nRanks, Range nNodes) {
            boolean anyR = nRanks.equals(Range.ANY);
            boolean anyN = nNodes.equals(Range.ANY);
            if (anyR && anyN) {
                return "any";
            }
            return (anyR ? "" : "nRanks" + nRanks) + (!anyR && !anyN ? "-" : "") + (anyN ? "" : "nNodes" + nNodes);
        }

        /**
         * @param newRules the rules
         * @return this profile (name, shape, hardware, constants) with other rules
         */
        public Profile withRules(List<Rule> newRules) {
            return new Profile(name, nRanks, nNodes, newRules, hardware, constants);
        }

        /**
         * The rule the engine puts a call to: the first of this profile's rules for the collective
         * whose byte range holds nBytes, whose numPipeOps range holds numPipeOps and whose regBuff
         * condition holds, as {@code io.nccltuner.engine.DecisionTable#findInBucket} matches them.
         *
         * @param collective the call's collective
         * @param nBytes the call's size in bytes (unsigned)
         * @param numPipeOps the call's numPipeOps (NCCL passes 1 or more)
         * @param regBuff as NCCL passes it: 0, non-zero for a registered buffer (tuner v4+), or
         *     negative when unknown (tuner v3, NCCL 2.22 passes none): then only a rule for any
         *     regBuff matches
         * @return the index into {@link #rules()}, or -1 when no rule covers the call
         */
        public int ruleIndexFor(Collective collective, long nBytes, long numPipeOps, int regBuff) {
            for (int j = 0; j < rules.size(); j++) {
                Rule r = rules.get(j);
                if (r.collective() == collective
                        && r.containsBytes(nBytes)
                        && r.numPipeOps().contains(numPipeOps)
                        && (r.regBuff() == null || (regBuff >= 0 && r.regBuff() == (regBuff != 0)))) {
                    return j;
                }
            }
            return -1;
        }

        /** @return whether some rule needs regBuff (true or false), which NCCL passes only from tuner v4 */
        public boolean needsRegBuff() {
            return rules.stream().anyMatch(r -> r.regBuff() != null);
        }
    }

    /**
     * An inclusive integer range; {@code ANY} matches everything.
     *
     * @param min smallest value matched
     * @param max largest value matched
     */
    public record Range(long min, long max) {
        /** Matches any value. */
        public static final Range ANY = new Range(0, Long.MAX_VALUE);

        /** @return a range matching exactly {@code v} */
        public static Range exactly(long v) {
            return new Range(v, v);
        }

        /** @return whether v is in [min, max] */
        public boolean contains(long v) {
            return v >= min && v <= max;
        }

        /** @return whether the two ranges share a value */
        public boolean intersects(Range o) {
            return min <= o.max && o.min <= max;
        }

        /** @return "any", "2" or "2..8" */
        @Override
        public String toString() {
            if (equals(ANY)) {
                return "any";
            }
            return min == max ? Long.toString(min) : min + ".." + (max == Long.MAX_VALUE ? "" : max);
        }
    }

    /**
     * One rule: for a collective over a half-open byte range (and optionally a numPipeOps range),
     * the candidates to try, best first.
     *
     * @param collective the collective
     * @param fromBytes inclusive lower bound, a grid point (see {@link SizeGrid})
     * @param toBytes exclusive upper bound, a grid point; -1 (2^64 - 1 unsigned) for no bound
     * @param numPipeOps numPipeOps matched ({@link Range#ANY} when the rule does not say)
     * @param ncclPick NCCL's own pick as measured, or null
     * @param ncclRegret how much slower NCCL's pick measured than the best (0.21 = 21%), or NaN
     * @param candidates 1..4 candidates, best first
     * @param regBuff the regBuff value matched (NCCL tuner v4+: whether the user buffer can be
     *     registered), or null for any; a rule naming it never matches under v3 (regBuff unknown)
     */
    public record Rule(
            Collective collective,
            long fromBytes,
            long toBytes,
            Range numPipeOps,
            Candidate ncclPick,
            double ncclRegret,
            List<Candidate> candidates,
            Boolean regBuff) {
        public Rule {
            candidates = List.copyOf(candidates);
        }

        /** A rule for any regBuff. */
        public Rule(
                Collective collective,
                long fromBytes,
                long toBytes,
                Range numPipeOps,
                Candidate ncclPick,
                double ncclRegret,
                List<Candidate> candidates) {
            this(collective, fromBytes, toBytes, numPipeOps, ncclPick, ncclRegret, candidates, null);
        }

        /**
         * @param regBuff the regBuff value to match, or null for any
         * @return the same rule, matching only calls of that regBuff
         */
        public Rule withRegBuff(Boolean regBuff) {
            return new Rule(collective, fromBytes, toBytes, numPipeOps, ncclPick, ncclRegret, candidates, regBuff);
        }

        /**
         * @param from inclusive lower bound, a grid point
         * @param to exclusive upper bound, a grid point, or -1 for no bound
         * @return the same rule (collective, numPipeOps, picks, regBuff) over another byte range
         */
        public Rule withRange(long from, long to) {
            return new Rule(collective, from, to, numPipeOps, ncclPick, ncclRegret, candidates, regBuff);
        }

        /**
         * @param newCandidates 1..4 candidates, best first
         * @return the same rule with other candidates
         */
        public Rule withCandidates(List<Candidate> newCandidates) {
            return new Rule(collective, fromBytes, toBytes, numPipeOps, ncclPick, ncclRegret, newCandidates, regBuff);
        }

        /** @return the candidates as messages name them, best first: {@code NVLS/SIMPLE RING/SIMPLE} */
        public String candidatesText() {
            return String.join(
                    " ",
                    candidates.stream()
                            .map(c -> c.algorithm() + "/" + c.protocol())
                            .toList());
        }

        /** @return whether nBytes (unsigned) is in [fromBytes, toBytes) */
        public boolean containsBytes(long nBytes) {
            return SizeGrid.inRange(nBytes, fromBytes, toBytes);
        }
    }

    /**
     * A ranked candidate.
     *
     * @param algorithm NCCL algorithm
     * @param protocol NCCL protocol
     * @param channels channel count to set, 1..64, or 0 to let NCCL decide
     * @param regret measured time / best time - 1 (0.0 for the best), or NaN when not given
     * @param chunkSize chunk size in bytes to give NCCL when it asks (tuner v6+ getChunkSize) about
     *     this algorithm and protocol, or 0 to leave NCCL's
     */
    public record Candidate(Algorithm algorithm, Protocol protocol, int channels, double regret, long chunkSize) {
        /** A candidate that leaves the chunk size to NCCL. */
        public Candidate(Algorithm algorithm, Protocol protocol, int channels, double regret) {
            this(algorithm, protocol, channels, regret, 0L);
        }
    }
}

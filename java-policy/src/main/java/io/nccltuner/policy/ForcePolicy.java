package io.nccltuner.policy;

import java.util.ArrayList;
import java.util.List;

/**
 * Force mode ({@code NCCL_TUNER_JAVA_FORCE=ALGO/PROTO[/channels]}): one candidate for every call,
 * expressed as an ordinary policy so the engine applies it unchanged.
 *
 * <p>The policy has one profile matching any communicator shape and, for each of the five
 * collectives a tuner is asked about (Broadcast, Reduce, AllGather, ReduceScatter, AllReduce), one
 * rule over all sizes ({@code [0, 2^64)}) and any numPipeOps whose only candidate is the forced
 * one. Every call is then a rule hit; where NCCL offers the candidate (its cost-table entry is not
 * -1) the engine sets the entry to 0.0 (and nChannels when given), where it is -1 the engine
 * leaves the table alone, so NCCL's own choice stands. The engine's summary line at destroy
 * ({@code summary profile force:RING/LL128 mode enforce: calls N, rule hits H, applied A})
 * therefore reads: A calls forced, H - A not forced (H = N: every call is a rule hit). When A is 0
 * (NCCL offered the candidate for none of the calls) a second INFO line says so ({@code force
 * RING/LL128/8 applied to none of the 31 calls (...), so NCCL's own pick ran instead}), which
 * {@code nccl-tuner compile} reads in a sweep run's output.
 *
 * <p>Unlike NCCL_ALGO / NCCL_PROTO, which narrow NCCL's table before its selection (and cannot
 * set a channel count; NVIDIA/nccl#1661), force mode keeps NCCL's correctness filter: a candidate
 * NCCL marks unavailable for a call is never used for it.
 */
public final class ForcePolicy {
    private ForcePolicy() {}

    /** How the force profile's name starts ({@link #profileName}). */
    public static final String PROFILE_PREFIX = "force:";

    /**
     * The forced candidate, parsed.
     *
     * @param algorithm NCCL algorithm
     * @param protocol NCCL protocol
     * @param channels channel count 1..64, or 0 to let NCCL decide
     */
    public record Forced(Algorithm algorithm, Protocol protocol, int channels) {
        /** @return "RING/LL128" or "RING/LL128/8" */
        public String label() {
            return algorithm + "/" + protocol + (channels > 0 ? "/" + channels : "");
        }
    }

    /**
     * Parses {@code ALGO/PROTO[/channels]}, NCCL spellings, any case ("ring/ll128/8").
     *
     * @param text the variable's value
     * @return the candidate
     * @throws IllegalArgumentException naming what is wrong, for anything else
     */
    public static Forced parse(String text) {
        String[] f = text.strip().split("/", -1);
        if (f.length < 2 || f.length > 3) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not ALGO/PROTO or ALGO/PROTO/CHANNELS (e.g. RING/LL128/8)");
        }
        Algorithm a = Algorithm.parse(f[0].strip());
        if (a == null) {
            throw new IllegalArgumentException("'" + f[0].strip()
                    + "' is not an algorithm (TREE, RING, COLLNET_DIRECT, " + "COLLNET_CHAIN, NVLS, NVLS_TREE, PAT)");
        }
        Protocol p = Protocol.parse(f[1].strip());
        if (p == null) {
            throw new IllegalArgumentException("'" + f[1].strip() + "' is not a protocol (LL, LL128, SIMPLE)");
        }
        int ch = 0;
        if (f.length == 3) {
            try {
                ch = Integer.parseInt(f[2].strip());
            } catch (NumberFormatException e) {
                ch = -1;
            }
            if (ch < 1 || ch > PolicyLoader.MAX_CHANNELS) {
                throw new IllegalArgumentException(
                        "channels '" + f[2].strip() + "' is not a count in 1.." + PolicyLoader.MAX_CHANNELS);
            }
        }
        return new Forced(a, p, ch);
    }

    /**
     * The profile's name, which the engine's init and summary lines print.
     *
     * @param forced the candidate
     * @return {@code force:ALGO/PROTO[/channels]}
     */
    public static String profileName(Forced forced) {
        return PROFILE_PREFIX + forced.label();
    }

    /**
     * The policy that forces one candidate.
     *
     * @param forced the candidate
     * @return a policy named {@code force-ALGO-PROTO[-channels]}, mode enforce, whose one profile
     *     is named {@link #profileName}
     */
    public static Policy of(Forced forced) {
        Policy.Candidate c = new Policy.Candidate(forced.algorithm(), forced.protocol(), forced.channels(), Double.NaN);
        List<Policy.Rule> rules = new ArrayList<>();
        for (Collective coll : Collective.values()) {
            rules.add(new Policy.Rule(coll, 0, -1L, Policy.Range.ANY, null, Double.NaN, List.of(c)));
        }
        Policy.Profile profile = new Policy.Profile(profileName(forced), Policy.Range.ANY, Policy.Range.ANY, rules);
        return new Policy(
                "force-" + forced.label().replace('/', '-'),
                Mode.ENFORCE,
                "NCCL_TUNER_JAVA_FORCE=" + forced.label(),
                List.of(profile),
                null);
    }
}

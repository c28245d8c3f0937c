package io.nccltuner.policy;

import java.nio.file.Path;
import java.util.List;

/**
 * A validated policy (schema {@code nccl-tuner-java/v1}, see docs/policy-format.md).
 *
 * @param name policy name, logged at init
 * @param mode mode from the file (before any NCCL_TUNER_JAVA_MODE override)
 * @param description free text, may be empty
 * @param profiles profiles in file order; the first matching (nRanks, nNodes) wins
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
   * The first profile that matches a communicator.
   *
   * @param nRanks number of ranks in the communicator
   * @param nNodes number of nodes in the communicator
   * @return the profile, or null if none matches
   */
  public Profile profileFor(long nRanks, long nNodes) {
    for (Profile p : profiles) {
      if (p.nRanks().contains(nRanks) && p.nNodes().contains(nNodes)) {
        return p;
      }
    }
    return null;
  }

  /**
   * A named set of rules for communicators of a given shape.
   *
   * @param name unique within the policy
   * @param nRanks ranks matched
   * @param nNodes nodes matched
   * @param rules non-overlapping rules
   */
  public record Profile(String name, Range nRanks, Range nNodes, List<Rule> rules) {
    public Profile {
      rules = List.copyOf(rules);
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
   */
  public record Rule(
      Collective collective,
      long fromBytes,
      long toBytes,
      Range numPipeOps,
      Candidate ncclPick,
      double ncclRegret,
      List<Candidate> candidates) {
    public Rule {
      candidates = List.copyOf(candidates);
    }

    /** @return whether nBytes (unsigned) is in [fromBytes, toBytes) */
    public boolean containsBytes(long nBytes) {
      return Long.compareUnsigned(nBytes, fromBytes) >= 0
          && (toBytes == -1L || Long.compareUnsigned(nBytes, toBytes) < 0);
    }
  }

  /**
   * A ranked candidate.
   *
   * @param algorithm NCCL algorithm
   * @param protocol NCCL protocol
   * @param channels channel count to set, 1..64, or 0 to let NCCL decide
   * @param regret measured time / best time - 1 (0.0 for the best), or NaN when not given
   */
  public record Candidate(Algorithm algorithm, Protocol protocol, int channels, double regret) {}
}

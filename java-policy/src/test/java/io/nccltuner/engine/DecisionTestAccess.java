package io.nccltuner.engine;

/** Test access to the package-private decision-code builder. */
public final class DecisionTestAccess {
    private DecisionTestAccess() {}

    /** @return {@link Decision#rule}'s code */
    public static int rule(int bucket, int arm, int ncclPick, int candidate, int channels) {
        return Decision.rule(bucket, arm, ncclPick, candidate, channels);
    }
}

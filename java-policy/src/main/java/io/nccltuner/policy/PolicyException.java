package io.nccltuner.policy;

import java.util.List;

/**
 * A policy that cannot be loaded. {@link #getMessage()} is one line: the first problem as
 * {@code file:line:column: field.path: what is wrong; what to do}, followed by "(and N more)"
 * when there are several; {@link #problems()} lists all of them.
 */
public final class PolicyException extends Exception {
    private static final long serialVersionUID = 1L;

    /** An immutable copy ({@link List#copyOf}); transient: a PolicyException is never serialised. */
    private final transient List<String> problems;

    /** @param problems one or more messages, each naming file:line:column and the field */
    public PolicyException(List<String> problems) {
        super(summary(problems));
        this.problems = List.copyOf(problems);
    }

    /** @param problem one message naming file:line:column and the field */
    public PolicyException(String problem) {
        this(List.of(problem));
    }

    /** @return every problem found, in file order */
    public List<String> problems() {
        return problems;
    }

    private static String summary(List<String> problems) {
        if (problems.isEmpty()) {
            return "policy refused";
        }
        return problems.size() == 1
                ? problems.getFirst()
                : problems.getFirst() + " (and " + (problems.size() - 1) + " more)";
    }
}

package io.nccltuner.model;

/**
 * A log line that looks like a table row or selection line but could not be read, or that could
 * not be placed; the parser reports it and does not guess.
 *
 * @param line line number (1-based)
 * @param text the line
 * @param reason what is wrong
 */
public record LogProblem(int line, String text, String reason) {
    /** @return "line N: reason: text" */
    @Override
    public String toString() {
        return "line " + line + ": " + reason + ": " + text.strip();
    }
}

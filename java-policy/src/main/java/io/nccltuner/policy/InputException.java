package io.nccltuner.policy;

/**
 * An input file the compiler or importer cannot use. The message always starts with
 * {@code file:line:} (or {@code file:} when the problem is the whole file) and says what to do.
 */
public final class InputException extends Exception {
  private final String where;

  /**
   * @param where {@code file:line} (or {@code file}) of the problem
   * @param message what is wrong and what to do, without the location
   */
  public InputException(String where, String message) {
    super(where + ": " + message);
    this.where = where;
  }

  /** @return {@code file:line} (or {@code file}) of the problem */
  public String where() {
    return where;
  }
}

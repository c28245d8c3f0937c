package io.nccltuner.compile;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What the input parsers collected: measurements, NCCL's selections, refused rows and warnings.
 * Parsers append to one set so that several files (replicates, one file per forced configuration)
 * compile together.
 */
public final class MeasurementSet {
  private final List<Measurement> measurements = new ArrayList<>();
  private final List<Selection> selections = new ArrayList<>();
  private final List<String> refused = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();

  /** @param m a measurement to use */
  public void add(Measurement m) {
    measurements.add(m);
  }

  /** @param s a selection NCCL logged */
  public void add(Selection s) {
    selections.add(s);
  }

  /**
   * Records a row that is never used.
   *
   * @param where {@code file:line}
   * @param why the reason, e.g. "#wrong = 4 (out-of-place)"
   */
  public void refuse(String where, String why) {
    refused.add(where + ": " + why);
  }

  /**
   * Records a warning for the report.
   *
   * @param where {@code file:line} or {@code file}
   * @param what what happened and what was done about it
   */
  public void warn(String where, String what) {
    warnings.add(where + ": " + what);
  }

  /** @return measurements in reading order */
  public List<Measurement> measurements() {
    return Collections.unmodifiableList(measurements);
  }

  /** @return selections in reading order */
  public List<Selection> selections() {
    return Collections.unmodifiableList(selections);
  }

  /** @return refused rows as {@code file:line: reason} */
  public List<String> refused() {
    return Collections.unmodifiableList(refused);
  }

  /** @return warnings as {@code file[:line]: text} */
  public List<String> warnings() {
    return Collections.unmodifiableList(warnings);
  }
}

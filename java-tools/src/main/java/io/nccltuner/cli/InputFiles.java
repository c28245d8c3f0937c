package io.nccltuner.cli;

import io.nccltuner.compile.Compiler;
import io.nccltuner.compile.MeasurementCsv;
import io.nccltuner.compile.MeasurementSet;
import io.nccltuner.compile.NcclTestsLog;
import io.nccltuner.policy.InputException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Input files of the commands: messages for files that cannot be read, naming the file ("x.log: no
 * such file"), and reading measurement files (sweep CSV or nccl-tests output).
 */
final class InputFiles {
  private InputFiles() {}

  /**
   * Why a path cannot be read as an input file.
   *
   * @param p the path given
   * @return "no such file", "is a directory, not a file", "cannot be read (permission denied)",
   *     "not a regular file", or null when it is a readable regular file
   */
  static String problem(Path p) {
    if (Files.isDirectory(p)) {
      return "is a directory, not a file";
    }
    if (!Files.exists(p)) {
      return "no such file";
    }
    if (!Files.isReadable(p)) {
      return "cannot be read (permission denied)";
    }
    if (!Files.isRegularFile(p)) {
      return "not a regular file";
    }
    return null;
  }

  /**
   * An I/O exception as one line naming the file.
   *
   * @param e the exception
   * @param fallback the file to name when the exception does not
   * @return e.g. "x.log: no such file", "out/p.yaml: cannot write: Read-only file system"
   */
  static String describe(IOException e, Path fallback) {
    if (e instanceof FileSystemException f) {
      String file = f.getFile() != null ? f.getFile() : String.valueOf(fallback);
      if (f instanceof NoSuchFileException) {
        return file + ": no such file" + (f.getOtherFile() != null ? " (" + f.getOtherFile() + ")" : "");
      }
      if (f instanceof AccessDeniedException) {
        return file + ": permission denied";
      }
      return file + ": " + (f.getReason() != null ? f.getReason() : f.getClass().getSimpleName());
    }
    String m = e.getMessage();
    return (fallback == null ? "" : fallback + ": ") + (m == null ? e.getClass().getSimpleName() : m);
  }

  /**
   * Refuses a path that cannot be read as an input file.
   *
   * @param p the path given
   * @throws InputException {@code <p>: <}{@link #problem}{@code >}
   */
  static void requireReadable(Path p) throws InputException {
    String why = problem(p);
    if (why != null) {
      throw new InputException(p.toString(), why);
    }
  }

  /**
   * Reads one measurement file into a set: a sweep or optimize_config.py CSV (detected by its
   * header) or nccl-tests output.
   *
   * @param f the file (checked with {@link #requireReadable} first)
   * @param o how to read nccl-tests output
   * @param data where the measurements go
   * @throws InputException for an unreadable file or a line the parser refuses (file:line)
   * @throws IOException if reading fails
   */
  static void readMeasurements(Path f, NcclTestsLog.Options o, MeasurementSet data) throws IOException, InputException {
    requireReadable(f);
    if (MeasurementCsv.looksLike(f)) {
      MeasurementCsv.parse(f, data, o.strict());
    } else {
      NcclTestsLog.parse(f, o, data);
    }
  }

  /**
   * The measured groups (collective, shape, sizes, candidates' times) of one measurement file, for
   * pricing picks in {@code explain} and {@code replay}.
   *
   * @param f the file
   * @param command the command's name (in the compiler's defaults)
   * @return the groups {@link Compiler#compile} forms with its default options
   * @throws InputException as {@link #readMeasurements}
   * @throws IOException if reading fails
   */
  static List<Compiler.Group> measuredGroups(Path f, String command) throws IOException, InputException {
    MeasurementSet data = new MeasurementSet();
    readMeasurements(f, NcclTestsLog.Options.NONE, data);
    return Compiler.compile(data, Compiler.Options.defaults(command)).groups();
  }
}

package io.nccltuner.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Messages for files that cannot be read, naming the file: "x.log: no such file". */
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
}

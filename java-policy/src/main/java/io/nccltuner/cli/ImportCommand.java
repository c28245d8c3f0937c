package io.nccltuner.cli;

import picocli.CommandLine.Command;

/** Placeholder for {@code nccl-tuner import}; replaced by the issue that builds it. */
@Command(name = "import", description = "(not built yet)")
final class ImportCommand implements java.util.concurrent.Callable<Integer> {
  @Override
  public Integer call() {
    System.err.println("nccl-tuner import: not built yet");
    return 2;
  }
}

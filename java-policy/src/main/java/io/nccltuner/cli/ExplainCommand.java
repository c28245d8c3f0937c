package io.nccltuner.cli;

import picocli.CommandLine.Command;

/** Placeholder for {@code nccl-tuner explain}; replaced by the issue that builds it. */
@Command(name = "explain", description = "(not built yet)")
final class ExplainCommand implements java.util.concurrent.Callable<Integer> {
  @Override
  public Integer call() {
    System.err.println("nccl-tuner explain: not built yet");
    return 2;
  }
}

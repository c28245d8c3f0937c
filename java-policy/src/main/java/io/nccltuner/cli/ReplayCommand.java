package io.nccltuner.cli;

import picocli.CommandLine.Command;

/** Placeholder for {@code nccl-tuner replay}; replaced by the issue that builds it. */
@Command(name = "replay", description = "(not built yet)")
final class ReplayCommand implements java.util.concurrent.Callable<Integer> {
  @Override
  public Integer call() {
    System.err.println("nccl-tuner replay: not built yet");
    return 2;
  }
}

package io.nccltuner.cli;

import picocli.CommandLine.Command;

/** Placeholder for {@code nccl-tuner compile}; replaced by the issue that builds it. */
@Command(name = "compile", description = "(not built yet)")
final class CompileCommand implements java.util.concurrent.Callable<Integer> {
  @Override
  public Integer call() {
    System.err.println("nccl-tuner compile: not built yet");
    return 2;
  }
}

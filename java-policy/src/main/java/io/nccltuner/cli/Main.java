package io.nccltuner.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code nccl-tuner}: the offline side of nccl-tuner-java. Subcommands compile measurements into a
 * policy, import NCCL example-tuner CSV configs, explain NCCL's cost model from its logs and replay
 * captured tuner calls through the same engine the plugin runs.
 *
 * <p>Exit codes: 0 success, 1 a usage or input error (the message names file and line), 2 an
 * internal error.
 */
@Command(
    name = "nccl-tuner",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Offline tools for the nccl-tuner-java NCCL tuner plugin.",
    subcommands = {
      CompileCommand.class,
      ImportCommand.class,
      ExplainCommand.class,
      ReplayCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Entry point; exits the JVM with the command's exit code. */
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /**
   * Runs the command line without exiting, for tests.
   *
   * @param args command-line arguments
   * @return the exit code
   */
  public static int run(String... args) {
    return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** Version from the jar manifest (Implementation-Version), or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"nccl-tuner " + (v == null ? "dev" : v)};
    }
  }
}

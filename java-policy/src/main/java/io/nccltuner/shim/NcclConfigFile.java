package io.nccltuner.shim;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import java.nio.file.Path;

/** Reads an NCCL example-tuner CSV ({@code NCCL_TUNER_CONFIG_FILE}) as a policy. */
final class NcclConfigFile {
  private NcclConfigFile() {}

  /**
   * @param csv the CSV file
   * @return the policy it describes
   * @throws PolicyException naming file and line of the first bad row
   */
  static Policy load(Path csv) throws PolicyException {
    throw new PolicyException(csv + ": NCCL_TUNER_CONFIG_FILE is not supported by this build yet");
  }
}

package io.nccltuner.ffm;

import io.nccltuner.policy.InputException;
import io.nccltuner.policy.NcclExampleConfig;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads an NCCL example-tuner CSV ({@code NCCL_TUNER_CONFIG_FILE}, the format of NCCL's
 * plugins/tuner/example) as a policy, so a user of NCCL's example plugin only changes the library
 * name. The conversion is {@link NcclExampleConfig#toPolicy(Path, java.util.function.Consumer)}.
 */
final class NcclConfigFile {
    private NcclConfigFile() {}

    /**
     * @param csv the CSV file
     * @param approximations receives each approximation the conversion made ({@code file:line: text})
     * @return the policy it describes
     * @throws PolicyException naming file and line of the first refused row, or why the file cannot
     *     be read
     */
    static Policy load(Path csv, List<String> approximations) throws PolicyException {
        // Checked before any open: reading a FIFO blocks until a writer comes, and with it the host's
        // init for ever (found by a hostile host); isRegularFile is a stat, which does not block.
        if (java.nio.file.Files.exists(csv) && !java.nio.file.Files.isRegularFile(csv)) {
            throw new PolicyException(csv + ": cannot read NCCL_TUNER_CONFIG_FILE: not a regular file (a directory,"
                    + " FIFO or device)");
        }
        try {
            return NcclExampleConfig.toPolicy(csv, approximations::add);
        } catch (InputException e) {
            throw new PolicyException(e.getMessage());
        } catch (IOException e) {
            throw new PolicyException(csv + ": cannot read NCCL_TUNER_CONFIG_FILE: "
                    + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.toString()));
        }
    }

    /** As {@link #load(Path, List)}, dropping the approximations. */
    static Policy load(Path csv) throws PolicyException {
        return load(csv, new ArrayList<>());
    }
}

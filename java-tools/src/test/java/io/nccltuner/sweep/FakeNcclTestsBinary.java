package io.nccltuner.sweep;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Stand-in nccl-tests binaries for the tests of the sweep runner and of {@code nccl-tuner sweep}:
 * shell scripts that print what an nccl-tests 2.18 program prints for one size and touch no GPU,
 * and the plugin file a sweep names but a fake never loads.
 */
public final class FakeNcclTestsBinary {
    private FakeNcclTestsBinary() {}

    /**
     * Writes an executable {@code /bin/sh} script: {@code prologue} (shell lines, or ""), then the
     * output of nccl-tests 2.18.5 on NCCL 2.28.9 with two NVIDIA H200 ranks, one on nodeA and one on
     * nodeB, and one row: 1024 bytes of float taking {@code time} us out of place and in place.
     *
     * @param file where the script goes
     * @param prologue shell lines run first, each ending in a newline
     * @param collective the program the output names ("Collective test starting"), a shell word:
     *     {@code $1} is the script's first argument
     * @param time the row's two times, a shell word: {@code $t} is a variable the prologue set
     * @return {@code file}
     * @throws IOException if the script cannot be written
     */
    public static Path write(Path file, String prologue, String collective, String time) throws IOException {
        Files.writeString(file, "#!/bin/sh\n" + prologue + """
                cat <<OUT
                # nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809
                # Collective test starting: %s
                # nThread 1 nGpus 1 minBytes 1024 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
                #
                # Using devices
                #  Rank  0 Group  0 Pid   100 on      nodeA device  0 [0x18] NVIDIA H200
                #  Rank  1 Group  0 Pid   101 on      nodeB device  0 [0x18] NVIDIA H200
                #
                #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
                #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
                        1024           256     float     sum      -1    %s    0.05    0.05      0    %s    0.05    0.05      0
                # Out of bounds values : 0 OK
                # Avg bus bandwidth    : 0.05
                OUT
                """.formatted(collective, time, time));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /**
     * The plugin library a sweep's {@code --plugin} names, in {@code dir}: the file exists (the sweep
     * checks that), and no fake loads it.
     *
     * @param dir the folder it goes in
     * @return its path, {@code dir/libnccl-tuner-java.so}
     * @throws IOException if it cannot be written
     */
    public static Path plugin(Path dir) throws IOException {
        Path p = dir.resolve("libnccl-tuner-java.so");
        if (!Files.exists(p)) {
            Files.writeString(p, "not loaded by the fake");
        }
        return p;
    }
}

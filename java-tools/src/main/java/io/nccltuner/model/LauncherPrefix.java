package io.nccltuner.model;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The prefixes launchers put before every line of a rank's output: Ray's {@code (RayWorkerWrapper
 * pid=4711, ip=10.0.0.5) }, then {@code mpirun --tag-output}'s {@code [1,0]<stdout>:} or
 * {@code srun -l}'s {@code 0: }. One set for every reader of NCCL and nccl-tests output (compile's
 * {@code NcclTestsLog}, explain's {@link NcclModelLog}).
 */
public final class LauncherPrefix {
    private LauncherPrefix() {}

    /** {@code srun -l}: {@code 0: } or right-aligned {@code   12: } before every line. */
    public static final Pattern SRUN = Pattern.compile("^\\s*\\d+: ?");
    /**
     * Ray's prefix of a worker's output: {@code (RayTrainWorker pid=3808)}, {@code (head, rank=0,
     * pid=3808, ip=10.0.0.1)}; an mpirun or srun prefix may follow it.
     */
    public static final Pattern RAY = Pattern.compile("^\\([^()]*\\bpid=\\d+[^()]*\\) ?");
    /** {@code mpirun --tag-output} (Open MPI): {@code [1,0]<stdout>:} before every line. */
    public static final Pattern MPIRUN = Pattern.compile("^\\[\\d+,\\d+\\]<(?:stdout|stderr|stddiag)>: ?");

    /**
     * @param line a line of output
     * @return the line without a Ray prefix and an mpirun or srun prefix after it; the line itself
     *     when it carries none
     */
    public static String strip(String line) {
        Matcher ray = RAY.matcher(line);
        if (ray.find()) {
            line = line.substring(ray.end());
        }
        Matcher m = MPIRUN.matcher(line);
        if (m.find()) {
            return line.substring(m.end());
        }
        m = SRUN.matcher(line);
        return m.find() ? line.substring(m.end()) : line;
    }
}

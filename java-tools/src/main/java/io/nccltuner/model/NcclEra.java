package io.nccltuner.model;

import io.nccltuner.policy.Signature;
import java.util.List;

/**
 * The NCCL release an offline command runs the engine as, in the spellings of {@code nccl-tuner try
 * --nccl-era} and the harness (tests/harness/harness.c kEras): the tuner ABI that NCCL's core
 * uses, and the version code ncclGetVersion reports. From tuner v4 (2.24) NCCL passes regBuff, so
 * rules naming {@code regBuff} can match (a captured trace has no regBuff: the calls pass 0, an
 * unregistered buffer, as the harness's default {@code --regbuff 0}); under v3 they never do.
 *
 * @param name "2.28"
 * @param tunerVersion the tuner ABI of that NCCL's core: 3 (2.22), 4 (2.24), 5 (2.28), 6 (2.30), 7 (2.32.6)
 * @param versionCode ncclGetVersion's code (2.28 reports 22809, the release the traces were captured with)
 */
public record NcclEra(String name, int tunerVersion, int versionCode) {
    /** The eras, oldest first. */
    public static final List<NcclEra> ALL = List.of(
            new NcclEra("2.22", 3, 22203),
            new NcclEra("2.24", 4, 22403),
            new NcclEra("2.28", 5, 22809),
            new NcclEra("2.30", 6, 23007),
            new NcclEra("2.32.6", 7, 23206));

    /** What {@code try} and {@code replay} default to. */
    public static final String DEFAULT = "2.28";

    /**
     * @param text one of 2.22, 2.24, 2.28, 2.30, 2.32.6
     * @return the era
     * @throws IllegalArgumentException naming the spellings, for anything else
     */
    public static NcclEra parse(String text) {
        for (NcclEra e : ALL) {
            if (e.name.equals(text == null ? null : text.strip())) {
                return e;
            }
        }
        throw new IllegalArgumentException("--nccl-era '" + text + "' is not 2.22, 2.24, 2.28, 2.30 or 2.32.6");
    }

    /**
     * @param code an NCCL version code (22809)
     * @return the newest era at or below it (2.22 below 2.22), reporting {@code code} itself
     */
    public static NcclEra forVersion(long code) {
        NcclEra at = ALL.getFirst();
        for (NcclEra e : ALL) {
            if (e.versionCode / 100 * 100 <= code) {
                at = e;
            }
        }
        return new NcclEra(at.name, at.tunerVersion, (int) code);
    }

    /** @return the signature an init under this era gives the engine (no commId, GPU or NVLink domains) */
    public Signature signature() {
        return new Signature(tunerVersion, 0, -1, -1, -1, versionCode, "", -1, -1);
    }

    /** @return the regBuff the calls pass: 0 from tuner v4, -1 (unknown) under v3 */
    public int regBuff() {
        return tunerVersion >= 4 ? 0 : -1;
    }
}

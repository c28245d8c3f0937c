package io.nccltuner.model;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An NCCL release number, as NCCL prints it at init ({@code NCCL version 2.28.9+cuda13.0}; source:
 * NCCL src/init.cc, every release since 2.4).
 *
 * @param major major version (2)
 * @param minor minor version (28)
 * @param patch patch level (9)
 */
public record NcclVersion(int major, int minor, int patch) implements Comparable<NcclVersion> {
    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)");

    /**
     * Parses "2.28.9", "2.28.9+cuda13.0" or "v2.28.9-1".
     *
     * @param text the version text
     * @return the version
     * @throws IllegalArgumentException if the text holds no {@code major.minor.patch}
     */
    public static NcclVersion parse(String text) {
        Matcher m = VERSION.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException("not an NCCL version: '" + text + "'");
        }
        return new NcclVersion(
                Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
    }

    /**
     * @param major major version
     * @param minor minor version
     * @return whether this release is {@code major.minor.0} or later
     */
    public boolean atLeast(int major, int minor) {
        return compareTo(new NcclVersion(major, minor, 0)) >= 0;
    }

    @Override
    public int compareTo(NcclVersion o) {
        if (major != o.major) {
            return Integer.compare(major, o.major);
        }
        if (minor != o.minor) {
            return Integer.compare(minor, o.minor);
        }
        return Integer.compare(patch, o.patch);
    }

    /** @return "2.28.9" */
    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }
}

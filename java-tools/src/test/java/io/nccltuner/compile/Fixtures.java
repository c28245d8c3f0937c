package io.nccltuner.compile;

import java.net.URISyntaxException;
import java.nio.file.Path;

/** Test fixtures under src/test/resources/compile. */
final class Fixtures {
    /** The repository root (set by surefire). */
    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));

    private Fixtures() {}

    /** A captured trace or NCCL log under tests/traces (one copy for all tests). */
    static Path trace(String name) {
        return REPO.resolve("tests/traces").resolve(name);
    }

    static Path path(String name) {
        try {
            var url = Fixtures.class.getResource("/compile/" + name);
            if (url == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static MeasurementSet read(String... names) throws Exception {
        MeasurementSet s = new MeasurementSet();
        for (String n : names) {
            Path p = n.startsWith("tests/traces/") ? REPO.resolve(n) : path(n);
            if (MeasurementCsv.looksLike(p)) {
                MeasurementCsv.parse(p, s);
            } else if (n.endsWith(".log")) {
                NcclRunLog.readSelections(p, s);
            } else {
                NcclTestsLog.parse(p, NcclTestsLog.Options.NONE, s);
            }
        }
        return s;
    }
}

package io.nccltuner.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every install path in the README and docs/ (docs/dev/ included) is the folder the README's install
 * line unpacks to (the tarball unpacks to /opt/nccl-tuner-java-VERSION-linux-x86_64/, not
 * /opt/nccl-tuner-java/).
 */
class InstallPathDocsTest {
    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));

    @Test
    void everyOptPathIsTheInstallLinesFolder() throws Exception {
        String readme = Files.readString(REPO.resolve("README.md"));
        Matcher install = Pattern.compile("tar xzf (nccl-tuner-java-[^ ]+)\\.tar\\.gz -C /opt && cd /opt/(\\S+)")
                .matcher(readme);
        assertTrue(install.find(), "the README's install line");
        assertEquals(install.group(1), install.group(2));
        String dir = "/opt/" + install.group(2) + "/";
        List<Path> files = new ArrayList<>(List.of(REPO.resolve("README.md")));
        try (Stream<Path> s = Files.walk(REPO.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        List<String> wrong = new ArrayList<>();
        Pattern opt = Pattern.compile("/opt/nccl-tuner-java[^\\s/]*/");
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = opt.matcher(lines.get(i));
                while (m.find()) {
                    if (!m.group().equals(dir)) {
                        wrong.add(REPO.relativize(f) + ":" + (i + 1) + ": " + m.group());
                    }
                }
            }
        }
        assertEquals(List.of(), wrong, "install paths other than " + dir);
    }
}

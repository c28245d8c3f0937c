package io.nccltuner.policy;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Where each profile, rule and candidate of a policy YAML starts, by its path ({@code profiles[0]},
 * {@code profiles[0].rules[2]}, {@code profiles[0].rules[2].candidates[1]}), so that messages about
 * a policy that loaded (validate's findings) can name the line and column as the loader's own
 * problems do ({@code p.yaml:14:9: profiles[0].rules[2]: ...}). Read with the loader's {@link
 * YamlTree}, whose nodes keep SnakeYAML's start marks (1-based).
 */
public final class PolicyLines {
    private final Map<String, int[]> at;

    private PolicyLines(Map<String, int[]> at) {
        this.at = at;
    }

    /**
     * Reads a policy YAML's node positions.
     *
     * @param file the policy (UTF-8, at most {@link PolicyLoader#MAX_FILE_BYTES})
     * @return the positions; none for a file that does not parse, or whose profiles are not a list
     * @throws IOException if it cannot be read
     */
    public static PolicyLines of(Path file) throws IOException {
        Map<String, int[]> at = new HashMap<>();
        YamlTree.Node root;
        try {
            root = YamlTree.parse(new StringReader(PolicyText.read(file, PolicyLoader.MAX_FILE_BYTES)));
        } catch (YamlTree.ParseError | InputException e) {
            return new PolicyLines(at); // the loader names these problems itself
        }
        if (root instanceof YamlTree.MapNode m
                && m.entries().get("profiles") != null
                && m.entries().get("profiles").value() instanceof YamlTree.ListNode profiles) {
            for (int i = 0; i < profiles.items().size(); i++) {
                YamlTree.Node p = profiles.items().get(i);
                String pPath = "profiles[" + i + "]";
                put(at, pPath, p);
                if (list(p, "rules") instanceof YamlTree.ListNode rules) {
                    for (int j = 0; j < rules.items().size(); j++) {
                        YamlTree.Node r = rules.items().get(j);
                        String rPath = pPath + ".rules[" + j + "]";
                        put(at, rPath, r);
                        if (list(r, "candidates") instanceof YamlTree.ListNode cs) {
                            for (int k = 0; k < cs.items().size(); k++) {
                                put(
                                        at,
                                        rPath + ".candidates[" + k + "]",
                                        cs.items().get(k));
                            }
                        }
                    }
                }
            }
        }
        return new PolicyLines(at);
    }

    private static YamlTree.Node list(YamlTree.Node map, String key) {
        return map instanceof YamlTree.MapNode m && m.entries().get(key) != null
                ? m.entries().get(key).value()
                : null;
    }

    private static void put(Map<String, int[]> at, String path, YamlTree.Node n) {
        at.put(path, new int[] {n.line(), n.column()});
    }

    /**
     * Where a node starts.
     *
     * @param path {@code profiles[i]}, {@code profiles[i].rules[j]} or {@code
     *     profiles[i].rules[j].candidates[k]}
     * @return {@code line:column} (1-based), or null for a path the file does not have
     */
    public String at(String path) {
        int[] lc = at.get(path);
        return lc == null ? null : lc[0] + ":" + lc[1];
    }
}

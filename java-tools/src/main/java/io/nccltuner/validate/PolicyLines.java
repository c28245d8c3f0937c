package io.nccltuner.validate;

import io.nccltuner.policy.InputException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.PolicyText;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.composer.Composer;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Where each profile, rule and candidate of a policy YAML starts, by its path ({@code profiles[0]},
 * {@code profiles[0].rules[2]}, {@code profiles[0].rules[2].candidates[1]}), so that messages about
 * a policy that loaded (validate's findings) can name the line and column as the loader's own
 * problems do ({@code p.yaml:14:9: profiles[0].rules[2]: ...}): SnakeYAML's start mark of each
 * node (made 1-based), the marks the loader names its problems with. Only for a file {@link
 * PolicyLoader} accepted (no aliases, one document, within its limits); a tool's class, not the
 * plugin's.
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
        Node root;
        try {
            // the composer alone: SnakeYAML's Yaml front class needs java.util.logging, which the
            // distribution's runtime leaves out
            LoaderOptions o = new LoaderOptions();
            o.setAllowRecursiveKeys(false);
            o.setMaxAliasesForCollections(0);
            root = new Composer(
                            new ParserImpl(
                                    new StreamReader(
                                            new StringReader(PolicyText.read(file, PolicyLoader.MAX_FILE_BYTES))),
                                    o),
                            new Resolver(),
                            o)
                    .getSingleNode();
        } catch (RuntimeException | InputException e) {
            return new PolicyLines(at); // the loader names these problems itself
        }
        if (value(root, "profiles") instanceof SequenceNode profiles) {
            for (int i = 0; i < profiles.getValue().size(); i++) {
                Node p = profiles.getValue().get(i);
                String pPath = "profiles[" + i + "]";
                put(at, pPath, p);
                if (value(p, "rules") instanceof SequenceNode rules) {
                    for (int j = 0; j < rules.getValue().size(); j++) {
                        Node r = rules.getValue().get(j);
                        String rPath = pPath + ".rules[" + j + "]";
                        put(at, rPath, r);
                        if (value(r, "candidates") instanceof SequenceNode cs) {
                            for (int k = 0; k < cs.getValue().size(); k++) {
                                put(
                                        at,
                                        rPath + ".candidates[" + k + "]",
                                        cs.getValue().get(k));
                            }
                        }
                    }
                }
            }
        }
        return new PolicyLines(at);
    }

    /** @return the value of {@code key} in a mapping node, or null */
    private static Node value(Node map, String key) {
        if (map instanceof MappingNode m) {
            for (NodeTuple t : m.getValue()) {
                if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) {
                    return t.getValueNode();
                }
            }
        }
        return null;
    }

    private static void put(Map<String, int[]> at, String path, Node n) {
        at.put(path, new int[] {n.getStartMark().getLine() + 1, n.getStartMark().getColumn() + 1});
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

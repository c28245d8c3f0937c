package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import io.nccltuner.policy.YamlTree.Entry;
import io.nccltuner.policy.YamlTree.ListNode;
import io.nccltuner.policy.YamlTree.MapNode;
import io.nccltuner.policy.YamlTree.Node;
import io.nccltuner.policy.YamlTree.ParseError;
import io.nccltuner.policy.YamlTree.Scalar;
import io.nccltuner.policy.YamlTree.Type;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * {@link YamlTree} reads SnakeYAML's events itself; before, Jackson's YAML parser
 * (jackson-dataformat-yaml, over the same SnakeYAML parser) read them. These tests hold the two
 * readings side by side: {@link #jackson} is the former YamlTree, token by token, and for every
 * policy file in the repository (the hostile corpus included) and every scalar spelling below,
 * both must give the same tree (the same types, texts, lines and columns) or both refuse at the
 * same line and column with the same message (less Jackson's "from StreamReadConstraints" tail).
 */
class YamlTreeTest {
    static final Path REPO = PolicyLoaderTest.REPO;

    /** What a reading gave: the tree, or "refused L:C message". */
    static Object read(String yaml) {
        try {
            return YamlTree.parse(new StringReader(yaml));
        } catch (ParseError e) {
            return "refused " + e.line + ":" + e.column + " " + e.getMessage();
        }
    }

    /** The same by Jackson, as the former YamlTree read it (commit 6d0c95a). */
    static Object jackson(String yaml) {
        LoaderOptions opts = new LoaderOptions();
        opts.setAllowDuplicateKeys(false);
        opts.setMaxAliasesForCollections(1);
        opts.setNestingDepthLimit(YamlTree.MAX_DEPTH);
        opts.setCodePointLimit(YamlTree.MAX_CODE_POINTS);
        opts.setAllowRecursiveKeys(false);
        YAMLFactory factory = YAMLFactory.builder()
                .loaderOptions(opts)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(YamlTree.MAX_DEPTH)
                        .maxStringLength(64 * 1024)
                        .maxNumberLength(64)
                        .build())
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
        JsonParser parser = null;
        try (JsonParser p = factory.createParser(new StringReader(yaml))) {
            parser = p;
            JsonToken t = p.nextToken();
            if (t == null) {
                return null;
            }
            Node root = jacksonNode(p, t, 1);
            if (p.nextToken() != null) {
                JsonLocation l = p.currentTokenLocation();
                return "refused " + l.getLineNr() + ":" + l.getColumnNr()
                        + " more than one YAML document; a policy is one document";
            }
            return root;
        } catch (JsonProcessingException e) {
            JsonLocation l = e.getLocation() != null ? e.getLocation() : parser.currentLocation();
            ParseError marked = YamlTree.marked(e);
            if (marked != null) {
                return "refused " + marked.line + ":" + marked.column + " " + marked.getMessage();
            }
            String msg = e.getOriginalMessage().lines().findFirst().orElse("malformed YAML");
            return "refused " + l.getLineNr() + ":" + l.getColumnNr() + " malformed YAML: "
                    + msg.replaceAll(", from `StreamReadConstraints\\.[A-Za-z]+\\(\\)`", "");
        } catch (IOException | RuntimeException e) {
            JsonLocation l = parser == null ? null : parser.currentLocation();
            String msg = String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString());
            return "refused " + (l == null ? "0:0" : l.getLineNr() + ":" + l.getColumnNr()) + " malformed YAML: " + msg;
        } catch (Refused r) {
            return r.getMessage();
        }
    }

    private static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(JsonLocation l, String message) {
            super("refused " + l.getLineNr() + ":" + l.getColumnNr() + " " + message);
        }
    }

    private static Node jacksonNode(JsonParser p, JsonToken t, int depth) throws IOException, Refused {
        JsonLocation loc = p.currentTokenLocation();
        int line = loc.getLineNr();
        int col = loc.getColumnNr();
        if (depth > YamlTree.MAX_DEPTH) {
            throw new Refused(loc, "nesting deeper than " + YamlTree.MAX_DEPTH + " levels");
        }
        if (p.getTypeId() != null) {
            throw new Refused(loc, "YAML tags (" + p.getTypeId() + ") are not allowed in a policy");
        }
        if (p.getObjectId() != null) {
            throw new Refused(loc, "YAML anchors (&" + p.getObjectId() + ") are not allowed in a policy");
        }
        switch (t) {
            case START_OBJECT -> {
                Map<String, Entry> entries = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    JsonLocation kl = p.currentTokenLocation();
                    String key = p.currentName();
                    Node v = jacksonNode(p, p.nextToken(), depth + 1);
                    entries.put(key, new Entry(key, kl.getLineNr(), kl.getColumnNr(), v));
                }
                return new MapNode(entries, line, col);
            }
            case START_ARRAY -> {
                List<Node> items = new ArrayList<>();
                JsonToken i;
                while ((i = p.nextToken()) != JsonToken.END_ARRAY) {
                    items.add(jacksonNode(p, i, depth + 1));
                }
                return new ListNode(items, line, col);
            }
            default -> {
                Type type = switch (t) {
                    case VALUE_STRING -> Type.STRING;
                    case VALUE_NUMBER_INT -> Type.INT;
                    case VALUE_NUMBER_FLOAT -> Type.FLOAT;
                    case VALUE_TRUE -> Type.TRUE;
                    case VALUE_FALSE -> Type.FALSE;
                    case VALUE_NULL -> Type.NULL;
                    default -> throw new Refused(loc, "unexpected YAML token " + t);
                };
                String text =
                        t == JsonToken.VALUE_NUMBER_INT ? p.getBigIntegerValue().toString() : p.getText();
                if (t == JsonToken.VALUE_STRING && ((YAMLParser) p).isCurrentAlias()) {
                    throw new Refused(loc, "YAML aliases (*" + text + ") are not allowed in a policy");
                }
                return new Scalar(text, type, line, col);
            }
        }
    }

    static List<Path> repositoryPolicies() throws IOException {
        List<Path> out = new ArrayList<>();
        for (String dir : List.of(
                "policies",
                "java-policy/src/test/resources",
                "java-tools/src/test/resources",
                "tests/gpu/testdata",
                "tests/oracle/repro")) {
            try (Stream<Path> s = Files.walk(REPO.resolve(dir))) {
                s.filter(f -> f.toString().endsWith(".yaml")).sorted().forEach(out::add);
            }
        }
        return out;
    }

    @Test
    void everyPolicyInTheRepositoryReadsAsJacksonReadIt() throws Exception {
        List<Path> files = repositoryPolicies();
        assertTrue(files.size() >= 85, files.size() + " policy files");
        int refused = 0;
        for (Path f : files) {
            String text = new String(Files.readAllBytes(f), StandardCharsets.UTF_8);
            Object want = jackson(text);
            assertEquals(want, read(text), f.toString());
            refused += want instanceof String ? 1 : 0;
        }
        assertTrue(refused >= 15, refused + " of the files are refused while parsing (the hostile corpus)");
    }

    /** Plain scalar spellings, around YAML 1.1's implicit types and their edges. */
    static final List<String> SPELLINGS = List.of(
            "0",
            "-0",
            "+0",
            "7",
            "+7",
            "-7",
            "007",
            "010",
            "0_7",
            "08",
            "09",
            "0o10",
            "0x1F",
            "-0x1f",
            "0X1F",
            "0x_1F",
            "0b101",
            "-0b1",
            "0b2",
            "1_000",
            "+1_000",
            "1__0",
            "_1",
            "1_",
            "1:30",
            "190:20:30",
            "-1:30",
            "1:30.5",
            "2147483647",
            "2147483648",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "0xFFFFFFFFFFFFFFFFFFFF",
            "0b" + "1".repeat(70),
            "1".repeat(64),
            "1".repeat(65),
            "-" + "1".repeat(64),
            "+" + "1".repeat(64),
            "+" + "1".repeat(63),
            "1.5",
            "-1.5",
            "+1.5",
            "1e3",
            "1E3",
            "1.0e+3",
            "1.0e3",
            ".5",
            "5.",
            "1_000.5",
            "1.5.6",
            "08.5",
            ".inf",
            "-.inf",
            "+.inf",
            ".Inf",
            ".INF",
            ".nan",
            ".NaN",
            ".NAN",
            "nan",
            "inf",
            "true",
            "True",
            "TRUE",
            "tRUE",
            "false",
            "False",
            "yes",
            "Yes",
            "YES",
            "yEs",
            "no",
            "No",
            "on",
            "On",
            "ON",
            "off",
            "Off",
            "OFF",
            "y",
            "Y",
            "n",
            "N",
            "~",
            "null",
            "Null",
            "NULL",
            "nUll",
            "<<",
            "=",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "1 MiB",
            "1.5 MiB",
            "abc",
            "RING",
            "-",
            "+",
            "+.5",
            "1,000",
            "0x",
            "0b",
            "12e",
            "- a");

    @Test
    void scalarSpellingsAreTypedAsJacksonTypedThem() {
        for (String s : SPELLINGS) {
            for (String doc : List.of(
                    "k: " + s + "\n",
                    "[" + s + "]\n",
                    "{k: " + s + "}\n",
                    "- " + s + "\n",
                    "k: '" + s + "'\n",
                    "k: \"" + s + "\"\n",
                    "k: !!str " + s + "\n",
                    "k: &a " + s + "\n",
                    s + ": v\n")) {
                assertEquals(jackson(doc), read(doc), doc);
            }
        }
    }

    @Test
    void documentsAroundTheEdges() {
        for (String doc : List.of(
                "",
                "# only a comment\n",
                "---\n",
                "...\n",
                "k:\n",
                "k: ''\n",
                "k: \"\"\n",
                "k: |\n  text\n",
                "k: >\n  folded\n  text\n",
                "a: 1\n---\nb: 2\n",
                "a: 1\n---\n",
                "a: 1\n...\n",
                "--- a: 1\n",
                "k: [a, b, {c: d}]\n",
                "? a\n: b\n",
                "? [a]\n: b\n",
                "{[a]: b}\n",
                "*x : 1\n",
                "k: *x\n",
                "&m k: 1\n",
                "k: &m {a: 1}\n",
                "k: &s [1]\n",
                "&r {a: 1}\n",
                "!!map {a: 1}\n",
                "k: !!seq [1]\n",
                "!t k: 1\n",
                "k: ! 1\n",
                "a: 1\na: 2\n",
                "{a: 1, a: 2}\n",
                "a: {b: 1, b: 1}\n",
                "k: [unclosed\n",
                "k:\n\t- 1\n",
                "a: b: c\n",
                "k: " + "[".repeat(40) + "]".repeat(40) + "\n",
                "k:\n" + nestedBlock(40),
                "k: " + "[".repeat(31) + "1" + "]".repeat(31) + "\n",
                "k: " + "[".repeat(32) + "1" + "]".repeat(32) + "\n",
                "k: " + "[".repeat(31) + "[]" + "]".repeat(31) + "\n",
                "\uFEFFk: v\n",
                "k: \"a\\0b\"\n",
                "k: \"\\ud800\"\n",
                "k: \u0085v\n")) {
            assertEquals(jackson(doc), read(doc), doc);
        }
    }

    private static String nestedBlock(int levels) {
        StringBuilder y = new StringBuilder();
        for (int i = 0; i < levels; i++) {
            y.append("  ".repeat(i + 1)).append("k:\n");
        }
        return y.toString();
    }

    @Test
    void integersCarryTheirDecimalAndKeepTheirPlace() throws Exception {
        MapNode m = (MapNode) YamlTree.parse(new StringReader("a: 0x1F\nb: -010\nc: 1_000\nd: 1:30\ne: '7'\n"));
        assertEquals(new Scalar("31", Type.INT, 1, 4), m.entries().get("a").value());
        assertEquals(new Scalar("-8", Type.INT, 2, 4), m.entries().get("b").value());
        assertEquals(new Scalar("1000", Type.INT, 3, 4), m.entries().get("c").value());
        assertEquals(new Scalar("1:30", Type.STRING, 4, 4), m.entries().get("d").value());
        assertEquals(new Scalar("7", Type.STRING, 5, 4), m.entries().get("e").value());
        assertEquals(
                new Entry("b", 2, 1, new Scalar("-8", Type.INT, 2, 4)),
                m.entries().get("b"));
        assertNull(YamlTree.parse(new StringReader("# nothing\n")));
        ParseError e = assertThrows(ParseError.class, () -> YamlTree.parse(new StringReader("k: " + "9".repeat(65))));
        assertEquals("malformed YAML: Number value length (65) exceeds the maximum allowed (64)", e.getMessage());
        assertEquals(1, e.line);
        assertEquals(69, e.column);
    }
}

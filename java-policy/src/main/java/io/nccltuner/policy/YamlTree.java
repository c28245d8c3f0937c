package io.nccltuner.policy;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * Step one of loading a policy: Jackson's YAML parser turned into a small tree whose every node
 * keeps its line and column, so that binding and validation can name them.
 *
 * <p>Limits are set explicitly: at most {@link #MAX_DEPTH} levels of nesting, {@link
 * #MAX_CODE_POINTS} code points, no duplicate keys, no anchors or aliases (a policy has no use for
 * them and they are the vector of "billion laughs" files), no YAML tags, and no polymorphic typing
 * (nothing is bound to classes named in the input).
 */
final class YamlTree {
    static final int MAX_DEPTH = 32;
    static final int MAX_CODE_POINTS = (int) PolicyLoader.MAX_FILE_BYTES;

    /** Any node, with its 1-based position. */
    sealed interface Node permits MapNode, ListNode, Scalar {
        int line();

        int column();
    }

    record MapNode(Map<String, Entry> entries, int line, int column) implements Node {}

    record Entry(String key, int keyLine, int keyColumn, Node value) {}

    record ListNode(List<Node> items, int line, int column) implements Node {}

    /**
     * A scalar; {@code token} tells how YAML typed it (a quoted "2" is a string, a plain 2 an int).
     */
    record Scalar(String text, JsonToken token, int line, int column) implements Node {
        boolean isNull() {
            return token == JsonToken.VALUE_NULL;
        }
    }

    /** A problem found while parsing, with its position. */
    static final class ParseError extends Exception {
        private static final long serialVersionUID = 1L;

        final int line;
        final int column;

        ParseError(String message, int line, int column) {
            super(message);
            this.line = line;
            this.column = column;
        }
    }

    private static final YAMLFactory FACTORY = buildFactory();

    private static YAMLFactory buildFactory() {
        LoaderOptions opts = new LoaderOptions();
        opts.setAllowDuplicateKeys(false);
        opts.setMaxAliasesForCollections(1);
        opts.setNestingDepthLimit(MAX_DEPTH);
        opts.setCodePointLimit(MAX_CODE_POINTS);
        opts.setAllowRecursiveKeys(false);
        return YAMLFactory.builder()
                .loaderOptions(opts)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_DEPTH)
                        .maxStringLength(64 * 1024)
                        .maxNumberLength(64)
                        .build())
                .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
    }

    private YamlTree() {}

    /**
     * Parses one YAML document.
     *
     * @return the root node, or null for an empty document
     * @throws ParseError for malformed YAML, duplicate keys, aliases, tags or a breached limit
     */
    static Node parse(Reader in) throws ParseError {
        JsonParser parser = null;
        try (JsonParser p = FACTORY.createParser(in)) {
            parser = p;
            JsonToken t = p.nextToken();
            if (t == null) {
                return null;
            }
            Node root = read(p, t, 1);
            if (p.nextToken() != null) {
                JsonLocation l = p.currentTokenLocation();
                throw new ParseError(
                        "more than one YAML document; a policy is one document", l.getLineNr(), l.getColumnNr());
            }
            return root;
        } catch (JsonProcessingException e) {
            // Limit breaches (StreamConstraintsException: nesting depth) carry no location: use the
            // parser's, the place where the limit was crossed.
            JsonLocation l = e.getLocation() != null ? e.getLocation() : location(parser);
            ParseError marked = marked(e);
            if (marked != null) {
                throw marked;
            }
            String msg = e.getOriginalMessage().lines().findFirst().orElse("malformed YAML");
            throw new ParseError(
                    "malformed YAML: " + msg, l == null ? 0 : l.getLineNr(), l == null ? 0 : l.getColumnNr());
        } catch (IOException | RuntimeException e) {
            // SnakeYAML reports limit breaches (aliases, depth, size) as unchecked exceptions.
            JsonLocation l = location(parser);
            String msg = String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString());
            throw new ParseError(
                    "malformed YAML: " + msg, l == null ? 0 : l.getLineNr(), l == null ? 0 : l.getColumnNr());
        }
    }

    /**
     * SnakeYAML's own problem and where it is (its problem mark), rather than Jackson's first line,
     * which is SnakeYAML's context ("while parsing a block mapping") and points at the context's
     * start, often the line before: e.g. {@code found character '\t' that cannot start any token}
     * at the tab itself.
     *
     * @return the error, or null when the cause is not a marked SnakeYAML error
     */
    static ParseError marked(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof org.yaml.snakeyaml.error.MarkedYAMLException m && m.getProblem() != null) {
                var mark = m.getProblemMark() != null ? m.getProblemMark() : m.getContextMark();
                String problem = m.getProblem().strip();
                String context = m.getContext() == null ? "" : m.getContext().strip();
                String msg = problem
                        + (context.isEmpty()
                                ? ""
                                : " (" + context
                                        + (m.getContextMark() != null
                                                ? " started at line "
                                                        + (m.getContextMark().getLine() + 1)
                                                : "")
                                        + ")");
                if (problem.contains("'\t'")) {
                    msg += "; YAML indents with spaces, never tabs";
                }
                return new ParseError(
                        "malformed YAML: " + msg,
                        mark == null ? 0 : mark.getLine() + 1,
                        mark == null ? 0 : mark.getColumn() + 1);
            }
        }
        return null;
    }

    private static JsonLocation location(JsonParser p) {
        try {
            return p == null ? null : p.currentLocation();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static Node read(JsonParser p, JsonToken t, int depth) throws IOException, ParseError {
        JsonLocation loc = p.currentTokenLocation();
        int line = loc.getLineNr();
        int col = loc.getColumnNr();
        if (depth > MAX_DEPTH) {
            throw new ParseError("nesting deeper than " + MAX_DEPTH + " levels", line, col);
        }
        if (p.getTypeId() != null) {
            throw new ParseError("YAML tags (" + p.getTypeId() + ") are not allowed in a policy", line, col);
        }
        if (p.getObjectId() != null) {
            throw new ParseError("YAML anchors (&" + p.getObjectId() + ") are not allowed in a policy", line, col);
        }
        switch (t) {
            case START_OBJECT -> {
                Map<String, Entry> entries = new LinkedHashMap<>();
                JsonToken k;
                while ((k = p.nextToken()) == JsonToken.FIELD_NAME) {
                    JsonLocation kl = p.currentTokenLocation();
                    String key = p.currentName();
                    Node v = read(p, p.nextToken(), depth + 1);
                    if (entries.put(key, new Entry(key, kl.getLineNr(), kl.getColumnNr(), v)) != null) {
                        throw new ParseError("duplicate key '" + key + "'", kl.getLineNr(), kl.getColumnNr());
                    }
                }
                return new MapNode(entries, line, col);
            }
            case START_ARRAY -> {
                List<Node> items = new ArrayList<>();
                JsonToken i;
                while ((i = p.nextToken()) != JsonToken.END_ARRAY) {
                    items.add(read(p, i, depth + 1));
                }
                return new ListNode(items, line, col);
            }
            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT, VALUE_TRUE, VALUE_FALSE, VALUE_NULL -> {
                String text =
                        t == JsonToken.VALUE_NUMBER_INT ? p.getBigIntegerValue().toString() : p.getText();
                if (t == JsonToken.VALUE_STRING
                        && p instanceof com.fasterxml.jackson.dataformat.yaml.YAMLParser y
                        && y.isCurrentAlias()) {
                    throw new ParseError("YAML aliases (*" + text + ") are not allowed in a policy", line, col);
                }
                return new Scalar(text, t, line, col);
            }
            default -> throw new ParseError("unexpected YAML token " + t, line, col);
        }
    }
}

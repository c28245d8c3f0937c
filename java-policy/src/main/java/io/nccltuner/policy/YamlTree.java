package io.nccltuner.policy;

import java.io.Reader;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.NodeEvent;
import org.yaml.snakeyaml.events.ScalarEvent;
import org.yaml.snakeyaml.nodes.NodeId;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.parser.Parser;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Step one of loading a policy: SnakeYAML's parser (its event stream) turned into a small tree
 * whose every node keeps its line and column, so that binding and validation can name them.
 *
 * <p>Limits are set explicitly: at most {@link #MAX_DEPTH} levels of nesting, {@link
 * #MAX_CODE_POINTS} code points, integers of at most {@link #MAX_NUMBER_LENGTH} digits, no
 * duplicate keys, no anchors or aliases (a policy has no use for them and they are the vector of
 * "billion laughs" files: the first alias is refused before anything is expanded), no YAML tags, only text as keys, one document, and nothing is bound to
 * classes named in the input (there is no object mapping at all). A merge key ({@code <<}) is an
 * ordinary key here, as in Jackson's reading; {@link PolicyLoader} refuses it by name (the merge it
 * asks for needs an alias anyway).
 *
 * <p>Scalars are typed as Jackson's YAML parser (jackson-dataformat-yaml 2.21, which read the
 * policy here before) types them over the same SnakeYAML events: a quoted scalar is text; a plain
 * one is what SnakeYAML's YAML 1.1 {@link Resolver} makes of it (so {@code 0x10} and {@code 010}
 * are integers, 16 and 8, {@code off} is the boolean false, {@code ~} is null, an empty value is
 * the empty text), an integer carries its canonical decimal text and a float its text as written.
 * YamlTreeTest compares the two over every policy in the repository and a corpus of spellings.
 * Why not Jackson any more: its parser's base class initialises {@code java.math.BigDecimal},
 * whose static initialiser squares 5^32768 (JDK 25); in the plugin's start, interpreted, that
 * alone took 40-75 ms of CPU, a third of the whole start (docs/dev/benchmarks.md, issue 23 item 5).
 */
final class YamlTree {
    static final int MAX_DEPTH = 32;
    static final int MAX_CODE_POINTS = (int) PolicyLoader.MAX_FILE_BYTES;

    /** Most digits an integer may have (the limit Jackson's StreamReadConstraints had here). */
    static final int MAX_NUMBER_LENGTH = 64;

    /** How YAML typed a scalar (a quoted "2" is text, a plain 2 an integer). */
    enum Type {
        STRING,
        INT,
        FLOAT,
        TRUE,
        FALSE,
        NULL
    }

    /** Any node, with its 1-based position. */
    sealed interface Node permits MapNode, ListNode, Scalar {
        int line();

        int column();
    }

    record MapNode(Map<String, Entry> entries, int line, int column) implements Node {}

    record Entry(String key, int keyLine, int keyColumn, Node value) {}

    record ListNode(List<Node> items, int line, int column) implements Node {}

    /**
     * A scalar.
     *
     * @param text the value: as written, but an integer's is its canonical decimal ({@code 0x10}
     *     is "16")
     * @param type how YAML typed it
     */
    record Scalar(String text, Type type, int line, int column) implements Node {
        boolean isNull() {
            return type == Type.NULL;
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

    /** SnakeYAML's YAML 1.1 implicit types (its Resolver holds no per-parse state). */
    private static final Resolver RESOLVER = new Resolver();

    private YamlTree() {}

    private static LoaderOptions options() {
        LoaderOptions opts = new LoaderOptions();
        opts.setAllowDuplicateKeys(false);
        opts.setMaxAliasesForCollections(1);
        opts.setNestingDepthLimit(MAX_DEPTH);
        opts.setCodePointLimit(MAX_CODE_POINTS);
        opts.setAllowRecursiveKeys(false);
        return opts;
    }

    /** The parser's events, keeping the last one: a problem found after it is placed at its end. */
    private static final class Events {
        private final Parser parser;
        private Event last;

        Events(Parser parser) {
            this.parser = parser;
        }

        Event next() {
            last = parser.getEvent();
            return last;
        }

        /** A problem at the end of the last event (where Jackson placed the problems it found). */
        ParseError errorAtEnd(String message) {
            Mark m = last == null ? null : last.getEndMark();
            return new ParseError(message, m == null ? 0 : m.getLine() + 1, m == null ? 0 : m.getColumn() + 1);
        }
    }

    /**
     * Parses one YAML document.
     *
     * @return the root node, or null for an empty document
     * @throws ParseError for malformed YAML, duplicate keys, aliases, tags or a breached limit
     */
    static Node parse(Reader in) throws ParseError {
        Events p = null;
        try {
            p = new Events(new ParserImpl(new StreamReader(in), options()));
            p.next(); // StreamStart
            if (p.next().is(Event.ID.StreamEnd)) {
                return null; // no document: empty, or comments only
            }
            Node root = read(p, p.next(), 1); // the event after DocumentStart
            p.next(); // DocumentEnd
            if (!p.next().is(Event.ID.StreamEnd)) { // a DocumentStart
                Mark m = p.next().getStartMark();
                throw new ParseError(
                        "more than one YAML document; a policy is one document", m.getLine() + 1, m.getColumn() + 1);
            }
            return root;
        } catch (RuntimeException e) {
            // SnakeYAML's MarkedYAMLException (syntax) and YAMLException (a limit, a read error).
            ParseError marked = marked(e);
            if (marked != null) {
                throw marked;
            }
            String msg = "malformed YAML: "
                    + String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString());
            throw p == null ? new ParseError(msg, 0, 0) : p.errorAtEnd(msg);
        }
    }

    /**
     * SnakeYAML's own problem and where it is (its problem mark), rather than its first line,
     * which is its context ("while parsing a block mapping") and points at the context's start,
     * often the line before: e.g. {@code found character '\t' that cannot start any token} at the
     * tab itself.
     *
     * @return the error, or null when the cause is not a marked SnakeYAML error
     */
    static ParseError marked(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof MarkedYAMLException m && m.getProblem() != null) {
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

    /**
     * The node that starts with event {@code e}, at nesting depth {@code depth} (the root's is 1).
     * What is refused, and where, is what the Jackson reading refused (HostilePolicyTest's files
     * pin it down): a mapping or list nested deeper than {@link #MAX_DEPTH} at the end of its
     * opening event, a scalar there at its start; a tag on a value, an anchor on a mapping or list
     * and an alias anywhere, at the node's start; a key that is no scalar and a duplicate key at
     * the key's end. An anchor on a scalar, and an anchor or tag on a key, are let through (no
     * alias can use them).
     */
    private static Node read(Events p, Event e, int depth) throws ParseError {
        int line = e.getStartMark().getLine() + 1;
        int col = e.getStartMark().getColumn() + 1;
        boolean collection = e instanceof CollectionStartEvent;
        if (depth > MAX_DEPTH) {
            if (collection) {
                throw p.errorAtEnd("malformed YAML: Document nesting depth (" + depth
                        + ") exceeds the maximum allowed (" + MAX_DEPTH + ")");
            }
            throw new ParseError("nesting deeper than " + MAX_DEPTH + " levels", line, col);
        }
        if (e instanceof AliasEvent a) {
            throw new ParseError("YAML aliases (*" + a.getAnchor() + ") are not allowed in a policy", line, col);
        }
        String tag = e instanceof ScalarEvent s ? s.getTag() : collection ? ((CollectionStartEvent) e).getTag() : null;
        if (tag != null) {
            throw new ParseError(
                    "YAML tags (" + tag.replaceFirst("^!+", "") + ") are not allowed in a policy", line, col);
        }
        if (collection && ((NodeEvent) e).getAnchor() != null) {
            throw new ParseError(
                    "YAML anchors (&" + ((NodeEvent) e).getAnchor() + ") are not allowed in a policy", line, col);
        }
        if (e instanceof ScalarEvent s) {
            return scalar(p, s, line, col);
        }
        if (e.is(Event.ID.MappingStart)) {
            Map<String, Entry> entries = new LinkedHashMap<>();
            Event k;
            while (!(k = p.next()).is(Event.ID.MappingEnd)) {
                if (!(k instanceof ScalarEvent key)) {
                    throw p.errorAtEnd(
                            "malformed YAML: Expected a field name (Scalar value in YAML), got this instead: " + k);
                }
                int kl = k.getStartMark().getLine() + 1;
                int kc = k.getStartMark().getColumn() + 1;
                if (entries.containsKey(key.getValue())) {
                    throw p.errorAtEnd("malformed YAML: Duplicate field '" + key.getValue() + "'");
                }
                entries.put(key.getValue(), new Entry(key.getValue(), kl, kc, read(p, p.next(), depth + 1)));
            }
            return new MapNode(entries, line, col);
        }
        if (e.is(Event.ID.SequenceStart)) {
            List<Node> items = new ArrayList<>();
            Event i;
            while (!(i = p.next()).is(Event.ID.SequenceEnd)) {
                items.add(read(p, i, depth + 1));
            }
            return new ListNode(items, line, col);
        }
        throw new ParseError("unexpected YAML event " + e.getEventId(), line, col);
    }

    /** A scalar typed as Jackson's YAMLParser typed it (see the class comment). */
    private static Scalar scalar(Events p, ScalarEvent s, int line, int col) throws ParseError {
        String v = s.getValue();
        // An empty value (`description:`) is the empty text, not null: Jackson's factory, built as
        // YamlTree built it, left YAMLParser.Feature.EMPTY_STRING_AS_NULL off.
        Tag tag = v.isEmpty()
                ? Tag.STR
                : RESOLVER.resolve(NodeId.scalar, v, s.getImplicit().canOmitTagInPlainScalar());
        Type type;
        String text = v;
        if (tag.equals(Tag.INT)) {
            text = integer(p, v);
            type = text == null ? Type.STRING : Type.INT;
            text = text == null ? v : text;
        } else if (tag.equals(Tag.FLOAT)) {
            type = Type.FLOAT;
        } else if (tag.equals(Tag.BOOL)) {
            type = v.equalsIgnoreCase("true") || v.equalsIgnoreCase("yes") || v.equalsIgnoreCase("on")
                    ? Type.TRUE
                    : Type.FALSE;
        } else if (tag.equals(Tag.NULL)) {
            type = Type.NULL;
        } else {
            type = Type.STRING;
        }
        return new Scalar(text, type, line, col);
    }

    /**
     * The canonical decimal of a YAML 1.1 integer ({@code -0x1F} is "-31", {@code 0b101} "5",
     * {@code 010} "8", {@code 1_000} "1000"), or null for a sexagesimal one ({@code 1:30}), which
     * stays text.
     */
    private static String integer(Events p, String v) throws ParseError {
        if (v.indexOf(':') >= 0) {
            return null;
        }
        boolean negative = v.charAt(0) == '-';
        String digits = v.charAt(0) == '-' || v.charAt(0) == '+' ? v.substring(1) : v;
        int radix = 10;
        if (digits.length() > 1 && digits.charAt(0) == '0') {
            char c = digits.charAt(1);
            radix = c == 'x' || c == 'X' ? 16 : c == 'b' || c == 'B' ? 2 : 8;
            digits = digits.substring(radix == 8 ? 1 : 2);
        }
        boolean underscores = digits.indexOf('_') >= 0;
        digits = digits.replace("_", "");
        // Jackson's count: a decimal's text with its '-' (and its '+' when there was no '_').
        int length = digits.length() + (radix == 10 && (negative || (v.charAt(0) == '+' && !underscores)) ? 1 : 0);
        if (length > MAX_NUMBER_LENGTH) {
            throw p.errorAtEnd("malformed YAML: Number value length (" + length + ") exceeds the maximum allowed ("
                    + MAX_NUMBER_LENGTH + ")");
        }
        if (digits.length() <= 18 && radix == 10) {
            long n = Long.parseLong(digits);
            return Long.toString(negative ? -n : n);
        }
        BigInteger n = new BigInteger(digits, radix);
        return (negative ? n.negate() : n).toString();
    }
}

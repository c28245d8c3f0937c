package io.nccltuner.policy;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The tuner-config dialects {@code nccl-tuner import} meets besides NCCL's example CSV, brought to
 * that CSV's ten fields ({@code collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,
 * nRanks,numPipeOps,regBuff}) or refused with the reason:
 *
 * <ul>
 *   <li>a header row (a spreadsheet export of the example CSV): skipped;
 *   <li>NCCL's {@code optimize_config.py} performance CSV (header with {@code size_bytes} and
 *       {@code cost_metric}/{@code latency_us}): measurement data, refused with "use compile";
 *   <li>interval fields, as in NCCLX's CSV rules: {@code [a,b]} inclusive, {@code (a,b)} exclusive,
 *       mixed brackets, an empty bound for none ({@code (1,)}), {@code *} for any; the byte
 *       interval stands for min_bytes,max_bytes in one field; an nNodes or nRanks interval
 *       ({@code [2,8]}, {@code (1,)}) becomes a profile matching that range; a numPipeOps
 *       interval becomes the rule's numPipeOps range (the policy format matches numPipeOps by a
 *       range); a channels interval must be one value or any: channels is not matched but set,
 *       one nChannels per call, so a range of several values names no count to set;
 *   <li>JSON rules (NCCLX): an array of objects (top level, or the first array-valued field) with
 *       the example's field names or common short forms, each object one line;
 *   <li>RCCL's 12-field rows (the example's ten plus partitionMode and localGroup) and
 *       aws-ofi-nccl decision tables: refused, because NCCL's v3 getCollInfo passes neither a
 *       partition nor aws-ofi-nccl's platform regions, so this plugin cannot match them as the
 *       tuner that reads them does.
 * </ul>
 */
public final class ConfigFormats {
    private ConfigFormats() {}

    /** Splits a CSV line on commas outside brackets and parentheses; fields stripped. */
    static String[] split(String t) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        StringBuilder cur = new StringBuilder();
        for (char ch : t.toCharArray()) {
            if (ch == '[' || ch == '(') {
                depth++;
            } else if ((ch == ']' || ch == ')') && depth > 0) {
                depth--;
            }
            if (ch == ',' && depth == 0) {
                out.add(cur.toString().strip());
                cur.setLength(0);
            } else {
                cur.append(ch);
            }
        }
        out.add(cur.toString().strip());
        return out.toArray(String[]::new);
    }

    static boolean isInterval(String f) {
        return f.equals("*") || ((f.startsWith("[") || f.startsWith("(")) && (f.endsWith("]") || f.endsWith(")")));
    }

    /**
     * @param where {@code file:line}
     * @param f an interval field
     * @param what the field's name for messages
     * @return inclusive {lo, hi} as unsigned longs, hi -1 for no bound
     * @throws InputException when it is not an interval of whole numbers
     */
    public static long[] interval(String where, String f, String what) throws InputException {
        if (f.equals("*")) {
            return new long[] {0, -1L};
        }
        String body = f.substring(1, f.length() - 1);
        int c = body.indexOf(',');
        if (c < 0 || body.indexOf(',', c + 1) >= 0) {
            throw new InputException(
                    where, what + " '" + f + "' is not an interval: write [lo,hi], (lo,hi), (lo,) or *");
        }
        String a = body.substring(0, c).strip();
        String b = body.substring(c + 1).strip();
        try {
            long lo = a.isEmpty() ? 0 : AsciiNumbers.parseUnsignedLong(a);
            long hi = b.isEmpty() ? -1L : AsciiNumbers.parseUnsignedLong(b);
            if (!a.isEmpty() && f.startsWith("(")) {
                lo++;
            }
            if (!b.isEmpty() && f.endsWith(")")) {
                if (hi == 0) {
                    throw new InputException(where, what + " '" + f + "' is empty");
                }
                hi--;
            }
            if (hi != -1L && Long.compareUnsigned(lo, hi) > 0) {
                throw new InputException(where, what + " '" + f + "' is empty");
            }
            return new long[] {lo, hi};
        } catch (NumberFormatException e) {
            throw new InputException(
                    where, what + " '" + f + "' is not an interval of whole numbers" + AsciiNumbers.hint(f));
        }
    }

    /**
     * A count field given as an interval: any (-1) or one value, as such; an interval spanning several
     * values only where the field is matched. nNodes, nRanks and numPipeOps are, and such an interval
     * is written back inclusive ({@code [2,8]}, {@code [2,]} for no upper bound), which {@link
     * NcclExampleConfig} turns into a profile matching that range; channels and regBuff take one
     * value or any: channels is what the tuner sets (one nChannels per call), regBuff a yes or no.
     */
    static String count(String where, String f, String what) throws InputException {
        if (!isInterval(f)) {
            return f;
        }
        long[] iv = interval(where, f, what);
        if (iv[0] <= 1 && iv[1] == -1L) {
            return "-1";
        }
        if (iv[0] == iv[1]) {
            return Long.toString(iv[0]);
        }
        String hi = iv[1] == -1L ? "" : Long.toUnsignedString(iv[1]);
        if (what.equals("nNodes") || what.equals("nRanks") || what.equals("numPipeOps")) {
            return "[" + Long.toUnsignedString(iv[0]) + "," + hi + "]";
        }
        String span = Long.toUnsignedString(iv[0]) + ".." + hi;
        if (what.equals("channels")) {
            throw new InputException(
                    where,
                    "channels '" + f + "' spans several values (" + span
                            + "); channels is not matched but set: the tuner "
                            + "writes one nChannels per call (getCollInfo's *nChannels; a policy candidate's channels, 1..64), so a range "
                            + "names no count to set: write one value, or -1 or * to keep NCCL's");
        }
        throw new InputException(
                where,
                what + " '" + f + "' spans several values (" + span + "); " + what
                        + " is 0 or 1, or any (-1, *): write one "
                        + "line per value");
    }

    /**
     * Brings a line in interval syntax (NCCLX: the byte range in one field) to the example's fields.
     *
     * @return the example's 8..10 fields
     */
    static String[] fromIntervals(String where, String[] f) throws InputException {
        List<String> out = new ArrayList<>();
        out.add(f[0]);
        long[] bytes = interval(where, f[1], "bytes");
        out.add(Long.toUnsignedString(bytes[0]));
        out.add(bytes[1] == -1L ? "-1" : Long.toUnsignedString(bytes[1]));
        String[] names = {"algorithm", "protocol", "channels", "nNodes", "nRanks", "numPipeOps", "regBuff"};
        for (int i = 2; i < f.length; i++) {
            String name = i - 2 < names.length ? names[i - 2] : "field " + (i + 1);
            out.add(i >= 4 ? (f[i].equals("*") ? "-1" : count(where, f[i], name)) : f[i]);
        }
        return out.toArray(String[]::new);
    }

    /** @return the refusal for a header row that is measurement data, or null for a config header */
    static String headerProblem(String[] f) {
        List<String> names =
                java.util.Arrays.stream(f).map(x -> x.toLowerCase(Locale.ROOT)).toList();
        if (names.contains("size_bytes")
                && (names.contains("cost_metric")
                        || names.contains("latency_us")
                        || names.contains("bandwidth_gbps")
                        || names.contains("median_us"))) {
            return MEASUREMENT_DATA;
        }
        return null;
    }

    /** The refusal of a CSV whose header row is measurement data ({@link #headerProblem}). */
    static final String MEASUREMENT_DATA =
            "this is measurement data (the performance CSV of NCCL's optimize_config.py, or a sweep): its "
                    + "rows are timings per size, not rules; use 'nccl-tuner compile' on it";

    /**
     * Whether a refusal is of the file as a whole, not of one line: measurement data ({@link
     * #headerProblem}) or an aws-ofi-nccl decision table. Its other lines are no rules either, so
     * listing each of them as a problem of its own says nothing more.
     *
     * @param refusal the converter's message ({@code file:line: text})
     * @return true for those two refusals
     */
    public static boolean refusesWholeFile(String refusal) {
        return refusal.endsWith(MEASUREMENT_DATA) || refusal.endsWith(AWS_OFI);
    }

    /** @return whether the first field of a line is a word that is no collective: a header row */
    static boolean looksLikeHeader(String[] f) {
        String a = f[0].toLowerCase(Locale.ROOT).replace("#", "").strip();
        return a.matches("[a-z_ ]+")
                && !List.of("broadcast", "reduce", "allgather", "reducescatter", "allreduce")
                        .contains(a)
                && f.length >= 3
                && !f[1].matches("-?\\d+|\\[.*|\\(.*|\\*");
    }

    /** @return the reason an RCCL 11/12-field row cannot be imported */
    static String rcclProblem(int n) {
        return n + " fields: RCCL's example-tuner rows add partitionMode and localGroup after the ten NCCL fields; "
                + "NCCL's v3 getCollInfo passes no partition or local group, so this plugin cannot match such a row as "
                + "RCCL's tuner does (drop the two fields to apply the row to every partition)";
    }

    static final String AWS_OFI = "an aws-ofi-nccl tuner decision table: its entries choose algorithm and protocol "
            + "from aws-ofi-nccl's own platform model (regions of nRanks x nBytes), read by aws-ofi-nccl's tuner "
            + "(libnccl-ofi-tuner.so), not rules of NCCL's example format; there is nothing here with a meaning for this "
            + "plugin: measure the platform with nccl-tests and use 'nccl-tuner compile'";

    /** @return whether the text is an aws-ofi-nccl tuner table rather than an example CSV */
    static boolean looksLikeAwsOfi(List<String> text) {
        for (String l : text) {
            String s = l.toLowerCase(Locale.ROOT);
            if (s.contains("aws-ofi") || s.contains("nccl_ofi") || s.contains("ofi_nccl") || s.contains("ofi-nccl")) {
                return true;
            }
        }
        return false;
    }

    private static final Map<String, String> JSON_KEYS = Map.ofEntries(
            Map.entry("collective", "collective"),
            Map.entry("coll", "collective"),
            Map.entry("collective_type", "collective"),
            Map.entry("op", "collective"),
            Map.entry("min_bytes", "min_bytes"),
            Map.entry("minbytes", "min_bytes"),
            Map.entry("max_bytes", "max_bytes"),
            Map.entry("maxbytes", "max_bytes"),
            Map.entry("bytes", "bytes"),
            Map.entry("msg_size", "bytes"),
            Map.entry("size", "bytes"),
            Map.entry("algorithm", "algorithm"),
            Map.entry("algo", "algorithm"),
            Map.entry("protocol", "protocol"),
            Map.entry("proto", "protocol"),
            Map.entry("channels", "channels"),
            Map.entry("nchannels", "channels"),
            Map.entry("nnodes", "nNodes"),
            Map.entry("nodes", "nNodes"),
            Map.entry("nranks", "nRanks"),
            Map.entry("ranks", "nRanks"),
            Map.entry("numpipeops", "numPipeOps"),
            Map.entry("pipeops", "numPipeOps"),
            Map.entry("regbuff", "regBuff"));

    /**
     * One JSON rule as example fields, with its line in the file.
     *
     * @param bytesKey whether the rule gave its range as {@code "bytes"} (a number or an interval), not
     *     as {@code "min_bytes"}/{@code "max_bytes"}: the advice on its range is written that way
     */
    record JsonLine(int line, String[] fields, boolean bytesKey) {}

    /**
     * Reads JSON rules (NCCLX) with Jackson.
     *
     * @param file the name used in messages
     * @param json the text
     * @return one entry per rule object
     * @throws InputException on malformed JSON (a key twice in one object too: {@code file:line:column:
     *     malformed JSON: Duplicate field 'algorithm'}), no rule array, or an object with an unknown key
     */
    static List<JsonLine> json(String file, String json) throws InputException {
        // a key twice in one object would silently keep the last value: refused, naming the key
        ObjectMapper m = new ObjectMapper();
        m.getFactory().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        JsonNode root;
        try (JsonParser p = m.getFactory().createParser(json)) {
            root = m.readTree(p);
        } catch (JsonProcessingException e) {
            JsonLocation l = e.getLocation();
            throw new InputException(
                    file + (l == null ? "" : ":" + l.getLineNr() + ":" + l.getColumnNr()),
                    "malformed JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw new InputException(file, "unreadable JSON: " + e.getMessage());
        }
        JsonNode rules = root;
        if (root != null && root.isObject()) {
            rules = null;
            for (Map.Entry<String, JsonNode> e : root.properties()) {
                if (e.getValue().isArray()) {
                    rules = e.getValue();
                    break;
                }
            }
        }
        if (rules == null || !rules.isArray()) {
            throw new InputException(
                    file,
                    "JSON without an array of rule objects (top level, or a field such as "
                            + "\"rules\"); nothing to import");
        }
        // line numbers: Jackson's tree has none, so find each object's start with a streaming pass
        List<Integer> starts = objectLines(m, json, rules.size());
        List<JsonLine> out = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            JsonNode r = rules.get(i);
            int line = i < starts.size() ? starts.get(i) : 0;
            String where = InputException.at(file, line);
            if (!r.isObject()) {
                throw new InputException(where, "rule " + (i + 1) + " is not an object");
            }
            Map<String, String> v = new java.util.HashMap<>();
            for (Map.Entry<String, JsonNode> e : r.properties()) {
                String key = JSON_KEYS.get(e.getKey().toLowerCase(Locale.ROOT));
                if (key == null) {
                    throw new InputException(
                            where,
                            "rule " + (i + 1) + " has key \"" + e.getKey() + "\", which has no meaning "
                                    + "here (known: collective, min_bytes, max_bytes or bytes, algorithm, protocol, channels, nNodes, "
                                    + "nRanks, numPipeOps, regBuff)");
                }
                JsonNode val = e.getValue();
                v.put(key, val.isTextual() ? val.asText() : val.toString());
            }
            String[] f = new String[10];
            f[0] = v.getOrDefault("collective", "");
            if (v.containsKey("bytes")) {
                long[] b = interval(
                        where,
                        isInterval(v.get("bytes")) ? v.get("bytes") : "[" + v.get("bytes") + "," + v.get("bytes") + "]",
                        "bytes");
                f[1] = Long.toUnsignedString(b[0]);
                f[2] = b[1] == -1L ? "-1" : Long.toUnsignedString(b[1]);
            } else {
                f[1] = v.getOrDefault("min_bytes", "0");
                f[2] = v.getOrDefault("max_bytes", "-1");
            }
            f[3] = v.getOrDefault("algorithm", "");
            f[4] = v.getOrDefault("protocol", "");
            String[] names = {"channels", "nNodes", "nRanks", "numPipeOps", "regBuff"};
            for (int k = 0; k < names.length; k++) {
                String x = v.getOrDefault(names[k], "-1");
                f[5 + k] = x.equals("*") ? "-1" : count(where, x, names[k]);
            }
            out.add(new JsonLine(line, f, v.containsKey("bytes")));
        }
        return out;
    }

    private static List<Integer> objectLines(ObjectMapper m, String json, int n) {
        List<Integer> lines = new ArrayList<>();
        try (JsonParser p = m.getFactory().createParser(json)) {
            int depth = 0;
            int arrayDepth = -1;
            com.fasterxml.jackson.core.JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == com.fasterxml.jackson.core.JsonToken.START_ARRAY && arrayDepth < 0) {
                    arrayDepth = depth + 1;
                }
                if (t == com.fasterxml.jackson.core.JsonToken.START_OBJECT && depth == arrayDepth) {
                    lines.add(p.currentTokenLocation().getLineNr());
                }
                if (t.isStructStart()) {
                    depth++;
                } else if (t.isStructEnd()) {
                    depth--;
                }
            }
        } catch (java.io.IOException e) {
            // the tree read above succeeded; lines stay partial
        }
        return lines;
    }
}

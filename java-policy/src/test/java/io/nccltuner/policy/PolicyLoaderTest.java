package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nccltuner.policy.Policy.Rule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyLoaderTest {
    static final Path REPO = Path.of(System.getProperty("nccltj.repo", ".."));

    static String policy(String rules) {
        return """
        schema: nccl-tuner-java/v1
        name: t
        profiles:
          - name: p
            match: {nRanks: 2, nNodes: {min: 1, max: 4}}
            rules:
        """ + rules.indent(6);
    }

    static String rule(String coll, String from, String to, String extra) {
        return "- collective: " + coll + "\n  bytes: {from: " + from + ", to: " + to + "}\n" + extra
                + "  candidates:\n    - {algorithm: RING, protocol: LL}\n";
    }

    @Test
    void loadsShippedPolicies() throws Exception {
        try (var files = Files.list(REPO.resolve("policies"))) {
            List<Path> yamls = files.filter(p -> p.toString().endsWith(".yaml")).toList();
            assertTrue(yamls.size() >= 2, "policies/ has the example policies");
            for (Path p : yamls) {
                Policy pol = PolicyLoader.load(p);
                assertTrue(pol.profiles().size() >= 1, p.toString());
            }
        }
        Policy h = PolicyLoader.load(REPO.resolve("policies/h200-2rank.yaml"));
        assertEquals("h200-2rank-timesliced", h.name());
        assertEquals(Mode.ENFORCE, h.mode());
        Policy.Profile prof = h.profileFor(2, 2);
        assertNotNull(prof);
        assertNull(h.profileFor(4, 2));
        Rule r = prof.rules().get(1);
        assertEquals(Collective.AllReduce, r.collective());
        assertEquals(8 * 1024, r.fromBytes());
        assertEquals(32 * 1024, r.toBytes());
        assertEquals(Algorithm.TREE, r.candidates().get(0).algorithm());
        assertEquals(Protocol.LL, r.candidates().get(0).protocol());
        assertEquals(0.006, r.candidates().get(1).regret(), 1e-12);
    }

    @Test
    void bindsRangesChannelsAndPipeOps() throws Exception {
        Policy p = PolicyLoader.parse("x.yaml", policy("""
        - collective: allreduce
          bytes: {from: 24 MiB, to: 32 MiB}
          numPipeOps: {min: 2}
          candidates:
            - {algorithm: nvls_tree, protocol: Simple, channels: 16, regret: 0}
            - {algorithm: RING, protocol: LL128, regret: 0.125}
        - collective: AllReduce
          bytes: {from: 24 MiB}
          numPipeOps: 1
          candidates:
            - {algorithm: RING, protocol: SIMPLE}
        """));
        Rule a = p.profiles().getFirst().rules().get(0);
        assertEquals(24L << 20, a.fromBytes());
        assertEquals(32L << 20, a.toBytes());
        assertEquals(new Policy.Range(2, Long.MAX_VALUE), a.numPipeOps());
        assertEquals(Algorithm.NVLS_TREE, a.candidates().get(0).algorithm());
        assertEquals(16, a.candidates().get(0).channels());
        assertEquals(0, a.candidates().get(1).channels());
        Rule b = p.profiles().getFirst().rules().get(1);
        assertEquals(-1L, b.toBytes());
        assertTrue(b.containsBytes(-2L), "an open range reaches SIZE_MAX");
        assertEquals(Policy.Range.exactly(1), b.numPipeOps());
        assertEquals(new Policy.Range(1, 4), p.profiles().getFirst().nNodes());
    }

    /** Each malformed policy is refused with file:line:column, the field path and a hint. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
      unknown algorithm  | RINGG                 | x.yaml:10:25: profiles[0].rules[0].candidates[0].algorithm: unknown algorithm 'RINGG'; did you mean RING?
      unknown protocol   | LL129                 | x.yaml:10:42: profiles[0].rules[0].candidates[0].protocol: unknown protocol 'LL129'; did you mean LL128?
      unknown field      | FIELD                 | x.yaml:9:9: profiles[0].rules[0]: unknown field 'numPipeOp'; did you mean 'numPipeOps'?
      off grid           | OFFGRID               | x.yaml:8:23: profiles[0].rules[0].bytes.from: 1000 B is not on the size grid (4 points per power of two); nearest grid points are 896 B and 1 KiB
      channels zero      | CH0                   | x.yaml:10:55: profiles[0].rules[0].candidates[0].channels: 0 is outside 1..64
      overlap            | OVERLAP               | x.yaml:11:9: profiles[0].rules[1]: overlaps rules[0] (line 7): both cover AllReduce at 16 KiB with numPipeOps any / any; make the byte or numPipeOps ranges disjoint
      unknown collective | COLL                  | x.yaml:7:21: profiles[0].rules[0].collective: unknown collective 'AllReduc'; did you mean AllReduce?
      SI unit            | SI                    | x.yaml:8:23: profiles[0].rules[0].bytes.from: unknown size unit 'MB' in '1 MB'; SI units are ambiguous here, write MiB
      empty range        | EMPTY                 | x.yaml:8:16: profiles[0].rules[0].bytes: from 1 MiB is not below to 1 MiB; the range is half-open [from, to)
      wrong type         | TYPE                  | x.yaml:10:55: profiles[0].rules[0].candidates[0].channels: expected an integer, found 'four'
      negative regret    | REGRET                | x.yaml:10:53: profiles[0].rules[0].candidates[0].regret: -0.5 is not a regret; write a fraction >= 0 (0.21 = 21% slower than the best)
      NaN regret         | NAN                   | x.yaml:10:53: profiles[0].rules[0].candidates[0].regret: .nan is not a regret; write a fraction >= 0 (0.21 = 21% slower than the best)
      """)
    void refusesWithPosition(String what, String kind, String expected) {
        String rules = switch (kind) {
            case "RINGG" ->
                "- collective: AllReduce\n  bytes: {from: 0, to: 1 MiB}\n  candidates:\n    - {algorithm: RINGG, protocol: LL}\n";
            case "LL129" ->
                "- collective: AllReduce\n  bytes: {from: 0, to: 1 MiB}\n  candidates:\n    - {algorithm: RING,  protocol: LL129}\n";
            case "FIELD" -> rule("AllReduce", "0", "1 MiB", "  numPipeOp: 1\n");
            case "OFFGRID" -> rule("AllReduce", "1000", "1 MiB", "");
            case "CH0" ->
                "- collective: AllReduce\n  bytes: {from: 0, to: 1 MiB}\n  candidates:\n    - {algorithm: RING, protocol: LL, channels: 0}\n";
            case "OVERLAP" -> rule("AllReduce", "0", "32 KiB", "") + rule("AllReduce", "16 KiB", "1 MiB", "");
            case "COLL" -> rule("AllReduc", "0", "1 MiB", "");
            case "SI" -> rule("AllReduce", "1 MB", "4 MiB", "");
            case "EMPTY" -> rule("AllReduce", "1 MiB", "1 MiB", "");
            case "TYPE" ->
                "- collective: AllReduce\n  bytes: {from: 0, to: 1 MiB}\n  candidates:\n    - {algorithm: RING, protocol: LL, channels: four}\n";
            case "NAN" ->
                "- collective: AllReduce\n  bytes: {from: 0, to: 1 MiB}\n  candidates:\n    - {algorithm: RING, protocol: LL, regret: .nan}\n";
            case "REGRET" ->
                "- collective: AllReduce\n  bytes: {from: 0, to: 1 MiB}\n  candidates:\n    - {algorithm: RING, protocol: LL, regret: -0.5}\n";
            default -> throw new IllegalArgumentException(kind);
        };
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse("x.yaml", policy(rules)));
        assertEquals(expected, e.problems().getFirst(), what);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
      empty file      |                                                              | x.yaml:1:1: the policy is empty
      malformed       | 'schema: [unclosed'                                          | x.yaml:1:
      unknown schema  | 'schema: nccl-tuner-java/v9\\nname: a\\nprofiles: [{name: p}]' | x.yaml:1:9: schema: unknown schema version 'nccl-tuner-java/v9'; this release reads 'nccl-tuner-java/v1'
      duplicate key   | 'schema: nccl-tuner-java/v1\\nname: a\\nname: b\\nprofiles: [{name: p}]' | x.yaml:3:
      alias           | 'schema: nccl-tuner-java/v1\\nname: &n a\\nprofiles: [{name: *n}]' | x.yaml:3:19: YAML aliases (*n) are not allowed
      no profiles     | 'schema: nccl-tuner-java/v1\\nname: a'                       | x.yaml:1:1: missing required field 'profiles'
      bad mode        | 'schema: nccl-tuner-java/v1\\nname: a\\nmode: loud\\nprofiles: [{name: p}]' | x.yaml:3:7: mode: unknown mode 'loud'; use enforce, shadow, off or canary
      """)
    void refusesDocuments(String what, String yaml, String prefix) {
        String text = yaml == null ? "" : yaml.replace("\\n", "\n");
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse("x.yaml", text));
        assertTrue(e.getMessage().startsWith(prefix), what + ": " + e.getMessage());
        assertTrue(e.getMessage().lines().count() == 1, "one line for the WARN: " + e.getMessage());
    }

    @Test
    void hexSizesAndControlCharacters() throws Exception {
        Policy p = PolicyLoader.parse("x.yaml", policy(rule("AllReduce", "0x2000", "0x4000", "")));
        assertEquals(0x2000, p.profiles().getFirst().rules().getFirst().fromBytes());
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> PolicyLoader.parse(
                        "x.yaml", "schema: nccl-tuner-java/v1\nname: \"a\\0b\"\nprofiles: [{name: p}]\n"));
        assertEquals(
                "x.yaml:2:7: name: control characters are not allowed here (they would garble the log lines)",
                e.getMessage());
    }

    @Test
    void missingFileNamesIt() {
        PolicyException e =
                assertThrows(PolicyException.class, () -> PolicyLoader.load(Path.of("/nonexistent/p.yaml")));
        assertEquals("/nonexistent/p.yaml: cannot read policy: no such file", e.getMessage());
    }

    @Test
    void collectsAllProblems() {
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> PolicyLoader.parse(
                        "x.yaml", policy(rule("AllReduc", "0", "1 MiB", "") + rule("AllReduce", "1000", "1 MiB", ""))));
        assertEquals(2, e.problems().size(), e.problems().toString());
        assertTrue(e.getMessage().endsWith("(and 1 more)"));
    }

    @Test
    void tooManyPipeOpsRulesInOneBucket() {
        StringBuilder rules = new StringBuilder();
        for (int i = 1; i <= 5; i++) {
            rules.append(rule("AllReduce", "0", "1 MiB", "  numPipeOps: " + i + "\n"));
        }
        PolicyException e =
                assertThrows(PolicyException.class, () -> PolicyLoader.parse("x.yaml", policy(rules.toString())));
        assertTrue(e.getMessage().contains("more than 4 rules cover AllReduce at 0 B"), e.getMessage());
    }

    /**
     * N AllReduce rules, two to a size bucket (numPipeOps 1 and 2), the i-th naming chunkSize
     * {@code chunk.apply(i)}.
     */
    static String chunkRules(int n, java.util.function.IntUnaryOperator chunk) {
        StringBuilder rules = new StringBuilder();
        for (int i = 0; i < n; i++) {
            rules.append("- collective: AllReduce\n  bytes: {from: ")
                    .append(SizeGrid.lowerBound(i / 2))
                    .append(", to: ")
                    .append(SizeGrid.lowerBound(i / 2 + 1))
                    .append("}\n  numPipeOps: ")
                    .append(1 + i % 2)
                    .append("\n  candidates:\n    - {algorithm: RING, protocol: SIMPLE, chunkSize: ")
                    .append(chunk.applyAsInt(i))
                    .append("}\n");
        }
        return rules.toString();
    }

    /**
     * At most 255 distinct chunkSizes in a profile (the table's 8-bit index): 255 load and compile,
     * 256 are refused at the rule naming the 256th (the loader let it through and every init then
     * failed inside the engine, changing nothing: the docs oracle of 2026-12-04), and any number of
     * rules may share fewer.
     */
    @Test
    void aProfileNamesAtMost255DistinctChunkSizes() throws Exception {
        Policy ok = PolicyLoader.parse("x.yaml", policy(chunkRules(255, i -> 4096 + i)));
        assertEquals(
                255,
                io.nccltuner.engine.DecisionTable.compile(ok.profiles().get(0)).chunkSizes().length);
        PolicyException e = assertThrows(
                PolicyException.class, () -> PolicyLoader.parse("x.yaml", policy(chunkRules(256, i -> 4096 + i))));
        assertEquals(1, e.problems().size(), e.getMessage());
        assertTrue(
                e.getMessage()
                        .contains("profiles[0].rules[255].candidates[0].chunkSize: the profile names more "
                                + "than 255 distinct chunk sizes"),
                e.getMessage());
        Policy shared = PolicyLoader.parse("x.yaml", policy(chunkRules(300, i -> 4096 + i % 200)));
        assertEquals(300, shared.profiles().get(0).rules().size());
    }

    /** Issue 13 item 12: SnakeYAML's own problem, at its own line and column. */
    @Test
    void yamlSyntaxErrorsNameTheParsersProblemWhereItIs() {
        String head =
                "schema: nccl-tuner-java/v1\nname: x\nprofiles:\n  - name: a\n    rules:\n      - collective: AllReduce\n";
        PolicyException tab =
                assertThrows(PolicyException.class, () -> PolicyLoader.parse("t.yaml", head + "\tbytes: {from: 0}\n"));
        assertTrue(
                tab.getMessage()
                        .startsWith("t.yaml:7:1: malformed YAML: found character '\\t(TAB)' that cannot start "
                                + "any token"),
                tab.getMessage());
        PolicyException indent = assertThrows(
                PolicyException.class, () -> PolicyLoader.parse("i.yaml", head + "          bytes: {from: 0}\n"));
        assertTrue(
                indent.getMessage().startsWith("i.yaml:7:16: malformed YAML: mapping values are not allowed here"),
                indent.getMessage());
    }

    /**
     * Rules over the same sizes overlap unless their regBuff conditions exclude each other: true
     * beside false is two rules (registered and unregistered buffers), true beside true and true
     * beside any (any covers both) are refused naming the earlier rule.
     */
    @ParameterizedTest(name = "regBuff {0} and {1}")
    @CsvSource({"true, false, ", "false, true, ", "true, true, 1", "false, false, 1", "true, any, 1", "any, false, 1"})
    void regBuffRulesOverSameSizesOverlapUnlessExclusive(String first, String second, Integer overlaps)
            throws Exception {
        String rules = rule("AllReduce", "0", "1 MiB", "  regBuff: " + first + "\n")
                + rule("AllReduce", "0", "1 MiB", "  regBuff: " + second + "\n");
        if (overlaps == null) {
            Policy p = PolicyLoader.parse("x.yaml", policy(rules));
            List<Rule> r = p.profiles().getFirst().rules();
            assertEquals(
                    first.equals("any") ? null : Boolean.valueOf(first),
                    r.get(0).regBuff());
            assertEquals(
                    second.equals("any") ? null : Boolean.valueOf(second),
                    r.get(1).regBuff());
            return;
        }
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse("x.yaml", policy(rules)));
        assertTrue(
                e.problems().getFirst().startsWith("x.yaml:12:9: profiles[0].rules[1]: overlaps rules[0] (line 7)"),
                e.problems().toString());
    }
}

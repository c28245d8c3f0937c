package io.nccltuner.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nccltuner.trace.TraceFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutation tests of today's input limits: size caps, strict UTF-8, line caps, merge keys, costs. */
class InputMutantsTest {
    /** A file of exactly the limit is read; one byte more is refused naming the file and the limit. */
    @Test
    void aFileOfExactlyTheLimitIsRead(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("p.conf");
        Files.writeString(f, "0123456789");
        assertEquals("0123456789", PolicyText.read(f, 10));
        InputException e = assertThrows(InputException.class, () -> PolicyText.read(f, 9));
        assertEquals(
                f + ": 10 bytes, over the limit of 9 bytes for a policy file; split it or drop unused rules",
                e.getMessage());
    }

    /** A bad byte that starts a line is named at that line, column 1, not at the previous line's end. */
    @Test
    void aBadByteThatStartsALineIsNamedOnItsLine() {
        byte[] b = {'a', 'b', '\n', (byte) 0xff, 'c', '\n'};
        InputException e = assertThrows(InputException.class, () -> PolicyText.decode("t.conf", b));
        assertEquals("t.conf:2:1: not UTF-8 (byte 0xff at byte 1 of the line); save the file as UTF-8", e.getMessage());
        byte[] first = {(byte) 0xfe};
        assertEquals(
                "t.conf:1:1: not UTF-8 (byte 0xfe at byte 1 of the line); save the file as UTF-8",
                assertThrows(InputException.class, () -> PolicyText.decode("t.conf", first))
                        .getMessage());
    }

    /** A CSV line of exactly MAX_LINE_CHARS is read; one character more is refused. */
    @Test
    void aCsvLineOfExactlyTheLimitIsRead() throws Exception {
        String ok = "#" + "x".repeat(NcclExampleConfig.MAX_LINE_CHARS - 1);
        String line = "allreduce,0,65535,ring,ll,-1,-1,-1";
        assertEquals(
                1,
                NcclExampleConfig.convert("t.conf", "t", List.of(ok, line))
                        .policy()
                        .profiles()
                        .getFirst()
                        .rules()
                        .size());
        InputException e = assertThrows(
                InputException.class, () -> NcclExampleConfig.convert("t.conf", "t", List.of(line, ok + "x")));
        assertEquals(
                "t.conf:2: a line of 4097 characters, over the limit of 4096 for a config line (NCCL's example plugin"
                        + " reads 1 KiB lines)",
                e.getMessage());
    }

    /** A merge key inside a profile is named at its own line and column, with its field path. */
    @Test
    void aNestedMergeKeyIsNamedWhereItIs() {
        String yaml = """
                schema: nccl-tuner-java/v1
                name: m
                mode: enforce
                profiles:
                  - name: any
                    <<: {description: x}
                    rules: []
                """;
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse("m.yaml", yaml));
        assertEquals(
                List.of("m.yaml:6:5: profiles[0]: YAML merge keys (<<) are not allowed in a policy; write the fields"
                        + " out"),
                e.problems());
    }

    /** A cost in another script's digits is "not a number", as any other bad cost. */
    @Test
    void aCostInOtherDigitsIsNotANumber() {
        String costs = ",\u0663,-1,61.3421,43.9067,-1,64.6133" + ",-1".repeat(15);
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> TraceFile.parse(Path.of("t.csv"), List.of("init,0,2,2", "get,0,2,2,4,16384,1,7,3,0" + costs)));
        assertEquals(
                "t.csv:2: field 11 (cost of TREE/LL) '\u0663' is not a number; costs are microseconds, -1 where NCCL"
                        + " does not offer the entry",
                e.getMessage());
    }
}

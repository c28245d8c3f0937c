package io.nccltuner.policy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a policy file's text (a YAML policy, or NCCL's example-tuner CSV) within limits, before any
 * parser sees it: the file's size is checked first (a stat), then at most that many bytes are read
 * and decoded as strict UTF-8. {@link #decode} serves other UTF-8 inputs too (traces).
 *
 * <p>Errors name the file, and the line where the line is known: {@code p.conf:3:16: not UTF-8
 * (byte 0xff at byte 16 of the line); save the file as UTF-8}; {@code p.conf: 14000036 bytes, over
 * the limit of 2097152 bytes (PolicyLoader.MAX_FILE_BYTES) for a policy file}.
 */
public final class PolicyText {
    private PolicyText() {}

    /**
     * Reads a file as UTF-8 text.
     *
     * @param file the file
     * @param maxBytes the largest size read, bytes; a larger file is refused before it is read
     * @return the text
     * @throws InputException naming the file when it is over {@code maxBytes}, and {@code file:line:column}
     *     (the column in bytes) of the first byte that is not UTF-8
     * @throws IOException if the file cannot be read
     */
    public static String read(Path file, long maxBytes) throws IOException, InputException {
        String pseudo = pseudoFileSystem(file);
        if (pseudo != null) {
            throw new InputException(
                    file.toString(),
                    "a file of the kernel's " + pseudo + " file system, not a policy file (reading one can block for"
                            + " ever: /proc/kmsg does, and it takes the kernel's messages from their readers)");
        }
        long size = Files.size(file);
        if (size > maxBytes) {
            throw new InputException(
                    file.toString(),
                    size + " bytes, over the limit of " + maxBytes + " bytes for a policy file; split it or drop unused"
                            + " rules");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes((int) maxBytes + 1); // the file may have grown since the stat
        }
        if (bytes.length > maxBytes) {
            throw new InputException(
                    file.toString(), "over the limit of " + maxBytes + " bytes for a policy file (it grew while read)");
        }
        return decode(file.toString(), bytes);
    }

    /** The kernel's pseudo file systems: a stat calls their files regular and empty, a read may block. */
    private static final java.util.Set<String> PSEUDO_FILE_SYSTEMS = java.util.Set.of(
            "proc",
            "sysfs",
            "debugfs",
            "tracefs",
            "securityfs",
            "configfs",
            "efivarfs",
            "bpf",
            "cgroup",
            "cgroup2",
            "pstore",
            "fusectl",
            "binfmt_misc");

    /**
     * Which kernel pseudo file system (proc, sysfs, debugfs, ...) a file is on, after its symbolic
     * links: a hostile host named {@code /proc/kmsg} (a regular file of size 0 to a stat, whose read
     * blocks until the kernel logs) as the policy, and NCCL's init waited for ever. The mount's type
     * is read from the file's {@link java.nio.file.FileStore}; {@code /proc/} and {@code /sys/} count
     * where it cannot be read.
     *
     * @param file the file
     * @return the file system's type, or null for any other file (or one whose real path cannot be
     *     found, such as a deleted file still open: its read cannot block)
     */
    static String pseudoFileSystem(Path file) {
        Path real;
        try {
            real = file.toRealPath();
        } catch (IOException | SecurityException e) {
            return null;
        }
        try {
            String type = Files.getFileStore(real).type();
            if (PSEUDO_FILE_SYSTEMS.contains(type)) {
                return type;
            }
        } catch (IOException | SecurityException e) {
            // fall back on the path
        }
        String s = real.toString();
        return s.startsWith("/proc/") ? "proc" : s.startsWith("/sys/") ? "sysfs" : null;
    }

    /**
     * Decodes bytes as strict UTF-8.
     *
     * @param name the file's name, for messages
     * @param bytes its content
     * @return the text
     * @throws InputException {@code name:line:column: not UTF-8 ...} at the first byte that is not
     */
    public static String decode(String name, byte[] bytes) throws InputException {
        CharsetDecoder d = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult r = d.decode(in, out, true);
        if (!r.isError()) {
            r = d.flush(out);
        }
        if (r.isError()) {
            int at = in.position();
            int line = 1;
            int start = 0;
            for (int i = 0; i < at; i++) {
                if (bytes[i] == '\n') {
                    line++;
                    start = i + 1;
                }
            }
            int column = at - start + 1;
            throw new InputException(
                    InputException.at(name, line) + ":" + column,
                    "not UTF-8 (byte 0x" + String.format("%02x", bytes[at] & 0xff) + " at byte " + column
                            + " of the line); save the file as UTF-8");
        }
        return out.flip().toString();
    }
}

package io.nccltuner.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * A file named by an environment variable, as the bytes the host set. The JVM converts paths with
 * {@code sun.jnu.encoding}, which follows the locale at its start and cannot be overridden: with
 * LANG and LC_ALL unset it is ASCII, {@code System.getenv} turns every other byte into U+FFFD and
 * {@code Path.of} refuses it (InvalidPathException: Malformed input, found by a hostile host with
 * a policy under a directory named with a U+00FC). Such a name is opened with open(2) from its
 * bytes (libc's getenv, through FFM) and read through {@code /proc/self/fd/N}.
 */
final class HostPath implements AutoCloseable {
    /*
     * O_RDONLY | O_NONBLOCK | O_CLOEXEC (Linux). O_NONBLOCK: a FIFO under the name opens at once
     * (a blocking open waited for a writer for ever, in the host's init) and the caller's
     * regular-file check refuses it; on a regular file it changes nothing.
     */
    private static final int O_RDONLY_CLOEXEC = 0 | 0x800 | 0x80000;

    final Path path;
    private final int fd;

    private HostPath(Path path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /** The file that variable {@code name} (whose decoded value is {@code value}) names. */
    static HostPath of(String name, String value) {
        if (value.indexOf('\uFFFD') < 0) {
            try {
                return new HostPath(Path.of(value), -1);
            } catch (InvalidPathException e) {
                // not representable in sun.jnu.encoding: open it from its bytes
            }
        }
        try {
            Linker linker = Linker.nativeLinker();
            var libc = linker.defaultLookup();
            MethodHandle getenv = linker.downcallHandle(
                    libc.find("getenv").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            MethodHandle open = linker.downcallHandle(
                    libc.find("open").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment bytes = (MemorySegment) getenv.invokeExact(arena.allocateFrom(name));
                if (bytes.address() == 0) {
                    return new HostPath(Path.of(value.replace('\uFFFD', '?')), -1);
                }
                int fd = (int) open.invokeExact(bytes.reinterpret(Long.MAX_VALUE), O_RDONLY_CLOEXEC);
                if (fd < 0) {
                    // the name as well as it decodes; reading it fails with "no such file" and the name
                    return new HostPath(Path.of("/nonexistent-" + value.replaceAll("[^\\x21-\\x7e]", "?")), -1);
                }
                return new HostPath(Path.of("/proc/self/fd/" + fd), fd);
            }
        } catch (Throwable t) {
            throw new InvalidPathException(value, "cannot open the path from its bytes (" + t + ")");
        }
    }

    @Override
    public void close() {
        if (fd < 0) {
            return;
        }
        try {
            Linker linker = Linker.nativeLinker();
            MethodHandle close = linker.downcallHandle(
                    linker.defaultLookup().find("close").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            int ignored = (int) close.invokeExact(fd);
        } catch (Throwable ignored) {
            // the descriptor is close-on-exec; nothing else to do
        }
    }
}

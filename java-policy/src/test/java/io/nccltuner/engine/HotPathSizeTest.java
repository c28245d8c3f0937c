package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.attribute.CodeAttribute;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The per-call path must stay small enough for C2 to inline it whole into the upcall's target:
 * HotSpot inlines a hot callee only if its bytecode is at most {@code FreqInlineSize} bytes (325
 * on x86_64 and aarch64 in JDK 25). Over it, {@code Engine.getCollInfo} is compiled on its own and
 * every call pays a call with eleven arguments (measured with {@code -XX:+PrintInlining}: "callee
 * is too large" at 360 bytes; about 5 ns per call in {@code make bench}). Read from the class file
 * with the JDK's ClassFile API.
 */
class HotPathSizeTest {
    /** HotSpot's FreqInlineSize on x86_64 (src/hotspot/cpu/x86/c2_globals.hpp, JDK 25). */
    private static final int FREQ_INLINE_SIZE = 325;

    private static int codeLength(Class<?> owner, String name, String descriptor) throws Exception {
        ClassModel model;
        try (InputStream in = owner.getResourceAsStream(owner.getSimpleName() + ".class")) {
            model = ClassFile.of().parse(in.readAllBytes());
        }
        List<MethodModel> found = model.methods().stream()
                .filter(m -> m.methodName().equalsString(name) && m.methodType().equalsString(descriptor))
                .toList();
        assertEquals(1, found.size(), name + descriptor);
        return found.get(0)
                .findAttribute(java.lang.classfile.Attributes.code())
                .map(CodeAttribute::codeLength)
                .orElseThrow();
    }

    @Test
    void engineGetCollInfoFitsTheInliningLimit() throws Exception {
        int n = codeLength(
                Engine.class,
                "getCollInfo",
                "(JIJILjava/lang/foreign/MemorySegment;JIIILjava/lang/foreign/MemorySegment;J)I");
        assertTrue(n > 100, "found the method's code: " + n + " bytes");
        assertTrue(
                n <= FREQ_INLINE_SIZE, "Engine.getCollInfo is " + n + " bytes of bytecode, over " + FREQ_INLINE_SIZE);
    }
}

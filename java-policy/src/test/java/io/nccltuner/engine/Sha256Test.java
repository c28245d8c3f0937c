package io.nccltuner.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class Sha256Test {
    @Test
    void fipsVectors() {
        assertEquals(
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                HexFormat.of().formatHex(Sha256.digest("abc".getBytes(StandardCharsets.US_ASCII))));
        assertEquals(
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                HexFormat.of().formatHex(Sha256.digest(new byte[0])));
        assertEquals(
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
                HexFormat.of()
                        .formatHex(Sha256.digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
                                .getBytes(StandardCharsets.US_ASCII))));
    }

    /** Every length around the block and padding boundaries, and large inputs, agree with the JDK. */
    @Test
    void agreesWithMessageDigest() throws Exception {
        SplittableRandom rnd = new SplittableRandom(1);
        for (int len = 0; len < 300; len++) {
            byte[] b = new byte[len];
            rnd.nextBytes(b);
            assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(b), Sha256.digest(b), "length " + len);
        }
        byte[] big = new byte[5_000_000];
        rnd.nextBytes(big);
        assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(big), Sha256.digest(big));
    }
}

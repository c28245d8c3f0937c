package io.nccltuner.engine;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.HardwareMatch;
import io.nccltuner.policy.Mode;
import io.nccltuner.policy.Policy;
import io.nccltuner.policy.Policy.Candidate;
import io.nccltuner.policy.Policy.Profile;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Policy.Rule;
import io.nccltuner.policy.PolicyException;
import io.nccltuner.policy.PolicyLoader;
import io.nccltuner.policy.Protocol;
import io.nccltuner.policy.TunerConstant;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A validated policy in binary form, kept beside its YAML file as {@code FILE.compiled} and keyed
 * by the SHA-256 of the YAML bytes, so that the plugin's start need not parse YAML.
 *
 * <p>Why: on a fresh JVM the YAML path is most of the start's CPU time (docs/benchmarks.md,
 * "Start-up and footprint"): Jackson's parser base class initialises {@code java.math.BigDecimal},
 * whose static initialiser alone takes ~50 ms on JDK 25 before C2 (measured: {@code
 * Class.forName("java.math.BigDecimal")} 53 ms, 17 ms with C1 only), then the parse and binding
 * take ~25 ms in the interpreter. Reading this file takes a few milliseconds and loads none of
 * Jackson or SnakeYAML.
 *
 * <p>Who writes it: {@link #write(Path)}, called by {@code bin/nccl-tuner-aot} for the tree's
 * policies and the one it trains with, and by the command line's {@code compile}, {@code import},
 * {@code calibrate} and {@code report --emit-policy} beside the YAML they write
 * ({@code io.nccltuner.compile.PolicyYaml}), always from the YAML file as written, so it holds what
 * the plugin builds from that file. The plugin only reads: it never writes beside a policy.
 *
 * <p>When it is used: {@link #load(Path)} reads the YAML bytes, and uses {@code FILE.compiled}
 * only when it has the YAML's owner and is writable by no one else, its format version is this
 * one, and its recorded SHA-256 equals that of the bytes;
 * otherwise (absent, stale, truncated, another version, any inconsistency) it parses the YAML with
 * {@link PolicyLoader}, exactly as without it. The file holds every field of {@link Policy}
 * (the policy as {@link PolicyLoader} returned it, already validated), so decisions, the table's
 * sha256 and every log line are the same either way.
 *
 * <p>Format (big-endian, {@link DataOutputStream}): magic {@code "NTJC"}, int version, 32 bytes
 * SHA-256 of the YAML, then the policy: string name, byte mode, string description, int
 * profiles; per profile string name, 4 longs (nRanks min/max, nNodes min/max), the hardware
 * match (5 optional ranges: nNvlDomains, min- and maxRanksPerNvlDomain, ncclVersion,
 * computeCapability, in that order, then an optional string gpu), int constants (per constant
 * string name, double value), int rules; per rule byte collective, long fromBytes, long toBytes
 * (-1 = unbounded), 2 longs numPipeOps, byte regBuff (0 any, 1 false, 2 true), byte has-ncclPick
 * then the candidate, double ncclRegret, int candidates; per candidate byte algorithm id, byte
 * protocol id, int channels, double regret, long chunkSize. Strings: int length, UTF-8 bytes; an
 * optional value: byte 0 (absent) or 1 then the value.
 *
 * <p>{@link #VERSION} changes with the format and with whatever changes the policy that
 * {@link PolicyLoader} makes of a given YAML: a form of another version is not read. {@link
 * #write} refuses to write a form that does not read back to the loader's policy (a field the
 * format does not hold yet).
 */
public final class CompiledPolicy {
    /** Suffix of the binary form beside a YAML policy ({@code h200-2rank.yaml.compiled}). */
    public static final String SUFFIX = ".compiled";

    static final int MAGIC = 0x4e544a43; // "NTJC"
    static final int VERSION = 2; // 2: hardware match, constants, regBuff and chunkSize

    private CompiledPolicy() {}

    /** @return the path of the binary form of {@code yaml} */
    public static Path pathFor(Path yaml) {
        return yaml.resolveSibling(yaml.getFileName() + SUFFIX);
    }

    /**
     * Loads a policy: from its binary form when that matches the YAML's bytes, else from the YAML.
     *
     * @param yaml a YAML policy file (at most {@link PolicyLoader#MAX_FILE_BYTES} bytes)
     * @return the validated policy, equal to {@code PolicyLoader.load(yaml)}
     * @throws PolicyException as {@link PolicyLoader#load(Path)}
     */
    public static Policy load(Path yaml) throws PolicyException {
        byte[] compiled;
        byte[] text;
        try {
            Path bin = pathFor(yaml);
            if (!Files.isRegularFile(bin)
                    || !Files.isRegularFile(yaml)
                    || Files.size(yaml) > PolicyLoader.MAX_FILE_BYTES
                    || !trusted(bin, yaml)) {
                return PolicyLoader.load(yaml);
            }
            compiled = Files.readAllBytes(bin);
            text = Files.readAllBytes(yaml);
        } catch (IOException | RuntimeException e) {
            return PolicyLoader.load(yaml);
        }
        Policy p = decode(compiled, Sha256.digest(text), yaml);
        return p != null ? p : PolicyLoader.load(yaml);
    }

    /**
     * Whether the binary form may stand for the YAML: the same owner as the YAML, and writable by
     * nobody else (so that, say, a policy in a shared folder like /tmp cannot be shadowed by a
     * binary form someone else put beside it: the SHA-256 only says which YAML it claims to be).
     */
    static boolean trusted(Path bin, Path yaml) throws IOException {
        int mode = (Integer) Files.getAttribute(bin, "unix:mode");
        return (mode & 0022) == 0 && Files.getAttribute(bin, "unix:uid").equals(Files.getAttribute(yaml, "unix:uid"));
    }

    /**
     * Writes {@code FILE.compiled} beside a YAML policy (to a temporary file, then renamed over it).
     *
     * @param yaml a YAML policy file
     * @return the path written
     * @throws PolicyException if the YAML is invalid (nothing is written)
     * @throws IOException if the file cannot be written
     * @throws IllegalStateException if the policy holds a field this format does not (nothing is
     *     written)
     */
    public static Path write(Path yaml) throws PolicyException, IOException {
        byte[] text = Files.readAllBytes(yaml);
        Policy p = PolicyLoader.load(yaml);
        byte[] sha = Sha256.digest(text);
        byte[] form = encode(p, sha);
        if (!p.equals(decode(form, sha, yaml))) {
            throw new IllegalStateException(yaml + ": the binary form does not read back to the policy (a field its"
                    + " format does not hold); not written, the plugin parses the YAML");
        }
        Path bin = pathFor(yaml);
        Path tmp = bin.resolveSibling(
                bin.getFileName() + ".tmp" + ProcessHandle.current().pid());
        try {
            Files.write(tmp, form);
            Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(tmp, bin, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return bin;
    }

    /**
     * Writes {@code FILE.compiled} beside each YAML policy named ({@code bin/nccl-tuner-aot} runs
     * this before its training run, so the AOT cache holds the compiled path's classes, not
     * Jackson's).
     *
     * <p>Usage: {@code java -cp nccl-tuner-java.jar io.nccltuner.engine.CompiledPolicy POLICY.yaml...}.
     * Prints one line per file; exits 0, or 1 if any policy was invalid or could not be written.
     *
     * @param args YAML policy files
     */
    public static void main(String[] args) {
        int status = 0;
        for (String a : args) {
            try {
                System.out.println("nccl-tuner-aot: wrote " + write(Path.of(a)));
            } catch (PolicyException | IOException | RuntimeException e) {
                System.err.println("nccl-tuner-aot: " + a + ": not compiled: " + e.getMessage());
                status = 1;
            }
        }
        System.exit(status);
    }

    /** The binary form of {@code p}, keyed by {@code sha256} (of the YAML bytes). */
    static byte[] encode(Policy p, byte[] sha256) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            out.write(sha256);
            string(out, p.name());
            out.writeByte(p.mode().ordinal());
            string(out, p.description());
            out.writeInt(p.profiles().size());
            for (Profile prof : p.profiles()) {
                string(out, prof.name());
                range(out, prof.nRanks());
                range(out, prof.nNodes());
                hardware(out, prof.hardware());
                out.writeInt(prof.constants().size());
                for (TunerConstant k : prof.constants()) {
                    string(out, k.name());
                    out.writeDouble(k.value());
                }
                out.writeInt(prof.rules().size());
                for (Rule r : prof.rules()) {
                    rule(out, r);
                }
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException("writing to memory failed", e); // ByteArrayOutputStream does not throw
        }
    }

    private static void rule(DataOutputStream out, Rule r) throws IOException {
        out.writeByte(r.collective().ordinal());
        out.writeLong(r.fromBytes());
        out.writeLong(r.toBytes());
        range(out, r.numPipeOps());
        out.writeByte(r.regBuff() == null ? 0 : r.regBuff() ? 2 : 1);
        out.writeBoolean(r.ncclPick() != null);
        if (r.ncclPick() != null) {
            candidate(out, r.ncclPick());
        }
        out.writeDouble(r.ncclRegret());
        out.writeInt(r.candidates().size());
        for (Candidate c : r.candidates()) {
            candidate(out, c);
        }
    }

    /**
     * @return the policy in {@code data}, with {@code source} as its source; null if {@code data}
     *     is not this format's version, is keyed by another SHA-256, or is inconsistent in any way
     */
    static Policy decode(byte[] data, byte[] sha256, Path source) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
            if (in.readInt() != MAGIC || in.readInt() != VERSION) {
                return null;
            }
            byte[] key = new byte[32];
            in.readFully(key);
            if (!Arrays.equals(key, sha256)) {
                return null;
            }
            String name = string(in);
            Mode mode = Mode.values()[in.readUnsignedByte()];
            String description = string(in);
            int nProfiles = count(in);
            List<Profile> profiles = new ArrayList<>(nProfiles);
            for (int i = 0; i < nProfiles; i++) {
                String pname = string(in);
                Range nRanks = range(in);
                Range nNodes = range(in);
                HardwareMatch hardware = hardware(in);
                int nConstants = count(in);
                List<TunerConstant> constants = new ArrayList<>(nConstants);
                for (int k = 0; k < nConstants; k++) {
                    constants.add(TunerConstant.parse(string(in), in.readDouble())); // its checks, as the loader's
                }
                int nRules = count(in);
                List<Rule> rules = new ArrayList<>(nRules);
                for (int j = 0; j < nRules; j++) {
                    rules.add(rule(in));
                }
                profiles.add(new Profile(pname, nRanks, nNodes, rules, hardware, constants));
            }
            if (in.read() != -1) {
                return null; // trailing bytes: not a file this code wrote
            }
            return new Policy(name, mode, description, profiles, source);
        } catch (IOException | RuntimeException e) {
            return null; // truncated, or an id out of range
        }
    }

    private static Rule rule(DataInputStream in) throws IOException {
        Collective coll = Collective.values()[in.readUnsignedByte()];
        long from = in.readLong();
        long to = in.readLong();
        Range pipe = range(in);
        int regBuff = in.readUnsignedByte();
        if (regBuff > 2) {
            throw new IOException("bad regBuff " + regBuff);
        }
        Candidate ncclPick = in.readBoolean() ? candidate(in) : null;
        double ncclRegret = in.readDouble();
        int nCand = count(in);
        if (nCand < 1 || nCand > PolicyLoader.MAX_CANDIDATES) {
            throw new IOException("bad candidate count " + nCand);
        }
        List<Candidate> cands = new ArrayList<>(nCand);
        for (int k = 0; k < nCand; k++) {
            cands.add(candidate(in));
        }
        return new Rule(coll, from, to, pipe, ncclPick, ncclRegret, cands, regBuff == 0 ? null : regBuff == 2);
    }

    private static void hardware(DataOutputStream out, HardwareMatch h) throws IOException {
        for (Range r : new Range[] {
            h.nNvlDomains(), h.minRanksPerNvlDomain(), h.maxRanksPerNvlDomain(), h.ncclVersion(), h.computeCapability()
        }) {
            out.writeBoolean(r != null);
            if (r != null) {
                range(out, r);
            }
        }
        out.writeBoolean(h.gpu() != null);
        if (h.gpu() != null) {
            string(out, h.gpu());
        }
    }

    private static HardwareMatch hardware(DataInputStream in) throws IOException {
        Range[] r = new Range[5];
        for (int i = 0; i < r.length; i++) {
            r[i] = in.readBoolean() ? range(in) : null;
        }
        String gpu = in.readBoolean() ? string(in) : null;
        HardwareMatch h = new HardwareMatch(r[0], r[1], r[2], r[3], gpu, r[4]);
        return h.equals(HardwareMatch.ANY) ? HardwareMatch.ANY : h;
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String string(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > PolicyLoader.MAX_FILE_BYTES) {
            throw new IOException("bad string length " + n);
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static int count(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > PolicyLoader.MAX_FILE_BYTES) {
            throw new IOException("bad count " + n);
        }
        return n;
    }

    private static void range(DataOutputStream out, Range r) throws IOException {
        out.writeLong(r.min());
        out.writeLong(r.max());
    }

    private static Range range(DataInputStream in) throws IOException {
        long min = in.readLong();
        long max = in.readLong();
        if (min > max) {
            throw new IOException("bad range " + min + ".." + max);
        }
        return min == Range.ANY.min() && max == Range.ANY.max() ? Range.ANY : new Range(min, max);
    }

    private static void candidate(DataOutputStream out, Candidate c) throws IOException {
        out.writeByte(c.algorithm().id());
        out.writeByte(c.protocol().id());
        out.writeInt(c.channels());
        out.writeDouble(c.regret());
        out.writeLong(c.chunkSize());
    }

    private static Candidate candidate(DataInputStream in) throws IOException {
        Algorithm a = Algorithm.ofId(in.readUnsignedByte());
        Protocol p = Protocol.ofId(in.readUnsignedByte());
        int channels = in.readInt();
        if (channels < 0 || channels > PolicyLoader.MAX_CHANNELS) {
            throw new IOException("bad channel count " + channels); // PolicyLoader never lets one through
        }
        double regret = in.readDouble();
        long chunkSize = in.readLong();
        if (chunkSize < 0 || chunkSize > PolicyLoader.MAX_CHUNK_SIZE) {
            throw new IOException("bad chunk size " + chunkSize); // PolicyLoader never lets one through
        }
        return new Candidate(a, p, channels, regret, chunkSize);
    }
}

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
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * A validated policy in binary form, kept beside its YAML file as {@code FILE.compiled} and keyed
 * by the YAML's bytes (their length, CRC-32C and CRC-32), so that the plugin's start need not parse
 * YAML.
 *
 * <p>Why: on a fresh JVM parsing YAML is interpreted code over classes of their own (SnakeYAML's
 * and the loader's): a few milliseconds for a small policy once the AOT cache holds them
 * ({@code io.nccltuner.ffm.AotTraining}), seconds for a 10,000-rule one. Reading this file loads
 * none of them (docs/dev/benchmarks.md, "Every policy starts fast").
 *
 * <p>Who writes it: {@link #write(Path)}, called by {@code bin/nccl-tuner-aot} for the tree's
 * policies and the one it trains with, and by the command line's {@code compile}, {@code import},
 * {@code calibrate} and {@code report --emit-policy} beside the YAML they write
 * ({@code io.nccltuner.compile.PolicyYaml}), always from the YAML file as written, so it holds what
 * the plugin builds from that file. The plugin only reads: it never writes beside a policy.
 *
 * <p>When it is used: {@link #load(Path)} reads the YAML bytes, and uses {@code FILE.compiled}
 * only when it has the YAML's owner and is writable by no one else, its format version is this
 * one, and its recorded key equals that of the bytes;
 * otherwise (absent, stale, truncated, another version, any inconsistency) it parses the YAML with
 * {@link PolicyLoader}, exactly as without it. The file holds every field of {@link Policy}
 * (the policy as {@link PolicyLoader} returned it, already validated), so decisions, the table's
 * sha256 and every log line are the same either way.
 *
 * <p>Why that key and not a SHA-256 (format 1's): the plugin's start runs interpreted, where a
 * SHA-256 of the 1.8 MB YAML of a 10,000-rule policy took 72-228 ms of CPU, and CRC-32C and CRC-32
 * (java.util.zip, whose loops the interpreter runs as intrinsics) 0-4 ms together. What the key
 * must catch is a YAML edited after its binary form was written: any edit confined to 64
 * consecutive bits changes one of the two CRCs for certain (their generator polynomials are
 * coprime), any other with odds of 2^-64, and every edit that changes the length changes the
 * key. It is no defence against a crafted YAML, nor needs to be: who can write beside the YAML as
 * its owner (the one binary form that is read) can write the YAML too.
 *
 * <p>Format (big-endian, {@link DataOutputStream}): magic {@code "NTJC"}, int version, the key
 * (long length of the YAML in bytes, int CRC-32C, int CRC-32 of its bytes), then the policy:
 * string name, byte mode, string description, int profiles; per profile string name, 4 longs (nRanks min/max, nNodes min/max), the hardware
 * match (5 optional ranges: nNvlDomains, min- and maxRanksPerNvlDomain, ncclVersion,
 * computeCapability, in that order, then an optional string gpu), int constants (per constant
 * string name, double value), int rules; per rule byte collective, long fromBytes, long toBytes
 * (-1 = unbounded), 2 longs numPipeOps, byte regBuff (0 any, 1 false, 2 true), byte has-ncclPick
 * then the candidate, double ncclRegret, int candidates; per candidate byte algorithm id, byte
 * protocol id, int channels, double regret, long chunkSize; after a profile's rules its compiled
 * table (format 4): int length and int32s each of DecisionTable's head, chains and rules, int
 * length and int64s of its chunk sizes, the 32 bytes of its sha256. Strings: int length, UTF-8
 * bytes; an optional value: byte 0 (absent) or 1 then the value. Last, int CRC-32C of every byte
 * before it (format 3): a form whose trailer does not match is not read.
 *
 * <p>Why the table too (format 4): compiling a 10,000-rule profile and hashing its table took 38-41
 * ms of the plugin's 160 ms first init (the start runs interpreted), reading it stored 1-2 ms: first
 * init 10,000 rules / 1 rule 2.4x -> 1.8x (bench_driver, AOT cache, Intel Xeon, 2026-12-03).
 * {@link #write} stores {@code DecisionTable.compile} of each profile and refuses a form whose
 * stored tables do not read back equal to it; {@link DecisionTable#stored} checks every index a
 * lookup follows. {@link #VERSION} changes with whatever changes {@code DecisionTable.compile}'s
 * output or its sha256 too.
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
    // 2: hardware match, constants, regBuff and chunkSize; the CRC key; 3: the trailer; 4: each
    // profile's compiled table and its sha256 (DecisionTable.compile's output)
    static final int VERSION = 4;

    /**
     * The largest binary form read: 4x the largest YAML (a form is smaller than its YAML: a rule of
     * about 100 YAML bytes takes about 60), so a huge file beside the YAML (a hostile host's 100 MB
     * sparse one made the engine run out of memory and step aside) just means the YAML is parsed.
     */
    static final long MAX_FORM_BYTES = 4 * PolicyLoader.MAX_FILE_BYTES;

    /** Bytes of the key: the YAML's length (8), CRC-32C (4) and CRC-32 (4). */
    static final int KEY_BYTES = 16;

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
        Policy p = fromBinaryForm(yaml);
        return p != null ? p : PolicyLoader.load(yaml);
    }

    /**
     * A policy as {@link #load} reads it, and which of the two forms it came from.
     *
     * @param policy the validated policy
     * @param compiled whether it was read from the binary form (false: the YAML was parsed)
     * @param why when the YAML was parsed, why the binary form was not used ({@code no FILE.compiled
     *     beside it}, {@code FILE.compiled is of the YAML before its last edit}, ...); empty when
     *     {@code compiled}
     */
    public record Loaded(Policy policy, boolean compiled, String why) {}

    /**
     * {@link #load}, saying which form was read and, for a parsed YAML, why its binary form was not
     * (the plugin's init notice prints it once, so a user sees why a policy starts slowly).
     *
     * @param yaml a YAML policy file (at most {@link PolicyLoader#MAX_FILE_BYTES} bytes)
     * @return the policy, equal to {@code PolicyLoader.load(yaml)}, and its form
     * @throws PolicyException as {@link PolicyLoader#load(Path)}
     */
    public static Loaded loadDescribed(Path yaml) throws PolicyException {
        Policy p = fromBinaryForm(yaml);
        if (p != null) {
            return new Loaded(p, true, "");
        }
        return new Loaded(PolicyLoader.load(yaml), false, whyNotUsed(yaml));
    }

    /** Why {@code yaml}'s binary form was not read (called only when it was not: off the fast path). */
    static String whyNotUsed(Path yaml) {
        Path bin = pathFor(yaml);
        String name = bin.getFileName().toString();
        try {
            if (!Files.exists(bin)) {
                return "no " + name + " beside it";
            }
            if (!Files.isRegularFile(bin)) {
                return name + " is not a regular file";
            }
            if (!trusted(bin, yaml)) {
                return name + " is writable by others or owned by another user than the YAML, so it is not trusted";
            }
            if (Files.size(bin) > MAX_FORM_BYTES) {
                return name + " is larger than a compiled policy can be (" + MAX_FORM_BYTES + " bytes)";
            }
            byte[] data = Files.readAllBytes(bin);
            ByteBuffer head = ByteBuffer.wrap(data);
            if (data.length < 8 + KEY_BYTES || head.getInt() != MAGIC) {
                return name + " is not a compiled policy";
            }
            if (head.getInt() != VERSION) {
                return name + " is of another format version (an older or newer nccl-tuner-java wrote it)";
            }
            byte[] recorded = new byte[KEY_BYTES];
            head.get(recorded);
            if (!Arrays.equals(recorded, key(yaml))) {
                return name + " is of another YAML (written before the YAML was last edited)";
            }
            return name + (wholeBody(data) ? " is damaged" : " is damaged (its checksum does not match)");
        } catch (IOException | RuntimeException e) {
            return name + " cannot be read (" + e.getMessage() + ")";
        }
    }

    /**
     * Whether the plugin would read {@code yaml}'s binary form instead of parsing it: the form is
     * there, owned as the YAML and writable by no one else, of this version, keyed by the YAML as
     * it is now and whole ({@code nccl-tuner} tools and tests ask; the plugin just loads).
     *
     * @param yaml a YAML policy file
     * @return true if {@link #load} would return the binary form's policy
     */
    public static boolean isCurrent(Path yaml) {
        return fromBinaryForm(yaml) != null;
    }

    /** The policy in {@code yaml}'s binary form, or null when that is not to be used (see {@link #load}). */
    private static Policy fromBinaryForm(Path yaml) {
        try {
            Path bin = pathFor(yaml);
            if (!Files.isRegularFile(bin)
                    || !Files.isRegularFile(yaml)
                    || Files.size(yaml) > PolicyLoader.MAX_FILE_BYTES
                    || Files.size(bin) > MAX_FORM_BYTES
                    || !trusted(bin, yaml)) {
                return null;
            }
            return decode(Files.readAllBytes(bin), key(yaml), yaml);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Whether the binary form may stand for the YAML: the same owner as the YAML, and writable by
     * nobody else (so that, say, a policy in a shared folder like /tmp cannot be shadowed by a
     * binary form someone else put beside it: the key only says which YAML it claims to be).
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
        byte[] key = key(yaml);
        Policy p = PolicyLoader.load(yaml);
        if (!Arrays.equals(key, key(yaml))) {
            throw new IOException(yaml + " changed while it was read; try again");
        }
        byte[] form = encode(p, key);
        Decoded back = decodeWithTables(form, key, yaml);
        if (back == null || !p.equals(back.policy())) {
            throw new IllegalStateException(yaml + ": the binary form does not read back to the policy (a field its"
                    + " format does not hold); not written, the plugin parses the YAML");
        }
        for (Profile prof : back.policy().profiles()) {
            DecisionTable stored = back.tables().get(prof);
            if (stored == null || !stored.sameAs(DecisionTable.compile(prof))) {
                throw new IllegalStateException(yaml + ": profile " + prof.name() + "'s compiled table does not read"
                        + " back as compiled; not written, the plugin parses the YAML");
            }
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

    /**
     * The key of a YAML file's bytes, read in 64 KiB pieces.
     *
     * @param yaml the file
     * @return {@link #KEY_BYTES} bytes: its length, CRC-32C and CRC-32, big-endian
     * @throws IOException if it cannot be read
     */
    static byte[] key(Path yaml) throws IOException {
        try (InputStream in = Files.newInputStream(yaml)) {
            return key(in);
        }
    }

    /** @see #key(Path) */
    static byte[] key(InputStream in) throws IOException {
        CRC32C c = new CRC32C();
        CRC32 d = new CRC32();
        byte[] buf = new byte[64 * 1024];
        long length = 0;
        for (int n; (n = in.read(buf)) > 0; length += n) {
            c.update(buf, 0, n);
            d.update(buf, 0, n);
        }
        ByteArrayOutputStream key = new ByteArrayOutputStream(KEY_BYTES);
        DataOutputStream out = new DataOutputStream(key);
        out.writeLong(length);
        out.writeInt((int) c.getValue());
        out.writeInt((int) d.getValue());
        return key.toByteArray();
    }

    /** The binary form of {@code p}, keyed by {@code key} ({@link #key(Path)} of its YAML). */
    static byte[] encode(Policy p, byte[] key) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            out.write(key);
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
                table(out, DecisionTable.compile(prof));
            }
            out.flush();
            CRC32C body = new CRC32C();
            body.update(bytes.toByteArray());
            out.writeInt((int) body.getValue()); // the trailer: a damaged form is not read (below)
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
     *     is not this format's version, is keyed by another YAML, or is inconsistent in any way
     */
    static Policy decode(byte[] data, byte[] key, Path source) {
        Decoded d = decodeWithTables(data, key, source);
        if (d == null) {
            return null;
        }
        lastTables = d.tables();
        return d.policy();
    }

    /** A decoded form: the policy and its profiles' stored tables, by Profile identity. */
    record Decoded(Policy policy, Map<Profile, DecisionTable> tables) {}

    /** As {@link #decode}, keeping the stored tables apart ({@link #write} compares them). */
    static Decoded decodeWithTables(byte[] data, byte[] key, Path source) {
        try {
            if (!wholeBody(data)) {
                return null;
            }
            In in = new In(Arrays.copyOf(data, data.length - Integer.BYTES));
            if (in.readInt() != MAGIC || in.readInt() != VERSION) {
                return null;
            }
            byte[] recorded = new byte[KEY_BYTES];
            in.readFully(recorded);
            if (!Arrays.equals(recorded, key)) {
                return null;
            }
            Map<Profile, DecisionTable> tables = new IdentityHashMap<>();
            String name = string(in);
            Mode mode = Mode.values()[in.readUnsignedByte()];
            String description = string(in);
            int nProfiles = count(in);
            List<Profile> profiles = new ArrayList<>(nProfiles);
            for (int i = 0; i < nProfiles; i++) {
                String pname = string(in);
                Range nRanks = in.range();
                Range nNodes = in.range();
                HardwareMatch hardware = hardware(in);
                int nConstants = count(in);
                List<TunerConstant> constants = new ArrayList<>(nConstants);
                for (int k = 0; k < nConstants; k++) {
                    constants.add(TunerConstant.parse(string(in), in.readDouble())); // its checks, as the loader's
                }
                int nRules = count(in);
                List<Rule> rules = new ArrayList<>(nRules);
                for (int j = 0; j < nRules; j++) {
                    rules.add(in.rule());
                }
                Profile profile = new Profile(pname, nRanks, nNodes, rules, hardware, constants);
                profiles.add(profile);
                tables.put(profile, table(in, nRules));
            }
            if (in.read() != -1) {
                return null; // trailing bytes: not a file this code wrote
            }
            return new Decoded(new Policy(name, mode, description, profiles, source), tables);
        } catch (IOException | RuntimeException e) {
            return null; // truncated, or an id out of range
        }
    }

    /**
     * Whether the form's trailer, a CRC-32C of every byte before it, matches: a flipped byte in the
     * body (a damaged disk or copy) would otherwise decode to another valid policy with other
     * decisions on this rank alone (found by a hostile host: 40 of 249 single-byte flips did).
     */
    static boolean wholeBody(byte[] data) {
        int n = data.length - Integer.BYTES;
        if (n < 8 + KEY_BYTES) {
            return false;
        }
        CRC32C crc = new CRC32C();
        crc.update(data, 0, n);
        int recorded = ((data[n] & 0xff) << 24)
                | ((data[n + 1] & 0xff) << 16)
                | ((data[n + 2] & 0xff) << 8)
                | (data[n + 3] & 0xff);
        return recorded == (int) crc.getValue();
    }

    /**
     * The compiled table of a profile that {@link #load} read from a binary form (identity: the
     * very Profile object that form's decoding made), else the profile compiled now. The plugin's
     * start takes its tables here: a 10,000-rule profile's compilation and sha256 took 38-41 ms of
     * its 160 ms first init (bench_driver, AOT cache, Intel Xeon, 2026-12-03), its stored table
     * 1-2 ms. Only the last decoded form's tables are kept.
     *
     * @param profile a profile of a loaded policy
     * @return its compiled table, equal ({@link DecisionTable#sameAs}) to {@code DecisionTable.compile(profile)}
     */
    public static DecisionTable tableFor(Profile profile) {
        Map<Profile, DecisionTable> last = lastTables;
        DecisionTable t = last.get(profile);
        return t != null ? t : DecisionTable.compile(profile);
    }

    /** The tables of the binary form decoded last, by Profile identity. */
    private static volatile Map<Profile, DecisionTable> lastTables = Map.of();

    /**
     * A profile's compiled table: int length and the int32s of head, chains and rules, int length
     * and the int64s of the chunk sizes, the 32 bytes of its sha256 (DecisionTable's arrays,
     * which its sha256 covers with the profile's constants).
     */
    private static void table(DataOutputStream out, DecisionTable t) throws IOException {
        for (int[] a : new int[][] {t.head, t.chains, t.rules}) {
            out.writeInt(a.length);
            for (int v : a) {
                out.writeInt(v);
            }
        }
        long[] chunks = t.chunkSizes();
        out.writeInt(chunks.length);
        for (long v : chunks) {
            out.writeLong(v);
        }
        out.write(java.util.HexFormat.of().parseHex(t.sha256()));
    }

    /**
     * Reads what {@link #table(DataOutputStream, DecisionTable)} wrote, with every index the
     * lookup follows checked ({@link DecisionTable#stored}): a table that could send a call out of
     * its arrays is refused, and with it the form.
     */
    private static DecisionTable table(In in, int nRules) throws IOException {
        int[] head = in.readInts();
        int[] chains = in.readInts();
        int[] rules = in.readInts();
        long[] chunks = new long[count(in)];
        for (int i = 0; i < chunks.length; i++) {
            chunks[i] = in.readLong();
        }
        byte[] sha = new byte[32];
        in.readFully(sha);
        DecisionTable t = DecisionTable.stored(
                head, chains, rules, chunks, nRules, java.util.HexFormat.of().formatHex(sha));
        if (t == null) {
            throw new IOException("inconsistent compiled table");
        }
        return t;
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

    private static HardwareMatch hardware(In in) throws IOException {
        Range[] r = new Range[5];
        for (int i = 0; i < r.length; i++) {
            r[i] = in.readBoolean() ? in.range() : null;
        }
        String gpu = in.readBoolean() ? string(in) : null;
        HardwareMatch h = new HardwareMatch(r[0], r[1], r[2], r[3], gpu, r[4]);
        return h.isAny() ? HardwareMatch.ANY : h;
    }

    /**
     * Reads the format from memory with shifts: not {@link DataInputStream}, whose readInt and
     * readLong go through a VarHandle, dozens of frames a field in the interpreted start (decoding
     * the 10,000-rule policy took 120-144 ms with it).
     */
    private static final class In {
        private final byte[] b;
        private int at;

        /**
         * The last distinct candidates and ranges read, handed out again for equal values (records:
         * the policy is equal either way). A large policy repeats a few of each thousands of
         * times; one object each saves its allocation and the collections it would cause. Each
         * candidate's fields are kept beside it as read (ids, channels, regret's bits, chunk size),
         * so that a lookup compares ints and longs instead of calling its accessors, a call each
         * in the interpreted start.
         */
        private final Candidate[] candidates = new Candidate[8];

        private final long[] candidateKeys = new long[8]; // algorithm id << 40 | protocol id << 32 | channels
        private final long[] candidateRegrets = new long[8];
        private final long[] candidateChunks = new long[8];
        private final Range[] ranges = new Range[8];
        private int nCandidates;
        private int nRanges;
        private int replaced; // once full, the slot replaced next

        In(byte[] b) {
            this.b = b;
        }

        /**
         * One rule as {@code rule(DataOutputStream, Rule)} wrote it: collective id, fromBytes,
         * toBytes, numPipeOps, regBuff (0 any, 1 false, 2 true), NCCL's pick (a boolean, then the
         * candidate), NCCL's regret, the candidate count and the candidates. Read in place, a field
         * at a time, with the checks the loader makes.
         */
        Rule rule() throws IOException {
            Collective coll = Collective.values()[readUnsignedByte()];
            long from = readLong();
            long to = readLong();
            Range pipe = range();
            int regBuff = readUnsignedByte();
            if (regBuff > 2) {
                throw new IOException("bad regBuff " + regBuff);
            }
            Candidate ncclPick = readUnsignedByte() != 0 ? candidate() : null;
            double ncclRegret = Double.longBitsToDouble(readLong());
            int nCand = readInt();
            if (nCand < 1 || nCand > PolicyLoader.MAX_CANDIDATES) {
                throw new IOException("bad candidate count " + nCand);
            }
            Candidate[] cands = new Candidate[nCand];
            for (int k = 0; k < nCand; k++) {
                cands[k] = candidate();
            }
            // List.of: the Rule keeps it as it is (List.copyOf of an immutable list)
            return new Rule(
                    coll, from, to, pipe, ncclPick, ncclRegret, List.of(cands), regBuff == 0 ? null : regBuff == 2);
        }

        /** One candidate as {@code candidate(DataOutputStream, Candidate)} wrote it, checked. */
        Candidate candidate() throws IOException {
            int a = readUnsignedByte();
            int p = readUnsignedByte();
            int channels = readInt();
            if (channels < 0 || channels > PolicyLoader.MAX_CHANNELS) {
                throw new IOException("bad channel count " + channels); // PolicyLoader never lets one through
            }
            long regret = readLong();
            long chunkSize = readLong();
            if (chunkSize < 0 || chunkSize > PolicyLoader.MAX_CHUNK_SIZE) {
                throw new IOException("bad chunk size " + chunkSize); // PolicyLoader never lets one through
            }
            long key = (long) a << 40 | (long) p << 32 | channels & 0xffffffffL;
            for (int i = 0; i < nCandidates; i++) {
                if (candidateKeys[i] == key && candidateRegrets[i] == regret && candidateChunks[i] == chunkSize) {
                    return candidates[i];
                }
            }
            // ofId throws for an id NCCL does not have; the raw bits are the double's as written
            Candidate c = new Candidate(
                    Algorithm.ofId(a), Protocol.ofId(p), channels, Double.longBitsToDouble(regret), chunkSize);
            int slot = nCandidates < candidates.length ? nCandidates++ : replaced++ % candidates.length;
            candidates[slot] = c;
            candidateKeys[slot] = key;
            candidateRegrets[slot] = regret;
            candidateChunks[slot] = chunkSize;
            return c;
        }

        /** A range as {@code range(DataOutputStream, Range)} wrote it: min, then max (min <= max). */
        Range range() throws IOException {
            long min = readLong();
            long max = readLong();
            if (min > max) {
                throw new IOException("bad range " + min + ".." + max);
            }
            return range(min, max);
        }

        Range range(long min, long max) {
            if (min == Range.ANY.min() && max == Range.ANY.max()) {
                return Range.ANY;
            }
            for (int i = 0; i < nRanges; i++) {
                if (ranges[i].min() == min && ranges[i].max() == max) {
                    return ranges[i];
                }
            }
            Range r = new Range(min, max);
            ranges[nRanges < ranges.length ? nRanges++ : replaced++ % ranges.length] = r;
            return r;
        }

        /** @return the next byte, or -1 at the end */
        int read() {
            return at < b.length ? b[at++] & 0xff : -1;
        }

        int readUnsignedByte() throws EOFException {
            int i = at;
            if (i >= b.length) {
                throw new EOFException();
            }
            at = i + 1;
            return b[i] & 0xff;
        }

        boolean readBoolean() throws EOFException {
            return readUnsignedByte() != 0;
        }

        /** Big-endian, its four bytes read in place (no call a byte: the start runs interpreted). */
        int readInt() throws EOFException {
            int i = at;
            byte[] v = b;
            if (i > v.length - Integer.BYTES) {
                throw new EOFException();
            }
            at = i + Integer.BYTES;
            return v[i] << 24 | (v[i + 1] & 0xff) << 16 | (v[i + 2] & 0xff) << 8 | v[i + 3] & 0xff;
        }

        /** Big-endian, its eight bytes read in place, as {@link #readInt}. */
        long readLong() throws EOFException {
            int i = at;
            byte[] v = b;
            if (i > v.length - Long.BYTES) {
                throw new EOFException();
            }
            at = i + Long.BYTES;
            int hi = v[i] << 24 | (v[i + 1] & 0xff) << 16 | (v[i + 2] & 0xff) << 8 | v[i + 3] & 0xff;
            int lo = v[i + 4] << 24 | (v[i + 5] & 0xff) << 16 | (v[i + 6] & 0xff) << 8 | v[i + 7] & 0xff;
            return (long) hi << 32 | lo & 0xffffffffL;
        }

        double readDouble() throws EOFException {
            return Double.longBitsToDouble(readLong());
        }

        /** An int length, then that many int32s, read in bulk (the start runs interpreted). */
        int[] readInts() throws IOException {
            int n = readInt();
            if (n < 0 || n > (b.length - at) / Integer.BYTES) {
                throw new IOException("bad array length " + n);
            }
            int[] v = new int[n];
            java.nio.ByteBuffer.wrap(b, at, n * Integer.BYTES).asIntBuffer().get(v);
            at += n * Integer.BYTES;
            return v;
        }

        void readFully(byte[] into) throws EOFException {
            if (into.length > b.length - at) {
                throw new EOFException();
            }
            System.arraycopy(b, at, into, 0, into.length);
            at += into.length;
        }
    }

    private static void string(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String string(In in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > PolicyLoader.MAX_FILE_BYTES) {
            throw new IOException("bad string length " + n);
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static int count(In in) throws IOException {
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

    private static void candidate(DataOutputStream out, Candidate c) throws IOException {
        out.writeByte(c.algorithm().id());
        out.writeByte(c.protocol().id());
        out.writeInt(c.channels());
        out.writeDouble(c.regret());
        out.writeLong(c.chunkSize());
    }
}

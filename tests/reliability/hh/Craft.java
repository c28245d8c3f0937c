package io.nccltuner.engine;

import io.nccltuner.policy.Policy;
import io.nccltuner.policy.PolicyLoader;
import java.io.*;
import java.nio.file.*;
import java.util.zip.CRC32C;

/** Writes YAML.compiled with the first profile's table mutated (single-profile policy). */
public class Craft {
    public static void main(String[] a) throws Exception {
        Path yaml = Path.of(a[0]);
        String what = a[1];
        Policy p = PolicyLoader.load(yaml);
        byte[] form = CompiledPolicy.encode(p, CompiledPolicy.key(yaml));
        Policy.Profile prof = p.profiles().get(p.profiles().size() - 1);
        DecisionTable t = DecisionTable.compile(prof);
        int[] head = t.head.clone(), chains = t.chains.clone(), rules = t.rules.clone();
        long[] chunks = t.chunkSizes();
        int L = 4 + 4 * head.length + 4 + 4 * chains.length + 4 + 4 * rules.length + 4 + 8 * chunks.length + 32;
        int start = form.length - 4 - L;
        byte[] sha = java.util.Arrays.copyOfRange(form, form.length - 4 - 32, form.length - 4);
        int c0 = DecisionTable.FIRST_CANDIDATE;
        switch (what) {
            case "algo200" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] & ~0xff) | 200; }
            case "algo6proto2" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] & ~0xffff) | 6 | 2 << 8; }
            case "proto9" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] & ~0xff00) | 9 << 8; }
            case "ch64" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] & ~0xff0000) | 64 << 16; }
            case "ch65" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] & ~0xff0000) | 65 << 16; }
            case "ch255" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] | 0xff0000); }
            case "chunkidx" -> { for (int r = 0; r < rules.length; r += 8) rules[r + c0] = (rules[r + c0] & 0xffffff) | (chunks.length + 1) << 24; }
            case "count0" -> rules[2] = 0;
            case "count5" -> rules[2] = 5;
            case "countneg" -> rules[2] = -1;
            case "count4garbage" -> { rules[2] = 4; for (int k = 4; k < 7; k++) rules[k] = 0xffffffff & ~0xff0000 & 0x00ffffff; }
            case "headout" -> head[0] = chains.length;
            case "headneg" -> head[0] = -2;
            case "chainnoend" -> chains[chains.length - 1] = 0;
            case "chainout" -> chains[0] = rules.length;
            case "chainodd" -> chains[0] = 3;
            case "regbuff3" -> rules[7] = 3;
            case "pipeall" -> { for (int r = 0; r < rules.length; r += 8) { rules[r] = Integer.MIN_VALUE; rules[r + 1] = Integer.MAX_VALUE; } }
            case "everybucket" -> { for (int i = 0; i < head.length; i++) if (head[i] < 0) head[i] = 0; }
            case "longchain" -> {
                int n = 1_500_000;
                int[] c = new int[n + 1];
                for (int i = 0; i < n; i++) c[i] = 0; c[n] = -1;
                // rule 0 never matches: numPipeOps range empty
                rules[0] = 5; rules[1] = 4;
                chains = c; java.util.Arrays.fill(head, 0);
            }
            case "chunkneg" -> { if (chunks.length > 0) chunks[0] = -5; else chunks = new long[] {-5}; }
            case "chunkzero" -> { chunks = new long[] {0}; }
            case "chunkhuge" -> { chunks = new long[] {Long.MAX_VALUE}; }
            case "rulecountlie" -> {}  // handled below
            case "none" -> {}
            default -> throw new IllegalArgumentException(what);
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream o = new DataOutputStream(b);
        o.write(form, 0, start);
        for (int[] arr : new int[][] {head, chains, rules}) { o.writeInt(arr.length); for (int v : arr) o.writeInt(v); }
        o.writeInt(chunks.length); for (long v : chunks) o.writeLong(v);
        o.write(sha);
        o.flush();
        CRC32C crc = new CRC32C(); crc.update(b.toByteArray());
        o.writeInt((int) crc.getValue());
        Path out = CompiledPolicy.pathFor(yaml);
        Files.write(out, b.toByteArray());
        System.out.println("wrote " + out + " " + Files.size(out) + " bytes, " + what + "; decodes=" + (CompiledPolicy.decode(b.toByteArray(), CompiledPolicy.key(yaml), yaml) != null));
    }
}

package io.nccltuner.compile;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The NCCL INFO lines the compiler reads: environment settings, the communicator shape and the
 * TUNING selection lines that tell what NCCL ran.
 *
 * <p>Formats, from NCCL's sources:
 *
 * <ul>
 *   <li>{@code NCCL_PROTO set by environment to LL} (src/graph/tuning.cc, string parameters) and
 *       {@code NCCL_MAX_NCHANNELS set by environment to 4.} (src/misc/param.cc, integer
 *       parameters, with a trailing dot).
 *   <li>{@code comm 0x... rank 0 nRanks 2 nNodes 2 localRanks 1 ...} (src/init.cc, 2.12+).
 *   <li>Selection, rank 0 only: {@code 1048576 Bytes -> Algo 1 proto 1 time 39.646954} (2.22 and
 *       older, numeric ids), {@code AllReduce: 1048576 Bytes -> Algo 1 proto 1 time ...} (2.23),
 *       {@code AllReduce: 1048576 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}} (2.24+,
 *       src/enqueue.cc; bytes are {@code count * typeSize}, i.e. per rank for AllGather and
 *       ReduceScatter while the tuner gets nRanks times that).
 * </ul>
 */
public final class NcclLog {
  static final Pattern ENV =
      Pattern.compile("NCCL INFO (NCCL_[A-Z0-9_]+) set by environment to (.*?)\\.?\\s*$");
  static final Pattern COMM =
      Pattern.compile("NCCL INFO comm 0x[0-9a-fA-F]+ rank (\\d+) nRanks (\\d+) nNodes (\\d+)");
  static final Pattern SELECTION = Pattern.compile(
      "NCCL INFO (?:([A-Za-z]+): )?(\\d+) Bytes -> Algo (\\w+) proto (\\w+)");

  private NcclLog() {}

  /** A parsed selection line before the communicator's nRanks is applied. */
  record RawSelection(String where, Collective collective, long bytes, Algorithm algorithm,
      Protocol protocol, boolean perRankBytes) {

    /**
     * @param nRanks ranks of the communicator (0 when unknown)
     * @param nNodes nodes of the communicator (0 when unknown)
     * @return the selection with bytes as the tuner sees them, or null when AllGather or
     *     ReduceScatter bytes are per rank and nRanks is unknown
     */
    Selection resolve(int nRanks, int nNodes) {
      long b = bytes;
      if (perRankBytes && (collective == Collective.AllGather || collective == Collective.ReduceScatter)) {
        if (nRanks <= 0) {
          return null;
        }
        b = bytes * nRanks;
      }
      return new Selection(where, collective, nRanks, nNodes, b, algorithm, protocol);
    }
  }

  /**
   * Parses a selection line.
   *
   * @param where {@code file:line}
   * @param line the log line
   * @return the selection, or null when the line is not one
   * @throws InputException when the line is a selection line naming an unknown algorithm,
   *     protocol or collective
   */
  static RawSelection selection(String where, String line) throws InputException {
    Matcher m = SELECTION.matcher(line);
    if (!m.find()) {
      return null;
    }
    Collective coll = null;
    if (m.group(1) != null) {
      coll = Collective.parse(m.group(1));
      if (coll == null) {
        return null; // SendRecv and other non-tuner functions
      }
    }
    String a = m.group(3);
    String p = m.group(4);
    boolean numeric = a.chars().allMatch(Character::isDigit);
    Algorithm alg;
    Protocol proto;
    try {
      alg = numeric ? Algorithm.ofId(Integer.parseInt(a)) : Algorithm.parse(a);
      proto = p.chars().allMatch(Character::isDigit) ? Protocol.ofId(Integer.parseInt(p)) : Protocol.parse(p);
    } catch (IllegalArgumentException e) {
      throw new InputException(where, "selection line names " + e.getMessage());
    }
    if (alg == null || proto == null) {
      throw new InputException(where, "selection line names unknown algorithm/protocol '" + a + "'/'" + p + "'");
    }
    return new RawSelection(where, coll, Long.parseLong(m.group(2)), alg, proto, !numeric);
  }

  /**
   * Reads the selection lines of a standalone NCCL log ({@code NCCL_DEBUG=INFO
   * NCCL_DEBUG_SUBSYS=INIT,TUNING}), for telling which configuration NCCL's own pick was when
   * the measurements do not say (the sweep CSV's "auto" rows). The communicator shape comes from
   * the log's {@code comm ... nRanks N nNodes M} line.
   *
   * @param file the log
   * @param into receives the selections, and a warning for lines that cannot be used
   * @throws IOException if the file cannot be read
   * @throws InputException on a malformed selection line
   */
  public static void readSelections(Path file, MeasurementSet into) throws IOException, InputException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    int nRanks = 0;
    int nNodes = 0;
    List<RawSelection> raw = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher c = COMM.matcher(line);
      if (c.find()) {
        int r = Integer.parseInt(c.group(2));
        int n = Integer.parseInt(c.group(3));
        if (nRanks != 0 && (r != nRanks || n != nNodes)) {
          throw new InputException(file + ":" + (i + 1), "the log describes communicators of "
              + nRanks + " and " + r + " ranks; pass one log per communicator shape");
        }
        nRanks = r;
        nNodes = n;
        continue;
      }
      RawSelection s = selection(file + ":" + (i + 1), line);
      if (s != null) {
        raw.add(s);
      }
    }
    int unusable = 0;
    for (RawSelection s : raw) {
      Selection sel = s.resolve(nRanks, nNodes);
      if (sel == null) {
        unusable++;
      } else {
        into.add(sel);
      }
    }
    if (unusable > 0) {
      into.warn(file.toString(), unusable + " AllGather/ReduceScatter selection lines print bytes per "
          + "rank and the log has no 'comm ... nRanks' line; they were not used");
    }
    if (raw.isEmpty()) {
      into.warn(file.toString(), "no selection lines ('Bytes -> Algo'); run with NCCL_DEBUG=INFO "
          + "NCCL_DEBUG_SUBSYS=INIT,TUNING");
    }
  }
}

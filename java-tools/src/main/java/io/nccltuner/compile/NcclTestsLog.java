package io.nccltuner.compile;

import io.nccltuner.policy.InputException;

import io.nccltuner.policy.Algorithm;
import io.nccltuner.policy.Collective;
import io.nccltuner.policy.Policy.Range;
import io.nccltuner.policy.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the text output of nccl-tests' all_reduce_perf, all_gather_perf, reduce_scatter_perf,
 * broadcast_perf and reduce_perf (any version since 2019) into {@link Measurement}s.
 *
 * <p>A file may hold several runs (one after another, as when a script appends them); each run
 * starts at its header ({@code # nccl-tests version}, {@code # Collective test starting:} or
 * {@code # nThread ...}) and ends at its footer ({@code # Avg bus bandwidth}). Per run:
 *
 * <ul>
 *   <li>The collective comes from {@code # Collective test starting: all_reduce_perf} (2.18+),
 *       else the {@code --collective} option, else a {@code *_perf} program name anywhere in the
 *       run's lines (a command line), else the file name.
 *   <li>nRanks comes from the option, else NCCL's {@code comm ... nRanks N nNodes M} INFO line,
 *       else the number of {@code # Rank N ...} device lines; nNodes from the option, else the
 *       INFO line, else the number of distinct host names in the device lines (which undercounts
 *       when NCCL_HOSTID makes one host look like several).
 *   <li>The forced configuration comes from NCCL's INFO lines ({@code NCCL_ALGO / NCCL_PROTO /
 *       NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS / NCCL_MIN_CTAS / NCCL_MAX_CTAS set by environment
 *       to ...}), else from the options; a run with neither measured NCCL's own pick. TUNING
 *       selection lines, when present, tell what NCCL actually ran at each size; they complete a
 *       partial forcing (only NCCL_PROTO set) and name NCCL's pick in unforced runs.
 *   <li>The size table layout is read from its column header line: with or without the
 *       {@code redop} and {@code root} columns, {@code time} or {@code cputime}, per-iteration
 *       columns ({@code i_min ... i_cv%}, 2.19+), a trailing timestamp, and the result check as
 *       {@code #wrong} (a count, or {@code N/A} without validation; 2.13+) or {@code error} (the
 *       largest deviation; before 2.13).
 * </ul>
 *
 * <p>A row whose check failed is refused (recorded with file:line, never used): {@code #wrong}
 * above 0, or an {@code error} above what nccl-tests itself counted as a failure before 2.13
 * ({@code DeltaMaxValue(type) * (nRanks - 1)}: 1e-2 for half and bfloat16, 1e-5 for float,
 * 1e-12 for double, any deviation for integers; nccl-tests src/common.cu at 51af557^). A row
 * with the wrong number of fields or a field that is not a number is an error naming the file
 * and line.
 */
public final class NcclTestsLog {
  /** Which half of each row to use: nccl-tests times each size out-of-place and in-place. */
  public enum Placement {
    /** the out-of-place columns (the default: NCCL's tuner does not know about in-place) */
    OUT_OF_PLACE,
    /** the in-place columns */
    IN_PLACE,
    /** both, as two replicates */
    BOTH
  }

  /**
   * What to assume where a log does not say. Fields left null or 0 are not assumed.
   *
   * @param collective the collective, when the log names none
   * @param algorithm forced algorithm (NCCL_ALGO) for runs whose log has no INFO line about it
   * @param protocol forced protocol (NCCL_PROTO), likewise
   * @param channels forced channel count (NCCL_MAX_NCHANNELS), likewise; 0 = not forced
   * @param nRanks ranks, overriding the device lines; 0 = from the log
   * @param nNodes nodes, overriding the device lines; 0 = from the log
   * @param placement which columns to use
   */
  public record Options(Collective collective, Algorithm algorithm, Protocol protocol, int channels,
      int nRanks, int nNodes, Placement placement) {
    /** Nothing assumed; out-of-place columns. */
    public static final Options NONE = new Options(null, null, null, 0, 0, 0, Placement.OUT_OF_PLACE);
  }

  private static final Pattern RANK_LINE = Pattern.compile(
      "^#\\s+Rank\\s+(\\d+)\\s+(?:Group\\s+\\d+\\s+)?Pid\\s+\\d+\\s+on\\s+(\\S+)\\s+device");
  private static final Pattern PROGRAM = Pattern.compile(
      "\\b(all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|alltoallv|sendrecv|gather|scatter|hypercube)_perf");
  private static final Pattern AGG = Pattern.compile("agg iters:\\s*(\\d+)");
  private static final Set<String> CHANNEL_ENV = Set.of(
      "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS");

  private final Path file;
  private final Options options;
  private final MeasurementSet into;

  private NcclTestsLog(Path file, Options options, MeasurementSet into) {
    this.file = file;
    this.options = options;
    this.into = into;
  }

  /**
   * Parses one nccl-tests output file.
   *
   * @param file the text output (stdout, optionally with NCCL_DEBUG=INFO lines mixed in)
   * @param options what to assume where the log does not say
   * @param into receives measurements, NCCL's selections from unforced runs, refused rows and
   *     warnings
   * @throws IOException if the file cannot be read
   * @throws InputException on a truncated row, a field that is not a number, a run whose
   *     collective, nRanks or nNodes cannot be told, or options that contradict the log
   */
  public static void parse(Path file, Options options, MeasurementSet into) throws IOException, InputException {
    new NcclTestsLog(file, options, into).run();
  }

  private String at(int line) {
    return file + ":" + line;
  }

  private void run() throws IOException, InputException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    List<Segment> segments = new ArrayList<>();
    Segment cur = new Segment();
    segments.add(cur);
    for (int i = 0; i < lines.size(); i++) {
      int ln = i + 1;
      String line = lines.get(i);
      String t = line.strip();
      boolean marker = t.startsWith("# nccl-tests version") || t.startsWith("# Collective test starting")
          || t.startsWith("# nThread");
      if ((marker && cur.started()) || (cur.closed && !t.startsWith("#") && !t.isEmpty())) {
        cur = new Segment();
        segments.add(cur);
      }
      if (line.contains("NCCL INFO")) {
        cur.info(ln, line);
        continue;
      }
      if (t.startsWith("#")) {
        cur.comment(ln, t);
      } else if (cur.layout != null && !cur.closed && !t.isEmpty() && Character.isDigit(t.charAt(0))) {
        cur.rows.add(parseRow(ln, t, cur.layout));
      } else if (cur.program == null) {
        Matcher m = PROGRAM.matcher(line);
        if (m.find()) {
          cur.program = m.group(1);
        }
      }
    }
    int used = 0;
    List<Unforced> unknown = new ArrayList<>();
    for (Segment s : segments) {
      if (!s.rows.isEmpty()) {
        Unforced u = resolve(s);
        if (u != null) {
          unknown.add(u);
        }
        used++;
      } else if (s.layout != null) {
        into.warn(at(s.layoutLine), "size table without rows");
      }
    }
    if (used == 0) {
      throw new InputException(file.toString(), "no nccl-tests size table found (a '#  size  count  type ...' "
          + "header followed by rows); is this nccl-tests output?");
    }
    warnUnknownForcing(unknown);
  }

  /** A run counted as NCCL's own pick only because nothing says it was forced. */
  private record Unforced(int line, Collective collective, int nRanks, int nNodes) {}

  private void warnUnknownForcing(List<Unforced> unknown) {
    if (unknown.isEmpty()) {
      return;
    }
    String lines = unknown.stream().map(u -> Integer.toString(u.line())).collect(java.util.stream.Collectors.joining(", "));
    into.warn(file.toString(), (unknown.size() == 1 ? "the run (table at line " + lines + ") names"
        : unknown.size() + " runs (tables at lines " + lines + ") name") + " no forced configuration (no NCCL INFO "
        + "'set by environment' lines, no --algo/--proto): counted as NCCL's own choice; if NCCL_ALGO/NCCL_PROTO "
        + "were set, say so with --in " + file + " --algo X --proto Y");
    Map<List<Object>, List<Integer>> same = new LinkedHashMap<>();
    for (Unforced u : unknown) {
      same.computeIfAbsent(List.of(u.collective(), u.nRanks(), u.nNodes()), k -> new ArrayList<>()).add(u.line());
    }
    for (var e : same.entrySet()) {
      if (e.getValue().size() > 1) {
        into.warn(file.toString(), e.getValue().size() + " runs of " + e.getKey().get(0) + " at nRanks "
            + e.getKey().get(1) + ", nNodes " + e.getKey().get(2) + " (tables at lines "
            + e.getValue().stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "))
            + ") cannot be told apart: pooled as replicates of NCCL's own pick; if they were forced differently, "
            + "split the file and pass each with --in FILE --algo X --proto Y");
      }
    }
  }

  // ---- table layout and rows ------------------------------------------------------------------

  /** Column positions of one size table, read from its header line. */
  record Layout(int nCols, boolean timestamp, int type, int[] time, int[] check, boolean errorColumn,
      String header) {}

  static Layout layout(String header) {
    String[] tok = header.substring(1).strip().split("\\s+");
    if (tok.length < 5 || !tok[0].equals("size")) {
      return null;
    }
    List<Integer> times = new ArrayList<>();
    List<Integer> checks = new ArrayList<>();
    int type = -1;
    boolean error = false;
    boolean ts = tok[tok.length - 1].equals("timestamp");
    for (int i = 0; i < tok.length; i++) {
      switch (tok[i]) {
        case "time", "cputime" -> times.add(i);
        case "#wrong" -> checks.add(i);
        case "error" -> {
          checks.add(i);
          error = true;
        }
        case "type" -> type = i;
        default -> { }
      }
    }
    if (times.isEmpty() || times.size() > 2 || checks.size() != times.size()) {
      return null;
    }
    return new Layout(ts ? tok.length - 1 : tok.length, ts, type,
        times.stream().mapToInt(Integer::intValue).toArray(),
        checks.stream().mapToInt(Integer::intValue).toArray(), error, String.join(" ", tok));
  }

  /** One row of a size table; time and check per placement (index 0 out-of-place, 1 in-place). */
  record Row(int line, long size, String type, double[] time, double[] check, boolean errorColumn) {}

  private Row parseRow(int ln, String t, Layout l) throws InputException {
    String[] tok = t.split("\\s+");
    boolean ok = tok.length == l.nCols() || (l.timestamp() && tok.length == l.nCols() + 2);
    if (!ok) {
      throw new InputException(at(ln), "row has " + tok.length + " fields but the column header names "
          + l.nCols() + (l.timestamp() ? " (+2 for the timestamp)" : "") + " (" + l.header()
          + "); the row looks truncated or mangled");
    }
    long size;
    try {
      size = Long.parseLong(tok[0]);
    } catch (NumberFormatException e) {
      throw new InputException(at(ln), "size '" + tok[0] + "' is not a whole number of bytes");
    }
    int n = l.time().length;
    double[] time = new double[n];
    double[] check = new double[n];
    for (int p = 0; p < n; p++) {
      String half = n == 1 ? "" : (p == 0 ? " (out-of-place)" : " (in-place)");
      time[p] = number(ln, tok[l.time()[p]], "time" + half);
      if (!(time[p] > 0) && size != 0) {
        throw new InputException(at(ln), "time" + half + " '" + tok[l.time()[p]] + "' is not a time: times must be > 0 us");
      }
      String c = tok[l.check()[p]];
      check[p] = c.equals("N/A") ? Double.NaN : number(ln, c, (l.errorColumn() ? "error" : "#wrong") + half);
    }
    return new Row(ln, size, l.type() >= 0 ? tok[l.type()] : null, time, check, l.errorColumn());
  }

  private double number(int ln, String s, String what) throws InputException {
    try {
      double v = Double.parseDouble(s);
      if (Double.isFinite(v)) {
        return v;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InputException(at(ln), what + " '" + s + "' is not a number");
  }

  /**
   * nccl-tests' pass/fail bound on the {@code error} column before 2.13:
   * {@code DeltaMaxValue(type) * (nranks - 1)} (src/common.cu at 51af557^).
   */
  static double errorBound(String type, int nRanks) {
    double delta = switch (type == null ? "" : type) {
      case "half", "bfloat16" -> 1e-2;
      case "float" -> 1e-5;
      case "double" -> 1e-12;
      default -> 0; // integer types: any deviation is an error (1e-200)
    };
    return delta * Math.max(1, nRanks - 1);
  }

  // ---- one run ----------------------------------------------------------------------------------

  private final class Segment {
    String startedProgram;
    int startedLine;
    String program;
    boolean nThread;
    int aggIters = 1;
    final List<String> hosts = new ArrayList<>();
    final Map<String, String[]> env = new LinkedHashMap<>(); // name -> {value, where}
    int commRanks;
    int commNodes;
    String commWhere;
    final List<NcclLog.RawSelection> selections = new ArrayList<>();
    Layout layout;
    int layoutLine;
    boolean closed;
    final List<Row> rows = new ArrayList<>();

    boolean started() {
      return nThread || !rows.isEmpty() || closed;
    }

    void info(int ln, String line) throws InputException {
      Matcher m = NcclLog.ENV.matcher(line);
      if (m.find()) {
        env.put(m.group(1), new String[] {m.group(2).strip(), at(ln)});
        return;
      }
      m = NcclLog.COMM.matcher(line);
      if (m.find()) {
        int r = Integer.parseInt(m.group(2));
        int n = Integer.parseInt(m.group(3));
        if (commWhere != null && (r != commRanks || n != commNodes)) {
          throw new InputException(at(ln), "this run's log shows communicators of " + commRanks + " and "
              + r + " ranks; nccl-tests runs one communicator shape per run");
        }
        commRanks = r;
        commNodes = n;
        commWhere = at(ln);
        return;
      }
      NcclLog.RawSelection s = NcclLog.selection(at(ln), line);
      if (s != null) {
        selections.add(s);
      }
    }

    void comment(int ln, String t) {
      if (t.startsWith("# Collective test starting")) {
        String rest = t.substring(t.indexOf(':') + 1).strip();
        Matcher m = PROGRAM.matcher(rest);
        startedProgram = m.find() ? m.group(1) : rest;
        startedLine = ln;
      } else if (t.startsWith("# nThread")) {
        nThread = true;
        Matcher m = AGG.matcher(t);
        if (m.find()) {
          aggIters = Integer.parseInt(m.group(1));
        }
      } else if (t.startsWith("# Out of bounds values") || t.startsWith("# Avg bus bandwidth")) {
        closed = layout != null;
      } else {
        Matcher r = RANK_LINE.matcher(t);
        if (r.find()) {
          hosts.add(r.group(2));
          return;
        }
        if (layout == null) {
          Layout l = layout(t);
          if (l != null) {
            layout = l;
            layoutLine = ln;
          }
        }
      }
    }
  }

  private static Collective collectiveOfProgram(String p) {
    return switch (p) {
      case "all_reduce" -> Collective.AllReduce;
      case "all_gather" -> Collective.AllGather;
      case "reduce_scatter" -> Collective.ReduceScatter;
      case "broadcast" -> Collective.Broadcast;
      case "reduce" -> Collective.Reduce;
      default -> null;
    };
  }

  private static Collective collectiveOfFileName(String name) {
    String n = name.toLowerCase(Locale.ROOT).replace("-", "_");
    if (n.contains("all_reduce") || n.contains("allreduce")) {
      return Collective.AllReduce;
    }
    if (n.contains("reduce_scatter") || n.contains("reducescatter")) {
      return Collective.ReduceScatter;
    }
    if (n.contains("all_gather") || n.contains("allgather")) {
      return Collective.AllGather;
    }
    if (n.contains("broadcast")) {
      return Collective.Broadcast;
    }
    if (n.contains("reduce")) {
      return Collective.Reduce;
    }
    return null;
  }

  /** A forced value read from NCCL_ALGO or NCCL_PROTO: one value, none, or not one value. */
  private record Forced<T>(T value, String text, String where) {
    boolean ambiguous() {
      return value == null && text != null;
    }
  }

  private static <T> Forced<T> forced(String[] env, Collective coll, Function<String, T> parse,
      String var, String kinds) throws InputException {
    if (env == null) {
      return new Forced<>(null, null, null);
    }
    String v = env[0];
    String where = env[1];
    if (v.contains(":")) {
      // NCCL 2.24+ per-collective syntax: "allreduce:tree,ring;broadcast:ring"
      String found = null;
      for (String part : v.split(";")) {
        int c = part.indexOf(':');
        if (c > 0 && Collective.parse(part.substring(0, c).strip()) == coll) {
          found = part.substring(c + 1).strip();
        }
      }
      if (found == null) {
        return new Forced<>(null, null, null);
      }
      v = found;
    }
    if (v.startsWith("^") || v.contains(",")) {
      return new Forced<>(null, v, where);
    }
    T t = parse.apply(v);
    if (t == null) {
      throw new InputException(where, var + " is '" + v + "', not one of " + kinds);
    }
    return new Forced<>(t, v, where);
  }

  /** @return the run when it counts as NCCL's own pick only because nothing says otherwise, else null */
  private Unforced resolve(Segment s) throws InputException {
    String where = at(s.layoutLine);
    // collective
    Collective coll = null;
    if (s.startedProgram != null) {
      coll = collectiveOfProgram(s.startedProgram);
      if (coll == null) {
        into.warn(at(s.startedLine), s.startedProgram + "_perf is not a collective NCCL asks a tuner about; run skipped");
        return null;
      }
      if (options.collective() != null && options.collective() != coll) {
        throw new InputException(at(s.startedLine), "the log says " + s.startedProgram + "_perf but --collective says "
            + options.collective());
      }
    } else if (options.collective() != null) {
      coll = options.collective();
    } else if (s.program != null) {
      coll = collectiveOfProgram(s.program);
      if (coll == null) {
        into.warn(where, s.program + "_perf is not a collective NCCL asks a tuner about; run skipped");
        return null;
      }
    } else {
      coll = collectiveOfFileName(file.getFileName().toString());
    }
    if (coll == null) {
      throw new InputException(where, "cannot tell which collective this table measured (no '# Collective test "
          + "starting' line, no *_perf program name, nothing in the file name); pass --collective");
    }
    // communicator shape
    int nRanks = options.nRanks();
    if (nRanks > 0 && s.commWhere != null && s.commRanks != nRanks) {
      throw new InputException(s.commWhere, "NCCL says nRanks " + s.commRanks + " but --ranks says " + nRanks);
    }
    if (nRanks == 0) {
      nRanks = s.commWhere != null ? s.commRanks : s.hosts.size();
    }
    if (nRanks == 0) {
      throw new InputException(where, "cannot tell nRanks: no '# Rank N ...' device lines and no NCCL "
          + "'comm ... nRanks' line before this table; pass --ranks");
    }
    int nNodes = options.nNodes();
    if (nNodes > 0 && s.commWhere != null && s.commNodes != nNodes) {
      throw new InputException(s.commWhere, "NCCL says nNodes " + s.commNodes + " but --nodes says " + nNodes);
    }
    if (nNodes == 0) {
      nNodes = s.commWhere != null ? s.commNodes : (int) s.hosts.stream().distinct().count();
    }
    if (nNodes == 0) {
      throw new InputException(where, "cannot tell nNodes: no '# Rank N ... on HOST' device lines and no NCCL "
          + "'comm ... nNodes' line before this table; pass --nodes");
    }
    Range pipeOps = s.aggIters <= 1 ? Range.exactly(1) : new Range(2, Long.MAX_VALUE);
    if (s.aggIters > 1) {
      into.warn(where, "agg iters " + s.aggIters + ": NCCL saw grouped calls, so the rules get numPipeOps >= 2 "
          + "(the exact numPipeOps NCCL passed is not in the log)");
    }
    // forced configuration
    final Collective c = coll;
    Forced<Algorithm> fa = forced(s.env.get("NCCL_ALGO"), c, Algorithm::parse, "NCCL_ALGO",
        "TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT");
    Forced<Protocol> fp = forced(s.env.get("NCCL_PROTO"), c, Protocol::parse, "NCCL_PROTO", "LL, LL128, SIMPLE");
    Algorithm algo = fa.value();
    Protocol proto = fp.value();
    if (fa.text() == null && options.algorithm() != null) {
      algo = options.algorithm();
    } else if (algo != null && options.algorithm() != null && algo != options.algorithm()) {
      throw new InputException(fa.where(), "the log says NCCL_ALGO " + algo + " but --algo says " + options.algorithm());
    }
    if (fp.text() == null && options.protocol() != null) {
      proto = options.protocol();
    } else if (proto != null && options.protocol() != null && proto != options.protocol()) {
      throw new InputException(fp.where(), "the log says NCCL_PROTO " + proto + " but --proto says " + options.protocol());
    }
    boolean channelsAmbiguous = false;
    int channels = 0;
    boolean channelEnv = s.env.keySet().stream().anyMatch(CHANNEL_ENV::contains);
    if (channelEnv) {
      int max = Integer.MAX_VALUE;
      int min = 0;
      for (String k : CHANNEL_ENV) {
        String[] e = s.env.get(k);
        if (e == null) {
          continue;
        }
        int v;
        try {
          v = Integer.parseInt(e[0]);
        } catch (NumberFormatException ex) {
          throw new InputException(e[1], k + " is '" + e[0] + "', not a channel count");
        }
        if (k.startsWith("NCCL_MAX")) {
          max = Math.min(max, v);
        } else {
          min = Math.max(min, v);
        }
      }
      if (max == Integer.MAX_VALUE || min > max || max < 1 || max > 64) {
        channelsAmbiguous = true;
      } else {
        channels = max;
      }
      if (options.channels() > 0 && options.channels() != channels) {
        throw new InputException(where, "the log's NCCL_*NCHANNELS/NCCL_*_CTAS lines say " + (channelsAmbiguous
            ? "no single channel count" : channels + " channels") + " but --channels says " + options.channels());
      }
    } else {
      channels = options.channels();
    }
    // what NCCL ran, per size
    Map<Long, Set<RunConfig>> ran = new HashMap<>();
    for (NcclLog.RawSelection r : s.selections) {
      if (r.collective() != null && r.collective() != c) {
        continue;
      }
      Selection sel = r.resolve(nRanks, nNodes);
      ran.computeIfAbsent(sel.nBytes(), k -> new HashSet<>()).add(sel.config());
    }
    boolean auto = algo == null && proto == null && channels == 0 && !fa.ambiguous() && !fp.ambiguous()
        && !channelsAmbiguous;
    int incomplete = 0;
    int contradicted = 0;
    int zero = 0;
    Set<RunConfig> warnedRan = new HashSet<>();
    for (Row row : s.rows) {
      if (row.size() == 0) {
        zero++;
        continue;
      }
      if (refused(row, nRanks)) {
        continue;
      }
      Set<RunConfig> atSize = ran.get(row.size());
      RunConfig actual = atSize != null && atSize.size() == 1 ? atSize.iterator().next() : null;
      RunConfig cfg;
      if (auto) {
        cfg = RunConfig.AUTO;
        if (actual != null) {
          into.add(new Selection(at(row.line()), c, nRanks, nNodes, row.size(), actual.algorithm(), actual.protocol()));
        }
      } else {
        Algorithm a = algo;
        Protocol p = proto;
        if (actual != null) {
          if ((a != null && a != actual.algorithm()) || (p != null && p != actual.protocol())) {
            contradicted++;
            warnedRan.add(actual);
          }
          a = actual.algorithm();
          p = actual.protocol();
        }
        if (a == null || p == null || channelsAmbiguous) {
          incomplete++;
          continue;
        }
        cfg = new RunConfig(a, p, channels);
      }
      Placement pl = options.placement();
      for (int half = 0; half < row.time().length; half++) {
        boolean use = row.time().length == 1 || pl == Placement.BOTH
            || (half == 0 ? pl == Placement.OUT_OF_PLACE : pl == Placement.IN_PLACE);
        if (use) {
          into.add(new Measurement(at(row.line()), c, nRanks, nNodes, pipeOps, row.size(), cfg, row.time()[half]));
        }
      }
    }
    if (incomplete > 0) {
      into.warn(where, incomplete + " rows not used: the run forced " + new RunConfig(algo, proto, channels).label()
          + (fa.ambiguous() ? " (NCCL_ALGO=" + fa.text() + ")" : "") + (fp.ambiguous() ? " (NCCL_PROTO=" + fp.text() + ")" : "")
          + (channelsAmbiguous ? " (no single channel count: a policy can only set NCCL's maximum)" : "")
          + " and no TUNING selection line tells the rest; force NCCL_ALGO and NCCL_PROTO, or log with "
          + "NCCL_DEBUG_SUBSYS=TUNING");
    }
    if (contradicted > 0) {
      into.warn(where, contradicted + " rows ran " + warnedRan + " per NCCL's selection lines, not the forced "
          + new RunConfig(algo, proto, channels).label() + "; used what NCCL ran");
    }
    if (zero > 0) {
      into.warn(where, zero + " rows of 0 bytes skipped (NCCL does not call the tuner for empty collectives)");
    }
    boolean saysNothing = s.env.isEmpty() && options.algorithm() == null && options.protocol() == null
        && options.channels() == 0;
    return auto && saysNothing ? new Unforced(s.layoutLine, c, nRanks, nNodes) : null;
  }

  private boolean refused(Row row, int nRanks) {
    boolean error = row.errorColumn();
    for (int half = 0; half < row.check().length; half++) {
      double v = row.check()[half];
      if (Double.isNaN(v)) {
        continue;
      }
      String name = row.check().length == 1 ? "" : (half == 0 ? " (out-of-place)" : " (in-place)");
      if (error) {
        double bound = errorBound(row.type(), nRanks);
        if (v > bound) {
          into.refuse(at(row.line()), "error " + String.format(Locale.ROOT, "%.0e", v) + name
              + " is above nccl-tests' bound " + String.format(Locale.ROOT, "%.2g", bound) + " for "
              + row.type() + " with " + nRanks + " ranks: results were wrong; row never used");
          return true;
        }
      } else if (v > 0) {
        into.refuse(at(row.line()), "#wrong = " + fmt(v) + name + ": results were wrong; row never used");
        return true;
      }
    }
    return false;
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }
}

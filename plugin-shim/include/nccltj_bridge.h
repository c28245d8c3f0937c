/*
 * nccltj_bridge.h -- the private bridge between the C shim (plugin-shim/src) and the Java policy
 * engine (io.nccltuner.ffm.Bootstrap, io.nccltuner.ffm.Upcalls): not an NCCL interface.
 *
 * The Java side binds it through jextract (make/bindings.mk reads nccl_tuner_java.h, which
 * includes this header and nccl_tuner_abi.h). Keep it plain C11.
 */
#ifndef NCCLTJ_BRIDGE_H_
#define NCCLTJ_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>

#include "nccl_tuner_abi.h"

/* Bumped whenever this bridge changes; the shim and the engine jar refuse each other on mismatch.
 * 5: init carries the tuner ABI version NCCL chose, commId, nvlDomainInfo, constants and the
 *    hardware signature; getCollInfo carries regBuff; getChunkSize added (NCCL tuner v4..v6).
 * 6: init, destroy, the exit-time flush and getChunkSize are one upcall, control, taking an
 *    nccltj_call_t: two FFM upcall stubs instead of four (each costs 7-14 ms of method-handle
 *    spinning at the first init on 2 cores; the JDK 25 AOT cache does not keep them).
 * 7: getCollInfo returns the call's decision code (NCCLTJ_DECISION_*), which the profiler joins
 *    with the collective NCCL executed; NCCLTJ_CALL_MEASURED hands a communicator's measurements
 *    (nccltj_measured_t) to the engine at the profiler's finalize.
 * 8: init's tunerVersion may be 7 (NCCL 2.32.6), whose constants are an ncclTunerConstants_v7_t
 *    (five compute-capability rows, so other offsets than v5's): an engine of ABI 7 would write
 *    a v7 struct at v5's offsets.
 * 9: NCCLTJ_CALL_SKIPPED hands the engine the getCollInfo calls the shim received but did not pass
 *    up, so that they count in the call's index on its communicator (docs/canary.md).
 * 10: the engine no longer calls NCCL's logger itself (nccltj_log_fn, a downcall whose making and
 *    first call took about 6 ms of a 62 ms first init: 10 classes spun, its invoker linked): it
 *    queues its lines, says so in the bridge's linesQueued, and the shim takes them with
 *    NCCLTJ_CALL_TAKE_LINE after an upcall returns and logs them from C, with no Java frame
 *    beneath NCCL's logger.
 * 11: getCollInfo's upcall takes one address, an nccltj_get_t on the shim's stack, as control's
 *    does: its stub shares control's method type, so making it spins no method-handle classes of
 *    its own (a stub of the 9-argument type took 8-10 ms of CPU at the first init). */
#define NCCL_TUNER_JAVA_ABI_VERSION 11

/* regBuff as the engine receives it: NCCL passes 0 or 1 from tuner v4 on; under v3 it is unknown. */
#define NCCLTJ_REGBUFF_UNKNOWN (-1)

/* The hardware signature the shim finds in the process at each init, without link-time
 * dependencies (signature.c): -1 or "" where it could not learn a field. */
typedef struct {
  int32_t ncclVersion; /* ncclGetVersion()'s code (2.28.7 -> 22807), when the host exports it */
  int32_t ccMajor;     /* compute capability of the calling thread's current CUDA device */
  int32_t ccMinor;
  int32_t reserved;
  char gpuName[96]; /* that device's name ("NVIDIA H200"), from a CUDA driver already loaded */
} nccltj_hw_t;

/* What an nccltj_call_t asks of the engine (its op). */
#define NCCLTJ_CALL_INIT 1           /* open a communicator: in tunerVersion .. hw, out handle */
#define NCCLTJ_CALL_DESTROY 2        /* close one: in handle */
#define NCCLTJ_CALL_FLUSH 3          /* once, from an atexit handler: write out queued decision-log records */
#define NCCLTJ_CALL_GET_CHUNK_SIZE 4 /* tuner v6+: in handle, collType .. nChannels, chunkSize */
#define NCCLTJ_CALL_MEASURED 5       /* profiler finalize: in commId, measured (an nccltj_measured_t) */
#define NCCLTJ_CALL_SKIPPED 6        /* in handle, nBytes: that many getCollInfo calls were not passed up */
#define NCCLTJ_CALL_TAKE_LINE 7      /* in text, textBytes; out level, logger: the oldest queued log line */

/* One call of the control upcall, in the caller's memory (the shim's stack). Only the fields of
 * its op are read; the engine writes only `handle` (init) and NCCL's size_t at `chunkSize`.
 * init: tunerVersion is the ABI NCCL chose (3..7); commId is NCCL's commHash (0 under v3 and v4);
 * logger is NCCL's ncclDebugLogger_t as an opaque pointer (may be NULL); nvlDomainInfo (an
 * ncclNvlDomainInfo_v5_t, which v6 and v7 typedef) and constants (an ncclTunerConstants_v5_t
 * under v5 and v6, an ncclTunerConstants_v7_t under v7; the engine may edit it) are addresses,
 * 0 under v3 and v4; hw is an nccltj_hw_t's address. The engine writes an opaque
 * non-zero communicator handle, or leaves 0 to step aside. getChunkSize: collType, nBytes,
 * algorithm, protocol and nChannels as NCCL passes them; chunkSize is the address of NCCL's
 * size_t, which the engine may overwrite. takeLine: text is the address of textBytes bytes (at
 * least 2) where the engine writes its oldest queued line, cut to fit and NUL-terminated, with its
 * NCCL_LOG_* level in `level` and the NCCL logger it is for in `logger` (NULL: the latest init's);
 * level stays 0 (NCCL_LOG_NONE) when no line is queued. Every other op may carry such a buffer too
 * (text, textBytes, level 0): on return the engine has put its oldest waiting line there the same
 * way, so that an init or a destroy that logs one line needs no takeLine upcall. */
typedef struct {
  int32_t op;
  int32_t tunerVersion;
  int64_t handle;
  uint64_t commId;
  uint64_t nRanks;
  uint64_t nNodes;
  void* logger;
  uintptr_t nvlDomainInfo;
  uintptr_t constants;
  uintptr_t hw;
  uint64_t nBytes;
  int32_t collType;
  int32_t algorithm;
  int32_t protocol;
  int32_t nChannels;
  uintptr_t chunkSize;
  uintptr_t measured;
  uintptr_t text;
  uint64_t textBytes;
  int32_t level;
  int32_t reserved;
} nccltj_call_t;

/* Set by the engine in a communicator's handle (the context NCCL holds) when getChunkSize may
 * change the chunk size for it; without it the shim makes no getChunkSize upcall (NCCL 2.30+
 * asks once per collective). io.nccltuner.engine.Engine.CHUNK_SIZES. */
#define NCCLTJ_HANDLE_CHUNK_SIZES (1LL << 62)

/* ---- the decision code getCollInfo returns (bridge 7) ------------------------------------------
 * What the engine did with one getCollInfo call, for the profiler to join with the collective NCCL
 * then executes (profiler.c): 0 when the engine did not look at the call (unknown handle, no
 * policy table for the communicator, a table shape it does not edit). Otherwise
 * NCCLTJ_DECISION_SEEN is set, bits 0-7 hold the size bucket of nBytes
 * (io.nccltuner.policy.SizeGrid, 252 buckets), and when a rule matched NCCLTJ_DECISION_RULE is
 * set with the arm, NCCL's own pick (the strict minimum of the table as NCCL passed it, as
 * algorithm * numProto + protocol; NCCLTJ_DECISION_NONE when not computed or none is
 * selectable), the policy's candidate (same encoding; NONE when no candidate was offered) and the
 * candidate's channel count (0: NCCL decides). io.nccltuner.engine.Decision is the Java side. */
#define NCCLTJ_DECISION_SEEN (1 << 30)
#define NCCLTJ_DECISION_RULE (1 << 29)
#define NCCLTJ_DECISION_BUCKET_MASK 0xff
#define NCCLTJ_DECISION_NCCL_SHIFT 8      /* 5 bits */
#define NCCLTJ_DECISION_CAND_SHIFT 13     /* 5 bits */
#define NCCLTJ_DECISION_CHANNELS_SHIFT 18 /* 7 bits */
#define NCCLTJ_DECISION_ARM_SHIFT 25      /* 2 bits */
#define NCCLTJ_DECISION_ENTRY_MASK 0x1f
#define NCCLTJ_DECISION_CHANNELS_MASK 0x7f
#define NCCLTJ_DECISION_NONE 0x1f
/* Arms. POLICY: the engine wrote its candidate into the table; NCCL: a rule matched and NCCL's
 * pick was kept (the canary's control arm, or shadow mode); NOT_OFFERED: a rule matched but NCCL
 * offered none of its candidates. Two more arms exist only in measurements: UNRULED (the engine
 * saw the call, no rule covers it) and UNJOINED (the profiler found no decision for the
 * collective). */
#define NCCLTJ_ARM_NCCL 0
#define NCCLTJ_ARM_POLICY 1
#define NCCLTJ_ARM_NOT_OFFERED 2
#define NCCLTJ_ARM_UNRULED 3
#define NCCLTJ_ARM_UNJOINED 4

/* ---- measurements (profiler.c -> the engine, NCCLTJ_CALL_MEASURED) ---------------------------
 * Device time of a collective: the span of its channels on the GPU, from the earliest KernelCh
 * start's pTimer to the latest ncclProfilerKernelChStop pTimer (GPU globaltimer, nanoseconds).
 * Histogram: bucket 0 holds times below 2^NCCLTJ_HIST_MIN_LOG2 ns, the last bucket times at or
 * above 2^(NCCLTJ_HIST_MIN_LOG2 + NCCLTJ_HIST_OCTAVES) ns; bucket 1 + 16 * k + j holds
 * [2^(MIN_LOG2 + k) * (1 + j / 16), 2^(MIN_LOG2 + k) * (1 + (j + 1) / 16)) ns. */
#define NCCLTJ_HIST_SUB 16
#define NCCLTJ_HIST_MIN_LOG2 8
#define NCCLTJ_HIST_OCTAVES 24
#define NCCLTJ_HIST_BUCKETS (NCCLTJ_HIST_SUB * NCCLTJ_HIST_OCTAVES + 2)
/* Series one communicator keeps (further keys are counted in `unaggregated`). */
#define NCCLTJ_MAX_SERIES 64

/* One series: the collectives of one (collective, size bucket, arm, decided configuration,
 * executed configuration) on one communicator. Configurations are algorithm * NCCL_NUM_PROTOCOLS
 * + protocol (-1: none decided / NCCL's name not known); channels 0 = NCCL decides. */
typedef struct {
  int32_t collType;        /* ncclFunc_t */
  int32_t bucket;          /* size bucket of the decision's nBytes; -1 for UNJOINED */
  int32_t arm;             /* NCCLTJ_ARM_* */
  int32_t decided;         /* the policy's candidate (POLICY) or NCCL's pick (NCCL, NOT_OFFERED); -1 */
  int32_t decidedChannels; /* the candidate's channels (POLICY), else 0 */
  int32_t executed;        /* Coll event's algo/proto as a configuration; -1 if not recognised */
  int32_t nChannels;       /* Coll event's nChannels */
  int32_t kernelChannels;  /* most KernelCh events seen for one collective of the series */
  uint64_t count;          /* collectives */
  uint64_t timed;          /* of them with a device time */
  double sumUs;            /* device times, microseconds */
  double sumSqUs;          /* their squares, us^2 */
  double minUs;
  double maxUs;
  uint32_t hist[NCCLTJ_HIST_BUCKETS];
} nccltj_series_t;

/* What one communicator's profiler measured, handed over once at its finalize. */
typedef struct {
  uint64_t commId; /* NCCL's commHash; under tuner v3/v4 the joined tuner communicator's handle */
  int32_t rank;
  int32_t nRanks;
  int32_t nNodes;
  int32_t profilerVersion; /* 4..6 */
  int32_t nSeries;
  int32_t joined;            /* 1 when a tuner communicator was joined to this profiler context */
  uint64_t collectives;      /* Coll events */
  uint64_t unjoined;         /* of them with no decision found */
  uint64_t untimed;          /* of them whose channels gave no device time */
  uint64_t unaggregated;     /* of them whose series found no slot */
  uint64_t decisionsDropped; /* decisions the tuner made that no collective claimed */
  nccltj_series_t* series;
} nccltj_measured_t;

/* ---- return codes --------------------------------------------------------------------------
 * What the control upcall returns: NCCLTJ_CONTROL_OK, or for init NCCLTJ_CONTROL_FAILED where a
 * failure made the engine step aside (it logged the WARN), which the shim passes on to NCCL (as
 * ncclInternalError, the same value) only under NCCL_TUNER_JAVA_ON_ERROR=fail. */
#define NCCLTJ_CONTROL_OK 0
#define NCCLTJ_CONTROL_FAILED 3
/* What Bootstrap.start returns (the one JNI call, after which the bridge is filled in): started;
 * the shim's abiVersion is not the engine's (engineAbiVersion); another copy of the library (at
 * another path) already started the engine in this JVM, so this copy steps aside. */
#define NCCLTJ_START_OK 0
#define NCCLTJ_START_ABI_MISMATCH 1
#define NCCLTJ_START_ANOTHER_COPY 2

/* Upcalls into the Java engine. They never throw and return NCCLTJ_CONTROL_OK (0, ncclSuccess),
 * but for init's NCCLTJ_CONTROL_FAILED and getCollInfo's decision code. */

/* call is an nccltj_call_t's address. Returns NCCLTJ_CONTROL_* (above). */
typedef int (*nccltj_control_fn)(uintptr_t call);
/* One getCollInfo call, in the caller's memory (the shim's stack): NCCL's arguments. costTable is
 * the address of numAlgo*numProto floats, algorithm-major; nChannels the address of NCCL's int.
 * They travel as integers so that the Java side reads and writes them through one constant
 * segment, with no per-call segment objects (measured: 81 B allocated per call with pointer
 * parameters, 0 B with addresses). regBuff: 0 or 1 (v4+), NCCLTJ_REGBUFF_UNKNOWN (v3). */
typedef struct {
  int64_t handle;
  uint64_t nBytes;
  uintptr_t costTable;
  uintptr_t nChannels;
  int32_t collType;
  int32_t numPipeOps;
  int32_t numAlgo;
  int32_t numProto;
  int32_t regBuff;
  int32_t reserved;
} nccltj_get_t;

/* get is an nccltj_get_t's address. Returns the call's decision code (NCCLTJ_DECISION_*; never
 * negative). */
typedef int (*nccltj_get_coll_info_fn)(uintptr_t get);

/* Filled in by the shim (abiVersion, libraryPath) and then by Java's Bootstrap.start
 * (engineAbiVersion and the two upcall stubs), in one JNI call at first init. Bootstrap.start
 * returns NCCLTJ_START_* (above). linesQueued: set non-zero by the engine while it holds log
 * lines for the shim to take (NCCLTJ_CALL_TAKE_LINE), zero again once the last is taken; the
 * shim reads it after each upcall (one load on the per-call path). */
typedef struct {
  int32_t abiVersion;
  int32_t engineAbiVersion;
  const char* libraryPath;
  nccltj_get_coll_info_fn getCollInfo;
  nccltj_control_fn control;
  int32_t linesQueued;
  int32_t reserved;
} nccltj_bridge_t;

#endif /* NCCLTJ_BRIDGE_H_ */

/*
 * nccl_profiler_abi.h -- the NCCL profiler plugin ABI, versions 4 to 6, as nccl-tuner-java sees it:
 * NCCL facts only (no NCCL code copied).
 *
 * Written from NCCL's own headers, read at the tags of NVIDIA/nccl:
 *   - src/include/plugin/nccl_profiler.h (2.27.7 .. 2.30.7): the event type bits
 *     (ncclProfileGroup 1 << 0 .. ncclProfileCeBatch 1 << 14) and the event states
 *     (ncclProfilerKernelChStop = 22, ...).
 *   - src/include/plugin/profiler/profiler_v4.h (2.27.3+; unchanged to 2.30.7): the v4 descriptor
 *     (a uint8_t type), state args and ncclProfiler_v4_t (init takes commName before commHash).
 *   - profiler_v5.h (2.28.3+): a uint64_t type, the API events (GroupApi, CollApi, P2pApi,
 *     KernelLaunch), coll.parentGroup, init taking commId right after the context.
 *   - profiler_v6.h (2.29.2+; the same at 2.30.7): v5's members plus the copy-engine events.
 *   - src/plugin/profiler.cc: NCCL looks up "ncclProfiler_v6" (2.29+), "ncclProfiler_v5" (2.28+),
 *     "ncclProfiler_v4" (2.27+) first in the library NCCL_PROFILER_PLUGIN names; init receives the
 *     communicator's commHash (the value tuner v5's init receives as commId) and the address of
 *     NCCL's one process-wide activation mask.
 * Test hosts include this header alone (with nccl_tuner_abi.h for ncclResult_t and the logger).
 */
#ifndef NCCL_PROFILER_ABI_H_
#define NCCL_PROFILER_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nccl_tuner_abi.h"

/* Event types: bits of the activation mask and the descriptor's type (nccl_profiler.h). */
enum {
  ncclProfileGroup = (1 << 0),
  ncclProfileColl = (1 << 1),
  ncclProfileP2p = (1 << 2),
  ncclProfileProxyOp = (1 << 3),
  ncclProfileProxyStep = (1 << 4),
  ncclProfileProxyCtrl = (1 << 5),
  ncclProfileKernelCh = (1 << 6),
  ncclProfileNetPlugin = (1 << 7),
  ncclProfileGroupApi = (1 << 8),      /* v5+ */
  ncclProfileCollApi = (1 << 9),       /* v5+ */
  ncclProfileP2pApi = (1 << 10),       /* v5+ */
  ncclProfileKernelLaunch = (1 << 11), /* v5+ */
  ncclProfileCeColl = (1 << 12),       /* v6+ */
  ncclProfileCeSync = (1 << 13),       /* v6+ */
  ncclProfileCeBatch = (1 << 14),      /* v6+ */
};

/* Event states (the subset this project names; nccl_profiler.h has all of them). */
typedef enum {
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerKernelChStop = 22,
  ncclProfilerGroupStartApiStop = 23, /* v5+ */
  ncclProfilerGroupEndApiStart = 24,  /* v5+ */
} ncclProfilerEventState_t;

/* ---- v4 (NCCL 2.27.3) ------------------------------------------------------------------------ */

typedef struct {
  uint8_t type;
  void* parentObj; /* Coll: its Group; KernelCh: its Coll */
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer; /* GPU globaltimer at the channel's start, ns */
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v4_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer; /* GPU globaltimer at the channel's stop, ns */
  } kernelCh;
} ncclProfilerEventStateArgs_v4_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v4_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v4_t;

/* ---- v5 (NCCL 2.28.3) ------------------------------------------------------------------------ */

typedef struct {
  uint64_t type;
  void* parentObj; /* Coll: its CollApi (v5 adds coll.parentGroup); KernelCh: its Coll */
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v5_t;

typedef ncclProfilerEventStateArgs_v4_t ncclProfilerEventStateArgs_v5_t; /* same union in v5 */

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

/* ---- v6 (NCCL 2.29.2): v5's members, then the copy-engine events ----------------------------- */

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
  };
} ncclProfilerEventDescr_v6_t;

typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v6_t; /* profiler_v6.h */

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v6_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v6_t;

#define NCCL_PROFILER_PLUGIN_SYMBOL_V4 "ncclProfiler_v4"
#define NCCL_PROFILER_PLUGIN_SYMBOL_V5 "ncclProfiler_v5"
#define NCCL_PROFILER_PLUGIN_SYMBOL_V6 "ncclProfiler_v6"

#endif /* NCCL_PROFILER_ABI_H_ */

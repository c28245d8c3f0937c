/*
 * nccl_names.h -- NCCL's spellings of its collectives, algorithms and protocols, indexed by
 * ncclFunc_t, NCCL_ALGO_* and NCCL_PROTO_* (nccl_tuner_abi.h): src/collectives.cc
 * ncclFuncToString, ncclAlgoToString and ncclProtoToString (2.22 .. 2.30.7). NCCL's profiler
 * descriptors carry them (src/plugin/profiler.cc: coll.func, coll.algo, coll.proto, 2.27+) and
 * its tuning log prints them ("AllReduce: 1048576 Bytes -> Algo RING proto LL128 ...", 2.24+).
 * (NCCL's tuning tables print other spellings, src/init.cc ncclAlgoStr: "Tree", "Simple".)
 *
 * The one C home of these names: the shim's profiler (profiler.c) and the C test hosts include
 * it. Header-only; each table is static, so every includer has its own copy of the pointers.
 */
#ifndef NCCL_NAMES_H_
#define NCCL_NAMES_H_

#include "nccl_tuner_abi.h"

static const char* const ncclFuncNames[ncclNumFuncs] __attribute__((unused)) = {
  "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv", "Send", "Recv"};
static const char* const ncclAlgoNames[NCCL_NUM_ALGORITHMS]
  __attribute__((unused)) = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char* const ncclProtoNames[NCCL_NUM_PROTOCOLS] __attribute__((unused)) = {"LL", "LL128", "SIMPLE"};

#endif /* NCCL_NAMES_H_ */

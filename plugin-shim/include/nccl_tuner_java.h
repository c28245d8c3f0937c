/*
 * nccl_tuner_java.h -- jextract's input (make/bindings.mk): NCCL's tuner v3 ABI
 * (nccl_tuner_abi.h) and the private shim <-> Java bridge (nccltj_bridge.h) in one header.
 */
#ifndef NCCL_TUNER_JAVA_H_
#define NCCL_TUNER_JAVA_H_

#include "nccl_tuner_abi.h"
#include "nccltj_bridge.h"

#endif /* NCCL_TUNER_JAVA_H_ */

# make/bindings.mk -- regenerate the jextract (FFM) bindings of the shim <-> Java ABI header.
#
# Included by the top-level Makefile, which defines REPO (the repository root, absolute).
#
#   make bindings JEXTRACT=/path/to/jextract
#
# JEXTRACT is a jextract for JDK 25 (built from github:openjdk/jextract; it is not part of
# this repository). Built without Gradle (2026-12-03): apt-get install libclang-19-dev; git archive
# openjdk/jextract f9866df3 into SRC; javac --release 23 -d CLASSES $(find SRC/src/main/java -name
# '*.java'); copy SRC/src/main/resources into CLASSES; jar --create --file JAR --module-version 23
# --main-class org.openjdk.jextract.JextractTool -C CLASSES .; and a launcher running
# java --enable-native-access=org.openjdk.jextract -Djava.library.path=/usr/lib/llvm-19/lib
# -Djextract.header.path=/usr/lib/llvm-19/lib/clang/19/include --module-path JAR
# -m org.openjdk.jextract/org.openjdk.jextract.JextractTool "$@" (Temurin 25). The target deletes every generated file in $(BINDINGS_DIR) and writes the
# new ones; package-info.java (hand-written: it records the jextract revision and this command)
# is left as it is. The output is deterministic: after a regeneration with the same jextract
# and an unchanged header, `git diff` is empty. Keep the command in package-info.java in sync
# with BINDINGS_JEXTRACT_ARGS below.

REPO ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)

BINDINGS_HEADER   := plugin-shim/include/nccl_tuner_java.h
BINDINGS_SRC_ROOT := java-policy/src/main/java
BINDINGS_PACKAGE  := io.nccltuner.bindings
BINDINGS_DIR      := $(BINDINGS_SRC_ROOT)/io/nccltuner/bindings

# Everything jextract emits is named here, so the output stays small and does not depend on
# what the system headers (stddef.h, stdint.h) happen to declare. ncclDebugLogger_t is
# variadic and jextract cannot bind it; it is deliberately left out (the shim calls it).
BINDINGS_CONSTANTS := \
  ncclSuccess ncclUnhandledCudaError ncclSystemError ncclInternalError ncclInvalidArgument \
  ncclInvalidUsage ncclRemoteError ncclInProgress ncclNumResults \
  ncclFuncBroadcast ncclFuncReduce ncclFuncAllGather ncclFuncReduceScatter ncclFuncAllReduce \
  ncclFuncSendRecv ncclFuncSend ncclFuncRecv ncclNumFuncs \
  NCCL_LOG_NONE NCCL_LOG_VERSION NCCL_LOG_WARN NCCL_LOG_INFO NCCL_LOG_ABORT NCCL_LOG_TRACE \
  NCCL_INIT NCCL_COLL NCCL_P2P NCCL_SHM NCCL_NET NCCL_GRAPH NCCL_TUNING NCCL_ENV NCCL_ALLOC \
  NCCL_CALL NCCL_PROXY NCCL_NVLS NCCL_BOOTSTRAP NCCL_REG NCCL_PROFILE NCCL_RAS NCCL_ALL \
  NCCL_ALGO_UNDEF NCCL_ALGO_TREE NCCL_ALGO_RING NCCL_ALGO_COLLNET_DIRECT NCCL_ALGO_COLLNET_CHAIN \
  NCCL_ALGO_NVLS NCCL_ALGO_NVLS_TREE NCCL_ALGO_PAT NCCL_NUM_ALGORITHMS \
  NCCL_PROTO_UNDEF NCCL_PROTO_LL NCCL_PROTO_LL128 NCCL_PROTO_SIMPLE NCCL_NUM_PROTOCOLS \
  NCCL_ALGO_PROTO_IGNORE NCCL_TUNER_JAVA_MAX_CHANNELS NCCL_TUNER_PLUGIN_SYMBOL \
  NCCL_TUNER_JAVA_ABI_VERSION NCCLTJ_REGBUFF_UNKNOWN \
  NCCLTJ_CALL_INIT NCCLTJ_CALL_DESTROY NCCLTJ_CALL_FLUSH NCCLTJ_CALL_GET_CHUNK_SIZE \
  NCCLTJ_HANDLE_CHUNK_SIZES NCCLTJ_CALL_MEASURED NCCLTJ_CALL_SKIPPED NCCLTJ_CALL_TAKE_LINE \
  NCCLTJ_CONTROL_OK NCCLTJ_CONTROL_FAILED NCCLTJ_START_OK NCCLTJ_START_ABI_MISMATCH NCCLTJ_START_ANOTHER_COPY \
  NCCLTJ_DECISION_SEEN NCCLTJ_DECISION_RULE NCCLTJ_DECISION_BUCKET_MASK NCCLTJ_DECISION_NCCL_SHIFT \
  NCCLTJ_DECISION_CAND_SHIFT NCCLTJ_DECISION_CHANNELS_SHIFT NCCLTJ_DECISION_ARM_SHIFT \
  NCCLTJ_DECISION_ENTRY_MASK NCCLTJ_DECISION_CHANNELS_MASK NCCLTJ_DECISION_NONE \
  NCCLTJ_ARM_NCCL NCCLTJ_ARM_POLICY NCCLTJ_ARM_NOT_OFFERED NCCLTJ_ARM_UNRULED NCCLTJ_ARM_UNJOINED \
  NCCLTJ_HIST_SUB NCCLTJ_HIST_MIN_LOG2 NCCLTJ_HIST_OCTAVES NCCLTJ_HIST_BUCKETS NCCLTJ_MAX_SERIES \
  NCCL_TUNER_PLUGIN_SYMBOL_V4 NCCL_TUNER_PLUGIN_SYMBOL_V5 NCCL_TUNER_PLUGIN_SYMBOL_V6 \
  NCCL_TUNER_PLUGIN_SYMBOL_V7 \
  NCCL_NUM_ALGORITHMS_V5 NCCL_NUM_PROTOCOLS_V5 NCCL_NUM_HW_LINKS_V5 NCCL_NUM_COMPCAPS_V5 \
  NCCL_NUM_TUNING_SCALES_V5 NCCL_NUM_COMPCAPS_V7 NCCL_HW_NVLINK NCCL_HW_PCI NCCL_HW_NET \
  NCCL_VOLTA_COMPCAP_IDX NCCL_AMPERE_COMPCAP_IDX NCCL_HOPPER_COMPCAP_IDX NCCL_BLACKWELL_COMPCAP_IDX \
  NCCL_RUBIN_COMPCAP_IDX NCCL_TUNING_SCALE_1NODE NCCL_TUNING_SCALE_2NODES NCCL_TUNING_SCALE_4NODES
BINDINGS_STRUCTS  := ncclTuner_v3_t ncclTuner_v4_t ncclTuner_v5_t ncclTuner_v6_t ncclTuner_v7_t \
  ncclNvlDomainInfo_v5_t ncclTunerConstants_v5_t ncclTunerConstants_v7_t nccltj_bridge_t \
  nccltj_hw_t nccltj_call_t nccltj_get_t nccltj_series_t nccltj_measured_t
BINDINGS_TYPEDEFS := nccltj_control_fn nccltj_get_coll_info_fn \
  ncclTunerConstants_v6_t ncclNvlDomainInfo_v6_t ncclNvlDomainInfo_v7_t

BINDINGS_JEXTRACT_ARGS := \
  --target-package $(BINDINGS_PACKAGE) --header-class-name NcclTunerAbi \
  $(addprefix --include-struct ,$(BINDINGS_STRUCTS)) \
  $(addprefix --include-typedef ,$(BINDINGS_TYPEDEFS)) \
  $(addprefix --include-constant ,$(BINDINGS_CONSTANTS))

# jextract 25 with Debian's libclang 19 does not reach glibc's <stdint.h> through its own
# resource-dir stdint.h (int64_t stays undeclared), so jextract reads a wrapper that includes the
# C library's stdint.h by path first, then the header. Override for another C library's layout.
BINDINGS_STDINT ?= /usr/include/stdint.h

# A relative JEXTRACT path is taken relative to where make was started (the recipe cds to REPO).
BINDINGS_JEXTRACT_CMD = $(if $(findstring /,$(JEXTRACT)),$(abspath $(JEXTRACT)),$(JEXTRACT))

.PHONY: bindings
bindings:
	@if [ -z "$(strip $(JEXTRACT))" ]; then \
	  echo "make bindings: JEXTRACT is not set. Run: make bindings JEXTRACT=/path/to/jextract" >&2; \
	  echo "  (a jextract for JDK 25, built from github:openjdk/jextract; see $(BINDINGS_DIR)/package-info.java)" >&2; \
	  exit 1; \
	fi
	@if ! command -v "$(BINDINGS_JEXTRACT_CMD)" >/dev/null 2>&1; then \
	  echo "make bindings: JEXTRACT=$(JEXTRACT) is not an executable jextract" >&2; exit 1; \
	fi
	@if [ ! -f "$(REPO)/$(BINDINGS_DIR)/package-info.java" ]; then \
	  echo "make bindings: $(BINDINGS_DIR)/package-info.java is missing (git checkout it first)" >&2; exit 1; \
	fi
	@set -e; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cd "$(REPO)"; \
	printf '#include "%s"\n#include "%s"\n' "$(BINDINGS_STDINT)" "$(REPO)/$(BINDINGS_HEADER)" > "$$tmp/nccl_tuner_java.h"; \
	echo "$(JEXTRACT) --output $(BINDINGS_SRC_ROOT) $(BINDINGS_JEXTRACT_ARGS) $(BINDINGS_HEADER)  (through a wrapper including $(BINDINGS_STDINT) first)"; \
	"$(BINDINGS_JEXTRACT_CMD)" --output "$$tmp/out" $(BINDINGS_JEXTRACT_ARGS) "$$tmp/nccl_tuner_java.h"; \
	gen="$$tmp/out/io/nccltuner/bindings"; \
	if [ ! -f "$$gen/NcclTunerAbi.java" ] || [ -e "$$gen/package-info.java" ]; then \
	  echo "make bindings: unexpected jextract output in $$gen" >&2; exit 1; \
	fi; \
	find "$(BINDINGS_DIR)" -maxdepth 1 -type f ! -name package-info.java -delete; \
	cp "$$gen"/*.java "$(BINDINGS_DIR)/"; \
	echo "make bindings: wrote $$(ls "$$gen" | wc -l) files to $(BINDINGS_DIR) (package-info.java kept)"

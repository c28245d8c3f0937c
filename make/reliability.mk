# make/reliability.mk -- what the reliability tests (docs/dev/reliability.md) need built.
#
# Included by the top-level Makefile (REPO, BUILD, CC, CFLAGS, SHIM_CFLAGS, SHIM_LDFLAGS defined there);
# `make build` builds it:
#   $(RELIABILITY_HOST)    build/tests/reliability/hostile_host: a host that calls a v3 tuner in ways NCCL
#                          does not (NULL context, after destroy, 8x4 tables, 16 threads sharing
#                          64 communicators, fork, small stacks, its own SIGSEGV handler)
#   $(RELIABILITY_GUEST)   build/tests/reliability/guest-host: hosts that reload the plugin, fork
#                          during init, limit it, own signals, locale and output (issue 10)
#   $(RELIABILITY_ABI_SO)  build/tests/reliability/abi-other/libnccl-tuner-java.so: the shim built
#                          with bridge ABI $(RELIABILITY_OTHER_ABI), to pair with this release's jar

RELIABILITY_DIR       := $(BUILD)/tests/reliability
RELIABILITY_HOST      := $(RELIABILITY_DIR)/hostile_host
RELIABILITY_GUEST     := $(RELIABILITY_DIR)/guest-host
RELIABILITY_ABI_SO    := $(RELIABILITY_DIR)/abi-other/libnccl-tuner-java.so
RELIABILITY_PROFILER  := $(RELIABILITY_DIR)/profiler_hostile
RELIABILITY_OTHER_ABI := 9999

.PHONY: reliability-hosts
reliability-hosts: $(RELIABILITY_HOST) $(RELIABILITY_GUEST) $(RELIABILITY_ABI_SO) $(RELIABILITY_PROFILER)

build: reliability-hosts

RELIABILITY_CFLAGS    := $(CFLAGS) -I$(REPO)/plugin-shim/include -I$(REPO)/tests/include
RELIABILITY_HEADERS   := $(REPO)/plugin-shim/include/nccl_tuner_abi.h $(REPO)/tests/include/test_host.h \
                         $(REPO)/plugin-shim/include/nccl_profiler_abi.h

$(RELIABILITY_HOST): $(REPO)/tests/reliability/hostile_host.c $(RELIABILITY_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(RELIABILITY_CFLAGS) -o $@ $< -ldl

# A hostile host for the profiler half (ncclProfiler_v4..v6 beside the tuner), ProfilerHostileIT.
$(RELIABILITY_PROFILER): $(REPO)/tests/reliability/profiler_hostile.c $(RELIABILITY_HEADERS) $(REPO)/plugin-shim/include/nccl_profiler_abi.h
	@mkdir -p $(@D)
	$(CC) $(RELIABILITY_CFLAGS) -o $@ $< -ldl

# The hostile hosts of "A perfect guest" (docs/dev/reliability.md cases 1-11).
$(RELIABILITY_GUEST): $(REPO)/tests/reliability/guest_host.c $(RELIABILITY_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(RELIABILITY_CFLAGS) -o $@ $< -ldl -lm

# The same sources against a copy of the bridge header whose NCCL_TUNER_JAVA_ABI_VERSION differs
# (shim_internal.h includes "nccltj_bridge.h", found in the first -I directory).
$(RELIABILITY_ABI_SO): $(SHIM_SRCS) $(SHIM_HEADERS)
	@mkdir -p $(@D)/include
	sed 's/^#define NCCL_TUNER_JAVA_ABI_VERSION .*/#define NCCL_TUNER_JAVA_ABI_VERSION $(RELIABILITY_OTHER_ABI)/' \
	  $(REPO)/plugin-shim/include/nccltj_bridge.h > $(@D)/include/nccltj_bridge.h
	grep -q '^#define NCCL_TUNER_JAVA_ABI_VERSION $(RELIABILITY_OTHER_ABI)$$' $(@D)/include/nccltj_bridge.h
	$(CC) -I$(@D)/include $(SHIM_CFLAGS) $(SHIM_LDFLAGS) -o $@ $(SHIM_SRCS) -ldl -lpthread

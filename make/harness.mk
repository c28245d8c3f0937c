# make/harness.mk -- the host harness (tests/harness/harness.c) and its two test plugins.
#
# Included by a Makefile that defines REPO (repository root), BUILD (absolute build dir) and
# CFLAGS (make/cflags.mk); tests/harness/Makefile is such a Makefile for standalone use.
#
# Targets:
#   harness         $(HARNESS_BIN), the plugins $(HARNESS_NOOP), $(HARNESS_EVIL) and the fake
#                   CUDA driver $(HARNESS_CUDA), and the oracle test's host $(ORACLE_HOST)
#   harness-replay  replays each of $(HARNESS_TRACES) through the noop plugin (--quiet)
#   harness-test    runs tests/harness/test_harness.sh (it builds its own copy in a temp dir)
# Variables you may override: HARNESS_CC, HARNESS_CFLAGS, HARNESS_LDLIBS.
# Variables you may read: HARNESS_BIN, HARNESS_NOOP, HARNESS_EVIL, HARNESS_TRACES.

$(if $(REPO),,$(error make/harness.mk: the including Makefile must define REPO (the repository root)))
$(if $(BUILD),,$(error make/harness.mk: the including Makefile must define BUILD (an absolute build directory)))

HARNESS_CC      ?= $(CC)
HARNESS_CFLAGS  ?= $(CFLAGS)
HARNESS_LDLIBS  ?= -ldl
HARNESS_INCLUDE := -I$(REPO)/plugin-shim/include -I$(REPO)/tests/include
HARNESS_HEADER  := $(REPO)/plugin-shim/include/nccl_tuner_abi.h $(REPO)/plugin-shim/include/nccl_names.h \
                   $(REPO)/tests/include/test_host.h $(REPO)/tests/include/nccl_select.h \
                   $(REPO)/tests/include/profiler_events.h

HARNESS_BIN     := $(BUILD)/tests/harness
HARNESS_NOOP    := $(BUILD)/tests/libnccl-tuner-noop.so
HARNESS_EVIL    := $(BUILD)/tests/libnccl-tuner-evil.so
HARNESS_CUDA    := $(BUILD)/tests/fake-cuda/libcuda.so.1
ORACLE_HOST     := $(BUILD)/tests/oracle-host
# The canary oracle's host (tests/oracle/canary_host.c, driven by tests/oracle/canary_oracle.py).
CANARY_HOST     := $(BUILD)/tests/canary_host
HARNESS_TRACES  := $(sort $(wildcard $(REPO)/tests/traces/trace_*.csv))
# The profiler's host (NCCL 2.28/2.29's event sequence, tests/hosts/profiler_host.c), the test
# profilers it chains (tests/plugins/chain_profiler.c as v5 and as v4) and the bench's floor.
PROFILER_HOST   := $(BUILD)/tests/profiler_host
CHAIN_PROFILER  := $(BUILD)/tests/libchain-profiler.so
CHAIN_PROFILER4 := $(BUILD)/tests/libchain-profiler-v4.so
NOOP_PROFILER   := $(BUILD)/tests/libnoop-profiler.so
PROFILER_HEADER := $(REPO)/plugin-shim/include/nccl_profiler_abi.h $(HARNESS_HEADER)

.PHONY: harness harness-replay harness-test

harness: $(HARNESS_BIN) $(HARNESS_NOOP) $(HARNESS_EVIL) $(HARNESS_CUDA) $(PROFILER_HOST) $(CHAIN_PROFILER) \
         $(CHAIN_PROFILER4) $(NOOP_PROFILER) $(ORACLE_HOST) $(CANARY_HOST)

$(CANARY_HOST): $(REPO)/tests/oracle/canary_host.c $(PROFILER_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) $(HARNESS_INCLUDE) -o $@ $< $(HARNESS_LDLIBS)

$(PROFILER_HOST): $(REPO)/tests/hosts/profiler_host.c $(PROFILER_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) $(HARNESS_INCLUDE) -o $@ $< $(HARNESS_LDLIBS)

$(CHAIN_PROFILER): $(REPO)/tests/plugins/chain_profiler.c $(PROFILER_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) -fPIC -fvisibility=hidden -shared $(HARNESS_INCLUDE) -o $@ $<

$(CHAIN_PROFILER4): $(REPO)/tests/plugins/chain_profiler.c $(PROFILER_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) -DCHAIN_V4 -fPIC -fvisibility=hidden -shared $(HARNESS_INCLUDE) -o $@ $<

$(NOOP_PROFILER): $(REPO)/bench/noop_profiler.c $(PROFILER_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) -fPIC -fvisibility=hidden -shared $(HARNESS_INCLUDE) -o $@ $<

# The randomized oracle test's host (tests/oracle/oracle_host.c, driven by OracleIT): a script of
# init/getCollInfo/getChunkSize calls in, the plugin's tables, channels and chunk sizes out.
$(ORACLE_HOST): $(REPO)/tests/oracle/oracle_host.c $(HARNESS_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) $(HARNESS_INCLUDE) -Wl,--export-dynamic-symbol=ncclGetVersion -o $@ $< $(HARNESS_LDLIBS)

# A fake CUDA driver (soname libcuda.so.1) for the hardware-signature tests (tests/plugins/fake_cuda.c).
$(HARNESS_CUDA): $(REPO)/tests/plugins/fake_cuda.c
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libcuda.so.1 -o $@ $<

$(HARNESS_BIN): $(REPO)/tests/harness/harness.c $(HARNESS_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) $(HARNESS_INCLUDE) -Wl,--export-dynamic-symbol=ncclGetVersion -o $@ $< $(HARNESS_LDLIBS)

# Plugins: everything hidden except the exported ncclTunerPlugin_v3 struct.
$(HARNESS_NOOP): $(REPO)/tests/plugins/noop_plugin.c $(HARNESS_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) -fPIC -fvisibility=hidden -shared $(HARNESS_INCLUDE) -o $@ $<

$(HARNESS_EVIL): $(REPO)/tests/plugins/evil_plugin.c $(HARNESS_HEADER)
	@mkdir -p $(@D)
	$(HARNESS_CC) $(HARNESS_CFLAGS) -fPIC -fvisibility=hidden -shared $(HARNESS_INCLUDE) -o $@ $<

harness-replay: harness
	@set -e; for t in $(HARNESS_TRACES); do \
	  printf '%s: ' "$${t##*/}"; $(HARNESS_BIN) --quiet --plugin $(HARNESS_NOOP) --trace $$t; done

harness-test:
	bash $(REPO)/tests/harness/test_harness.sh

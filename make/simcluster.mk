# make/simcluster.mk -- the simulated cluster (tests/simcluster/simcluster.c), a test double of
# a GPU cluster that behaves like an nccl-tests binary (docs/measure.md).
#
# Included by the top-level Makefile (defines REPO, BUILD, CC, CFLAGS).
#   simcluster        $(SIMCLUSTER_BIN)
#   simcluster-loop   sweep it, compile, enforce: the before/after check (tests/simcluster/loop.py),
#                     outputs in $(BUILD)/simcluster-loop; part of `make test`
#   simcluster-canary the canary on two simulated ranks, with the plugin as tuner and profiler in
#                     NCCL 2.27, 2.28 and 2.30's ABIs: measured gain against the model's truth
#                     (tests/simcluster/canary.py), outputs in $(BUILD)/simcluster-canary; part of
#                     `make test`
#   simcluster-calibrate  calibrate NCCL's model constants on sweeps at 2 and 4 nodes of the tune model
#                     (SIMCLUSTER_MODEL=tune) and score held-out regret at 8 and 16 nodes beside NCCL's
#                     default and the measured-rules policy (tests/simcluster/calibrate_heldout.py),
#                     outputs in $(BUILD)/simcluster-calibrate; part of `make test`

SIMCLUSTER_BIN := $(BUILD)/tests/simcluster
# A checking profiler plugin for the simulated cluster's own tests (tests/simcluster/profcheck.c):
# it checks that the host calls a profiler the way NCCL does.
PROFCHECK_SO   := $(BUILD)/tests/libsim-profcheck.so

.PHONY: simcluster simcluster-loop simcluster-canary simcluster-calibrate

simcluster: $(SIMCLUSTER_BIN) $(PROFCHECK_SO)

# NCCL's names, its selection and its profiler's activation rule, and the logger line's formatting
# (test_host.h), shared with the other C hosts.
SIMCLUSTER_HEADERS := $(REPO)/plugin-shim/include/nccl_tuner_java.h $(REPO)/plugin-shim/include/nccl_profiler_abi.h \
                      $(REPO)/plugin-shim/include/nccl_names.h $(REPO)/tests/include/nccl_select.h \
                      $(REPO)/tests/include/profiler_events.h $(REPO)/tests/include/test_host.h

$(SIMCLUSTER_BIN): $(REPO)/tests/simcluster/simcluster.c $(REPO)/tests/simcluster/tunemodel.h $(SIMCLUSTER_HEADERS) $(PROFCHECK_SO)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(REPO)/plugin-shim/include -I$(REPO)/tests/include -o $@ $< -ldl -lm -lpthread

$(PROFCHECK_SO): $(REPO)/tests/simcluster/profcheck.c $(SIMCLUSTER_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden -I$(REPO)/plugin-shim/include -I$(REPO)/tests/include \
	  -o $@ $< -lpthread

simcluster-loop: build
	python3 $(REPO)/tests/simcluster/loop.py --keep $(BUILD)/simcluster-loop

simcluster-canary: build
	python3 $(REPO)/tests/simcluster/canary.py --keep $(BUILD)/simcluster-canary

simcluster-calibrate: build
	python3 $(REPO)/tests/simcluster/calibrate_heldout.py --keep $(BUILD)/simcluster-calibrate

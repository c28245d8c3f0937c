# make/simcluster.mk -- the simulated cluster (tests/simcluster/simcluster.c), a test double of
# a GPU cluster that behaves like an nccl-tests binary (docs/measure.md).
#
# Included by the top-level Makefile (defines REPO, BUILD, CC).
#   simcluster        $(SIMCLUSTER_BIN)
#   simcluster-loop   sweep it, compile, enforce: the before/after check (tests/simcluster/loop.py),
#                     outputs in $(BUILD)/simcluster-loop; part of `make test`

SIMCLUSTER_BIN := $(BUILD)/tests/simcluster

.PHONY: simcluster simcluster-loop

simcluster: $(SIMCLUSTER_BIN)

$(SIMCLUSTER_BIN): $(REPO)/tests/simcluster/simcluster.c $(REPO)/plugin-shim/include/nccl_tuner_java.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -I$(REPO)/plugin-shim/include -o $@ $< -ldl -lm

simcluster-loop: build
	python3 $(REPO)/tests/simcluster/loop.py --keep $(BUILD)/simcluster-loop

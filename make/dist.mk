# make/dist.mk -- `make dist`: a relocatable tarball with its own Java runtime.
#
# Included by the top-level Makefile (REPO, BUILD, JAVA_HOME, SHIM_SO, ENGINE_JAR defined there).
# Produces dist/$(DIST_NAME)/ and dist/$(DIST_NAME).tar.gz:
#   lib/libnccl-tuner-java.so, lib/nccl-tuner-java.jar (what the plugin loads),
#   lib/nccl-tuner-tools.jar (the command line; its manifest names the runtime jar), runtime/ (jlink image of java.base,
#   stripped), bin/nccl-tuner (the command line on the bundled runtime), bin/nccl-tuner-aot
#   (make/nccl-tuner-aot.sh: makes lib/nccl-tuner-java.aot, the JDK 25 AOT cache, on the target; it
#   fails with a message when lib/ is not writable), libexec/nccl-tuner-harness (the host harness,
#   tests/harness/harness.c: `bin/nccl-tuner try` replays traces through lib/'s plugin with it, no
#   GPU needed; libexec/fake-cuda/libcuda.so.1, tests/plugins/fake_cuda.c, is the CUDA driver it
#   LD_PRELOADs there for `try --gpu`: never on a job's library path), policies/, README.md, docs/ (the user docs) and docs/dev/ (the developer docs, which
#   describe the source tree), examples/ (what the README's and docs' examples name, listed in
#   make/examples-README.md, shipped as examples/README.md; examples/simcluster/ the simulated
#   cluster's sources, for the GPU-less sweep of docs/measure.md). tests/docs/check_docs.py (make docs-check)
#   checks the docs' links and examples in this tree and in the repository.
# The AOT cache (16 MiB, 4 MiB gzipped) is not in the tarball: with it the archive is 27 MiB, over
# the 25 MiB budget. `bin/nccl-tuner-aot` builds it in a few seconds after unpacking (57 MiB in
# all, under the 60 MiB budget); the shim uses it when it is there. `make dist` also builds it in
# the unpacked tree under dist/.
# The shim finds runtime/ beside lib/ (../runtime) and the jar and AOT cache beside itself, so
# NCCL_TUNER_PLUGIN=<dir>/lib/libnccl-tuner-java.so works with no JDK and no JAVA_HOME.

VERSION    := $(shell sed -n 's:.*<version>\(.*\)</version>.*:\1:p' $(REPO)/pom.xml | head -1)
DIST_NAME  := nccl-tuner-java-$(VERSION)-linux-x86_64
DIST_ROOT  := $(REPO)/dist
DIST_DIR   := $(DIST_ROOT)/$(DIST_NAME)
DIST_TGZ   := $(DIST_ROOT)/$(DIST_NAME).tar.gz
# The engine needs java.base only (Jackson's and picocli's java.desktop/java.sql uses are optional).
DIST_MODULES := java.base
# Same options as the shim passes (plugin-shim/src/jvm_options.c), so the cache applies.
# -XX:-AOTRecordTraining: the shim runs with -XX:-AOTReplayTraining, so the cache holds no
# training data (method profiles) that would not be used.
DIST_AOT_OPTS := -Xrs -XX:+UseSerialGC -Xms8m -Xmx64m -XX:NewSize=1m -XX:-UsePerfData \
  -XX:+DisableAttachMechanism --finalization=disabled -XX:-TieredCompilation -XX:CompileThresholdScaling=10 \
  -XX:+UnlockDiagnosticVMOptions -XX:-AOTReplayTraining -XX:-AOTRecordTraining \
  --enable-native-access=ALL-UNNAMED

.PHONY: dist dist-message
dist: $(DIST_TGZ)

# The docs' examples' inputs (make/examples-README.md says what each is): the captured traces and NCCL
# logs, the measured H200 sweep, two plain nccl-tests outputs and two with NCCL's INFO lines, and an
# NCCL example-tuner CSV (shipped as examples/configs/nccl_tuner.conf, the name NCCL's example reads).
DIST_FIXTURES := $(REPO)/java-tools/src/test/resources/compile
DIST_NCCL_TESTS := $(addprefix $(DIST_FIXTURES)/,plain-all_reduce_auto.txt plain-all_reduce_ring_ll.txt \
                   gh200-8ranks-2hosts_all_reduce.txt h100-8ranks-1host_all_reduce.txt)
DIST_EXAMPLES := $(wildcard $(REPO)/tests/traces/trace_*.csv $(REPO)/tests/traces/nccl_*.rank0.log) \
                 $(DIST_FIXTURES)/h200-2rank-sweep_allreduce.rep1.csv \
                 $(DIST_NCCL_TESTS) $(DIST_FIXTURES)/nvidia-boundaries.conf $(REPO)/make/examples-README.md \
                 $(REPO)/make/examples-traces-README.md
# examples/simcluster/: the simulated cluster (tests/simcluster/simcluster.c, the single source, copied
# here) and the headers it includes, flat, so that `gcc -O2 -o simcluster examples/simcluster/simcluster.c
# -ldl -lm -lpthread` builds it from the unpacked tree (docs/measure.md, "Try the sweep without a GPU").
DIST_SIMCLUSTER := $(REPO)/tests/simcluster/simcluster.c $(REPO)/tests/simcluster/tunemodel.h \
                   $(addprefix $(REPO)/plugin-shim/include/,nccl_tuner_java.h nccl_tuner_abi.h nccltj_bridge.h \
                   nccl_profiler_abi.h nccl_names.h) \
                   $(addprefix $(REPO)/tests/include/,nccl_select.h profiler_events.h test_host.h)
DIST_EXAMPLES += $(DIST_SIMCLUSTER)
# The tarball ships the docs, so an edited doc makes a new one.
DIST_DOCS := $(REPO)/README.md $(wildcard $(REPO)/docs/*.md $(REPO)/docs/dev/*.md)

$(DIST_TGZ): $(SHIM_SO) $(ENGINE_JAR) $(TOOLS_JAR) $(HARNESS_BIN) $(HARNESS_CUDA) $(wildcard $(REPO)/policies/*.yaml) $(DIST_EXAMPLES) $(DIST_DOCS) $(REPO)/make/dist.mk $(REPO)/make/nccl-tuner-aot.sh
	rm -rf $(DIST_DIR) $(DIST_TGZ)
	mkdir -p $(DIST_DIR)/lib $(DIST_DIR)/bin $(DIST_DIR)/policies
	cp $(SHIM_SO) $(ENGINE_JAR) $(TOOLS_JAR) $(DIST_DIR)/lib/
	mkdir -p $(DIST_DIR)/libexec && cp $(HARNESS_BIN) $(DIST_DIR)/libexec/nccl-tuner-harness && strip $(DIST_DIR)/libexec/nccl-tuner-harness
	mkdir -p $(DIST_DIR)/libexec/fake-cuda && cp $(HARNESS_CUDA) $(DIST_DIR)/libexec/fake-cuda/
	$(JAVA_HOME)/bin/jlink --add-modules $(DIST_MODULES) --strip-debug --no-header-files \
	  --no-man-pages --compress zip-9 --output $(DIST_DIR)/runtime
	strip --strip-unneeded $(DIST_DIR)/runtime/lib/server/libjvm.so $(DIST_DIR)/runtime/lib/*.so
	cp $(REPO)/policies/*.yaml $(DIST_DIR)/policies/
	mkdir -p $(DIST_DIR)/docs/dev && cp $(REPO)/README.md $(DIST_DIR)/ && cp $(REPO)/docs/*.md $(DIST_DIR)/docs/ && \
	  cp $(REPO)/docs/dev/*.md $(DIST_DIR)/docs/dev/
	# what the README's and docs' examples name (make/examples-README.md)
	mkdir -p $(DIST_DIR)/examples/traces $(DIST_DIR)/examples/measurements $(DIST_DIR)/examples/nccl-tests \
	  $(DIST_DIR)/examples/configs
	cp $(REPO)/make/examples-README.md $(DIST_DIR)/examples/README.md
	cp $(REPO)/tests/traces/trace_*.csv $(REPO)/tests/traces/nccl_*.rank0.log $(DIST_DIR)/examples/traces/
	cp $(REPO)/make/examples-traces-README.md $(DIST_DIR)/examples/traces/README.md
	cp $(DIST_FIXTURES)/h200-2rank-sweep_allreduce.rep1.csv $(DIST_DIR)/examples/measurements/
	cp $(DIST_NCCL_TESTS) $(DIST_DIR)/examples/nccl-tests/
	cp $(DIST_FIXTURES)/nvidia-boundaries.conf $(DIST_DIR)/examples/configs/nccl_tuner.conf
	mkdir -p $(DIST_DIR)/examples/simcluster && cp $(DIST_SIMCLUSTER) $(DIST_DIR)/examples/simcluster/
	printf '%s\n' '#!/bin/sh' \
	  '# nccl-tuner: the offline command line, on the runtime bundled in this tree.' \
	  'here=$$(cd "$$(dirname "$$0")/.." && pwd)' \
	  '# The heap is capped (NCCL_TUNER_CLI_HEAP, default 2g): an input too large for it ends with one line' \
	  '# "nccl-tuner: out of memory: ..." and exit 1, not by taking all the memory of the node (docs/compile.md).' \
	  'exec "$$here/runtime/bin/java" -Xmx$${NCCL_TUNER_CLI_HEAP:-2g} -Xshare:auto -XX:+UseSerialGC -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED -jar "$$here/lib/nccl-tuner-tools.jar" "$$@"' \
	  > $(DIST_DIR)/bin/nccl-tuner
	chmod +x $(DIST_DIR)/bin/nccl-tuner
	sed 's|@AOT_OPTS@|$(DIST_AOT_OPTS)|' $(REPO)/make/nccl-tuner-aot.sh > $(DIST_DIR)/bin/nccl-tuner-aot
	chmod +x $(DIST_DIR)/bin/nccl-tuner-aot
	tar -C $(DIST_ROOT) -czf $(DIST_TGZ) $(DIST_NAME)
	$(DIST_DIR)/bin/nccl-tuner-aot >$(BUILD)/aot-training.log 2>&1 || { cat $(BUILD)/aot-training.log; exit 1; }
	@$(MAKE) -s --no-print-directory -f $(REPO)/Makefile dist-message

# What `make dist` says at its end, in the user's terms (what was made, why the AOT cache is not in
# the tarball and how to make it); ReadmeDistPathsTest runs it over the built dist/.
dist-message:
	@echo "dist: made $(DIST_TGZ) ($$(du -sm $(DIST_TGZ) | cut -f1) MiB): the tarball to unpack on the nodes (the plugin, its own Java runtime, bin/nccl-tuner, policies/, examples/, docs/)"
	@echo "dist: the tarball holds no AOT cache (lib/nccl-tuner-java.aot, $$(du -sm $(DIST_DIR)/lib/nccl-tuner-java.aot | cut -f1) MiB, left out to keep it small): after unpacking, run bin/nccl-tuner-aot once, as the owner of lib/, for a faster plugin start (the first init about 85 ms instead of 260 ms; it also writes the policies' compiled forms)"
	@echo "dist: $(DIST_DIR)/ is the same tree unpacked, with that cache made in it ($$(du -sm $(DIST_DIR) | cut -f1) MiB)"

# nccl-tuner-java -- top-level build.
#
#   make run     build everything, then replay the captured NCCL 2.28.9 traces through the built
#                plugin in enforce and in shadow mode (the main job where no GPU is)
#   make test    build everything and run all tests (JUnit, ABI layout, harness, integration)
#   make dist    dist/nccl-tuner-java-<version>-linux-x86_64.tar.gz with its own Java runtime
#   make bench   per-call and start-up figures beside a C reference (docs/dev/benchmarks.md)
#   make bindings JEXTRACT=/path/to/jextract   regenerate the FFM bindings
#   make format  rewrite every C file in the style of .clang-format (make format-check checks it)
#
# Every recipe sets JAVA_HOME itself: Temurin 25 (FFM is final there); override with
# `make JAVA_HOME=/path/to/jdk-25`.

REPO      := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD     := $(REPO)/build
# Set here, whatever the environment says (the system default is Java 17); `make JAVA_HOME=...`
# on the command line still overrides it.
JAVA_HOME := /usr/lib/jvm/temurin-25-jdk-amd64
export JAVA_HOME
export PATH := $(JAVA_HOME)/bin:$(PATH)
export MAVEN_OPTS ?= --sun-misc-unsafe-memory-access=allow
MVN       ?= mvn -B -q
CC        ?= gcc

LIB_DIR   := $(BUILD)/lib
SHIM_SO   := $(LIB_DIR)/libnccl-tuner-java.so
ENGINE_JAR:= $(LIB_DIR)/nccl-tuner-java.jar
TOOLS_JAR := $(LIB_DIR)/nccl-tuner-tools.jar
include $(REPO)/make/cflags.mk
SHIM_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden \
               -I$(REPO)/plugin-shim/include -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux
SHIM_LDFLAGS := -shared -Wl,-soname,libnccl-tuner-java.so -Wl,--no-undefined
JAVA_SOURCES := $(shell find $(REPO)/java-policy/src/main $(REPO)/java-tools/src/main -type f) $(REPO)/pom.xml \
                $(REPO)/java-policy/pom.xml $(REPO)/java-tools/pom.xml

# Defined before the includes: make/reliability.mk names them as prerequisites (expanded when read).
# exports.c: every exported struct (tuner v3..v7, profiler v4..v6); plugin.c: the tuner's entry
# points; profiler.c: the profiler's; signature.c: the hardware signature; start.c and the files
# beside it (jvm_internal.h lists them): the JVM start-up; shim_internal.h between them all.
SHIM_JVM_SRCS := start.c log.c proc_state.c hotspot_output.c find_runtime.c jvm_options.c got.c env_hide.c signals.c \
                 locale.c host_fds.c fp_env.c cloexec.c stack_guard.c
SHIM_SRCS    := $(addprefix $(REPO)/plugin-shim/src/,exports.c plugin.c profiler.c signature.c $(SHIM_JVM_SRCS))
SHIM_HEADERS := $(REPO)/plugin-shim/src/shim_internal.h $(REPO)/plugin-shim/src/jvm_internal.h \
                $(REPO)/plugin-shim/include/nccl_tuner_abi.h $(REPO)/plugin-shim/include/nccltj_bridge.h \
                $(REPO)/plugin-shim/include/nccl_profiler_abi.h $(REPO)/plugin-shim/include/nccl_names.h

include $(REPO)/make/harness.mk
include $(REPO)/make/bindings.mk
include $(REPO)/make/dist.mk
include $(REPO)/make/bench.mk
include $(REPO)/make/reliability.mk
include $(REPO)/make/simcluster.mk

.PHONY: all build run test unit-test gpu-script-test docs-check canary-oracle tune-oracle clean check-env format format-check
.DEFAULT_GOAL := all

all: build

check-env:
	@test -x "$(JAVA_HOME)/bin/javac" || { echo "make: no JDK 25 at JAVA_HOME=$(JAVA_HOME)"; exit 1; }
	@v=$$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$(JAVA_HOME)/release"); test "$${v:-0}" -ge 25 || \
	  { echo "make: JAVA_HOME=$(JAVA_HOME) is Java $$v; the build needs JDK 25 (Temurin 25 at /usr/lib/jvm/temurin-25-jdk-amd64)"; exit 1; }
	@command -v mvn >/dev/null || { echo "make: Maven (mvn) is required"; exit 1; }
	@command -v $(CC) >/dev/null || { echo "make: a C compiler ($(CC)) is required"; exit 1; }

JVM_PRELOAD := $(BUILD)/tests/libjvm-preload.so

build: check-env $(SHIM_SO) $(ENGINE_JAR) $(TOOLS_JAR) harness $(JVM_PRELOAD) $(SIMCLUSTER_BIN)

# A stand-in for a host process that already runs a JVM (tests/hosts/jvm_preload.c).
$(JVM_PRELOAD): $(REPO)/tests/hosts/jvm_preload.c
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -shared -o $@ $< -ldl

$(SHIM_SO): $(SHIM_SRCS) $(SHIM_HEADERS)
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) $(SHIM_LDFLAGS) -o $@ $(SHIM_SRCS) -ldl -lpthread

# Two Maven modules: java-policy (the runtime the plugin loads) and java-tools (the nccl-tuner
# command line, which depends on it). One reactor build makes both jars. The plugin's jar holds
# what make/runtime-jar.allow names and nothing else (each runtime class by name, the generated
# bindings, the bundled Jackson and SnakeYAML): checked here, so the build fails naming any other
# class (tool code, picocli) that reaches the runtime.
$(ENGINE_JAR) $(TOOLS_JAR) &: $(JAVA_SOURCES) $(REPO)/make/runtime-jar.allow $(REPO)/make/check-runtime-jar.sh
	@mkdir -p $(LIB_DIR)
	cd $(REPO) && $(MVN) -DskipTests package
	@JAVA_HOME=$(JAVA_HOME) sh $(REPO)/make/check-runtime-jar.sh $(REPO)/java-policy/target/nccl-tuner-java.jar \
	  $(REPO)/make/runtime-jar.allow
	cp $(REPO)/java-policy/target/nccl-tuner-java.jar $(ENGINE_JAR)
	cp $(REPO)/java-tools/target/nccl-tuner-tools.jar $(TOOLS_JAR)

run: build
	bash $(REPO)/tests/run_main_job.sh

unit-test: build dist
	bash $(REPO)/tests/html/install_chromium.sh
	cd $(REPO) && mvn -B test -Pit

# The README and docs/ as a newcomer with the tarball reads them (tests/docs/check_docs.py): every
# link and docs/ path resolves in the repository and in dist/'s unpacked tree, the user docs'
# examples name bin/nccl-tuner and shipped files and write no shipped file, and no line of the user
# docs (README.md, docs/*.md, examples/README.md) names a source path, a project class or a make
# command (those go to docs/dev/); then every bin/nccl-tuner example runs as written in a copy
# of the unpacked tree (about a minute). Then docs/measure.md's "Try the sweep without a GPU" from the
# tarball itself, unpacked afresh: the example's gcc build, sweep, compile, a run with the policy and
# report, each printing what the section shows (tests/docs/check_sim_example.py, about 20 s). First
# the checkers' own test (tests/docs/test_checkers.py, under a second): each check flags a line
# planted for it, which clean docs cannot show.
docs-check: dist
	python3 $(REPO)/tests/docs/test_checkers.py
	python3 $(REPO)/tests/docs/check_docs.py $(REPO) $(DIST_DIR) --run
	python3 $(REPO)/tests/docs/check_sim_example.py $(DIST_TGZ)

gpu-script-test:
	python3 $(REPO)/tests/gpu/test_e2e.py
	python3 $(REPO)/tests/gpu/test_sweep_gpu.py
	python3 $(REPO)/tests/gpu/test_canary.py
	python3 $(REPO)/tests/gpu/test_calibrate_gpu.py

# The C style check first (seconds), then JUnit (unit tests, the ABI layout test, and
# io.nccltuner.it: the built plugin driven through the host harness), the README's and docs' links
# and examples in the repository and the unpacked distribution (docs-check), the GPU end-to-end script's
# checks on recorded logs, then the harness's own shell tests, then the sweep -> compile -> enforce
# loop on the simulated cluster, then the canary on two simulated ranks (measured gain against the
# model's truth), then the calibration scored at shapes nobody swept (docs/calibrate.md).
test: format-check unit-test docs-check gpu-script-test harness-test simcluster-loop simcluster-canary simcluster-calibrate canary-oracle tune-oracle

# C style: .clang-format (NCCL's, for Debian 12's clang-format 14, which make/install_clang_format.sh
# installs where it is missing). format-check fails on any C file that clang-format would change,
# naming file and line; format rewrites them in place. Every C file of the repository is covered.
# Java: palantir-java-format through spotless (layout) and checkstyle (make/checkstyle: no method of
# main code over 100 lines).
CLANG_FORMAT   ?= clang-format
C_FORMAT_FILES  = $(shell find $(REPO)/plugin-shim $(REPO)/tests $(REPO)/bench -name '*.[ch]' | sort)

format-check:
	@CLANG_FORMAT=$(CLANG_FORMAT) bash $(REPO)/make/install_clang_format.sh
	@echo "format-check: $(words $(C_FORMAT_FILES)) C files, $$($(CLANG_FORMAT) --version)"
	@$(CLANG_FORMAT) --style=file --dry-run --Werror $(C_FORMAT_FILES) || \
	  { echo "make format-check: the C files above are not in .clang-format's style; run make format" >&2; exit 1; }
	@cd $(REPO) && $(MVN) -q spotless:check || \
	  { echo "make format-check: Java files not in palantir-java-format's style (above); run make format" >&2; exit 1; }
	@cd $(REPO) && $(MVN) -q checkstyle:check || \
	  { echo "make format-check: checkstyle (make/checkstyle/checkstyle.xml) failed above: split the method" >&2; exit 1; }

format:
	@CLANG_FORMAT=$(CLANG_FORMAT) bash $(REPO)/make/install_clang_format.sh
	$(CLANG_FORMAT) --style=file -i $(C_FORMAT_FILES)
	cd $(REPO) && $(MVN) -q spotless:apply

# An independent model of canary mode and the profiler's measured lines, written from the docs
# (tests/oracle/canary_oracle.py): 50 random policies x 300 calls x 2 ranks through the built library.
canary-oracle: build
	python3 $(REPO)/tests/oracle/canary_oracle.py

# NCCL 2.28.9's tuning model written from NCCL's source alone (tests/oracle/tune_oracle.py) against
# `nccl-tuner explain`: random shapes and constants, then random baseLatencies through a policy.
tune-oracle: build
	python3 $(REPO)/tests/oracle/compare_explain.py 6 11
	python3 $(REPO)/tests/oracle/compare_explain.py 4 12 --policy-baselat

clean:
	rm -rf $(BUILD) $(DIST_ROOT) $(REPO)/java-policy/target $(REPO)/java-tools/target $(REPO)/target

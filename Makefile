# gpulabel - one Makefile for the agent, the scheduler, the tests and the fuzzers.
#
#   make            build/gpulabel, build/gpusched, test helpers
#   make check      every test; ends with "N passed, N failed"
#   make check-san  the same under ASan+UBSan (build-san/)
#   make fuzz       libFuzzer targets with clang (build-fuzz/)
#   make clang      everything built with clang and the same warnings (build-clang/)
#   make format     clang-format every C file in place; make check-format only reports
#   make demo       the seed's walkthrough, offline
#   make k8s        the real kube-apiserver, kube-scheduler, kubectl, helm, ... in build/k8s/ (Go)
#   make bench      benchmarks (see docs/benchmarks.md)
#   make check-k8s  gpusched against the real kube-scheduler (differential test, docs/testing.md),
#                   and build/cel-eval against the real CEL (check-cel, docs/cel-testing.md)

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SANFLAGS =
endif

CC ?= cc
OPT ?= -O2 -g
WARN = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wformat=2 -Wvla -Werror
GEN = $(BUILD)/gen
CPPFLAGS += -D_GNU_SOURCE -Isrc -I$(GEN)
# src/base/banned.h: sprintf, vsprintf, strcpy, strcat, strncpy, strncat do not compile in
# our files (generated code is not ours: its rule does not read CFLAGS)
BANNED = -include src/base/banned.h
CFLAGS += $(OPT) $(WARN) $(BANNED) $(SANFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
LDLIBS = -ljansson -lyaml -lpthread -ldl -lm -lre2 -lstdc++
# The device plugin (src/deviceplugin/): protobuf-c, only in the programs using it; gRPC core
# is loaded at run time (src/deviceplugin/grpc_dl.c).
DP_LIBS = -lprotobuf-c
# TLS of gpusched serve's secure port (src/base/tls.c): only the programs that serve HTTPS.
TLS_LIBS = -lssl -lcrypto

# One folder per part, in layer order (docs/design.md): each may include only those before it.
LIB_DIRS := base cel kube gpu rpc deviceplugin draplugin labeler manifest sched gpusched serve
LIB_SRC := $(filter-out %/main.c,$(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c)))
# C++ only where a Debian library has no C API: the RE2 shim of src/cel (regex.c calls it).
LIB_CXX_SRC := $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.cc))
GEN_SRC := gen/deviceplugin/api.pb-c gen/draplugin/dra.pb-c gen/draplugin/pluginregistration.pb-c
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_CXX_SRC:%.cc=$(BUILD)/obj/%.o) $(GEN_SRC:%=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay-%)
FAKE_NVML_SRC := $(wildcard tests/fake-nvml/*.c)

BINS := $(BUILD)/gpulabel $(BUILD)/gpusched
ALL := $(BINS) $(BUILD)/unit-tests $(BUILD)/torture $(FUZZ_REPLAY) $(BUILD)/kube-request \
	$(BUILD)/dra-alloc $(BUILD)/cel-eval
# The fake kubelet's Python messages (tests/kubelet/), when protoc is there.
ifneq ($(shell command -v protoc 2>/dev/null),)
ALL += $(GEN)/python/api_pb2.py $(GEN)/python/dra_pb2.py $(GEN)/python/pluginregistration_pb2.py
endif
ifneq ($(FAKE_NVML_SRC),)
ALL += $(BUILD)/fake-nvml/libnvidia-ml.so.1 $(BUILD)/fake-nvml-old/libnvidia-ml.so.1
endif

.PHONY: all check check-san fuzz clang demo bench clean format check-format k8s check-k8s diff-k8s install \
	check-cel diff-cel cel-conformance
.SECONDARY:
all: $(ALL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

CXX ?= c++
CXXFLAGS = $(OPT) -std=c++17 -Wall -Wextra -Werror $(SANFLAGS) -MMD -MP
$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

# The kubelet device plugin API's messages, generated from the vendored proto: C by protoc-c
# (messages only: the services are cut out, since protoc-c would name the Register RPC
# `register`, a C keyword; src/deviceplugin/rpc.c is the service glue), Python by protoc.
DP_PROTO = src/deviceplugin/proto/api.proto
$(GEN)/deviceplugin/api.pb-c.h: $(GEN)/deviceplugin/api.pb-c.c
$(GEN)/deviceplugin/api.pb-c.c: $(DP_PROTO)
	@mkdir -p $(dir $@)
	sed '/^service /,/^}/d' $< > $(GEN)/deviceplugin/api.proto
	cd $(GEN)/deviceplugin && protoc-c --c_out=. api.proto
$(GEN)/python/api_pb2.py: $(DP_PROTO)
	@mkdir -p $(dir $@)
	protoc --python_out=$(GEN)/python -I$(dir $<) $<
# The kubelet's DRA plugin API and its plugin registration API (src/draplugin/), the same way;
# protoc-c 1.4 knows no proto3 `optional`, so the C copy drops the word (the field is one
# gpulabel never sets: the same bytes on the wire).
$(GEN)/draplugin/%.pb-c.h: $(GEN)/draplugin/%.pb-c.c ;
$(GEN)/draplugin/%.pb-c.c: src/draplugin/proto/%.proto
	@mkdir -p $(dir $@)
	sed '/^service /,/^}/d; s/^\( *\)optional /\1/' $< > $(GEN)/draplugin/$*.proto
	cd $(GEN)/draplugin && protoc-c --c_out=. $*.proto
$(GEN)/python/%_pb2.py: src/draplugin/proto/%.proto
	@mkdir -p $(dir $@)
	protoc --python_out=$(GEN)/python -Isrc/draplugin/proto $<
# generated code is not held to our warnings
$(BUILD)/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(OPT) -std=c11 $(SANFLAGS) -MMD -MP -c -o $@ $<
$(LIB_OBJ) $(UNIT_OBJ) $(FUZZ_SRC:%.c=$(BUILD)/obj/%.o): | $(GEN)/deviceplugin/api.pb-c.h \
	$(GEN)/draplugin/dra.pb-c.h $(GEN)/draplugin/pluginregistration.pb-c.h

$(BUILD)/libgpulabel.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/gpulabel: $(BUILD)/obj/src/labeler/main.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(DP_LIBS) $(LDLIBS)

$(BUILD)/gpusched: $(BUILD)/obj/src/gpusched/main.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(TLS_LIBS) $(LDLIBS)

$(BUILD)/unit-tests: $(UNIT_OBJ) $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(DP_LIBS) $(TLS_LIBS) $(LDLIBS)

$(BUILD)/fuzz-replay-%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(DP_LIBS) $(LDLIBS)

# torture: the parsers with the Nth allocation failing (tests/torture/torture.c); every call
# to the allocator from our objects goes through its counters.
TORTURE_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strdup,--wrap=strndup
$(BUILD)/torture: $(BUILD)/obj/tests/torture/torture.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) $(TORTURE_WRAP) -o $@ $^ $(LDLIBS)

# cel-eval: the C CEL behind the JSON-lines protocol the real CEL also answers
# (tests/k8s/cmd/cel-oracle, docs/cel.md), for the differential test and the benchmark
$(BUILD)/cel-eval: $(BUILD)/obj/tests/tools/cel_eval.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# kube-request: the REST client as a command, for tests/integration/test_client.py
$(BUILD)/kube-request: $(BUILD)/obj/tests/tools/kube_request.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# dra-alloc: the structured allocator as a command, for tests/k8s/cmd/dra-alloc-diff
$(BUILD)/dra-alloc: $(BUILD)/obj/tests/tools/dra_alloc.o $(BUILD)/libgpulabel.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The fake NVML is a test double for the driver library: never built with sanitizers, since
# it is dlopen()ed into the binaries under test like the real one.
$(BUILD)/fake-nvml/libnvidia-ml.so.1: $(FAKE_NVML_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(BANNED) -O2 -g -D_GNU_SOURCE -fPIC -shared \
		-Wl,-soname,libnvidia-ml.so.1 -o $@ $^

# The same double without the symbols an old driver lacks (see tests/fake-nvml/fake_nvml.c).
$(BUILD)/fake-nvml-old/libnvidia-ml.so.1: $(FAKE_NVML_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(BANNED) -O2 -g -D_GNU_SOURCE -DFAKE_NVML_OLD -fPIC -shared \
		-Wl,-soname,libnvidia-ml.so.1 -o $@ $^

# The real-Kubernetes suites (tests/integration/test_k8s_*.py) need build/k8s/: check builds
# it first when a new enough Go is there (a no-op once built); without Go, tests/run.py runs
# everything else and prints one "skipped:" line for them.
check: all
	@if tests/k8s/go-check >/dev/null 2>&1; then $(MAKE) --no-print-directory k8s; fi
	python3 tests/run.py --build $(BUILD) --k8s $(K8S_DIR)

check-san:
	$(MAKE) SAN=1 check

# The same tree, flags and -Werror with clang (gcc is the default compiler): both must build.
clang:
	$(MAKE) CC=clang BUILD=build-clang all
# make install [PREFIX=/usr/local] [DESTDIR=]: the binaries, gpusched as the kubectl plugin
# kubectl-gpusched (with kubectl's completion hook), man pages, bash and zsh completion.
PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
MAN1DIR = $(DESTDIR)$(PREFIX)/share/man/man1
install: $(BINS)
	install -d $(BINDIR) $(MAN1DIR) $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(BUILD)/gpulabel $(BUILD)/gpusched $(BINDIR)/
	ln -sf gpusched $(BINDIR)/kubectl-gpusched
	install -m 755 contrib/kubectl_complete-gpusched $(BINDIR)/
	install -m 644 docs/man/gpulabel.1 docs/man/gpusched.1 docs/man/kubectl-gpusched.1 $(MAN1DIR)/
	$(BUILD)/gpusched completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpusched
	ln -sf gpusched $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kubectl-gpusched
	$(BUILD)/gpusched completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_gpusched

# Fuzzers link the library as an archive, so a target only pulls in the objects it uses.
FUZZ_BUILD = build-fuzz
# (-MMD: a header's change rebuilds the objects that include it, as in $(BUILD): a stale object
# read a changed struct at its old offsets and crashed the fuzzer)
FUZZ_CFLAGS = $(WARN) $(BANNED) -g -O1 -fsanitize=fuzzer-no-link,address,undefined -MMD -MP
fuzz: $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz-%)
$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	clang++ $(CPPFLAGS) -std=c++17 -Wall -Wextra -Werror -g -O1 \
		-fsanitize=fuzzer-no-link,address,undefined -MMD -MP -c -o $@ $<
$(FUZZ_BUILD)/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_BUILD)/obj/src/%.o: | $(GEN)/deviceplugin/api.pb-c.h $(GEN)/draplugin/dra.pb-c.h \
	$(GEN)/draplugin/pluginregistration.pb-c.h
$(FUZZ_BUILD)/libgpulabel.a: $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) $(LIB_CXX_SRC:%.cc=$(FUZZ_BUILD)/obj/%.o) \
		$(GEN_SRC:%=$(FUZZ_BUILD)/obj/%.o)
	rm -f $@
	ar rcs $@ $^
$(FUZZ_BUILD)/fuzz-%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libgpulabel.a
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(WARN) $(BANNED) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $^ $(DP_LIBS) $(LDLIBS)

# The real Kubernetes components (kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl), helm (test_k8s_helm.py) and our Go test tools (tests/k8s/cmd/: k8s-cluster, ...), from the pinned module in
# tests/k8s/: the test oracle and peer, never shipped. Always build/k8s, also for check-san.
# A second run is a no-op; Go's caches make a rebuild after a change fast.
K8S_DIR = build/k8s
# GO=/path/to/go picks the toolchain; by default go on PATH, then /usr/local/go/bin/go.
K8S_GO_SRC := $(shell find tests/k8s -name '*.go' -o -name go.mod -o -name go.sum -o -name build)
k8s: $(K8S_DIR)/.built
$(K8S_DIR)/.built: $(K8S_GO_SRC)
	@go=$$(GO=$(GO) tests/k8s/go-check) || { echo "make k8s: $$go" >&2; exit 1; }; \
	echo "GO=$$go tests/k8s/build $(abspath $(K8S_DIR))"; \
	GO=$$go tests/k8s/build $(abspath $(K8S_DIR))
	touch $@

# The differential test against kube-scheduler v1.37.2 (build/k8s/k8s-difftest, the oracle
# in-process): the Go unit tests of tests/k8s/, 200 random clusters, every tests/scenarios/
# case through the oracle, then 40 clusters under each tests/k8s/configs/ file (--config). Ends with "N passed, N failed". A longer campaign:
# make diff-k8s SEED=7 N=5000. Reproducers of differences go to $(BUILD)/k8s-diff/.
GO ?= go
SEED ?= 1
N ?= 1000
check-k8s: all
	@if ! command -v $(GO) >/dev/null 2>&1; then \
		echo "skipped: make check-k8s: no Go toolchain ($(GO)) on PATH; install Go 1.26 or newer"; exit 0; fi; \
	$(MAKE) --no-print-directory k8s && \
	(cd tests/k8s && GPUSCHED=$(abspath $(BUILD))/gpusched GOFLAGS=-mod=readonly $(GO) test ./internal/...) && \
	$(K8S_DIR)/dra-alloc-diff --dra-alloc $(BUILD)/dra-alloc --seed 1 --cases 300 \
		--out $(BUILD)/dra-alloc-diff && \
	$(K8S_DIR)/dra-alloc-diff --dra-alloc $(BUILD)/dra-alloc --cel --seed 2 --cases 300 \
		--out $(BUILD)/dra-alloc-diff && \
	$(K8S_DIR)/k8s-difftest --gpusched $(BUILD)/gpusched --seed 1 --clusters 200 \
		--scenarios tests/scenarios --out $(BUILD)/k8s-diff && \
	$(K8S_DIR)/k8s-difftest --gpusched $(BUILD)/gpusched --seed 1 --clusters 100 \
		--features +dra --scenarios "" --out $(BUILD)/k8s-diff-dra && \
	for c in tests/k8s/configs/*.yaml; do \
		echo "k8s-difftest --config $$c"; \
		$(K8S_DIR)/k8s-difftest --gpusched $(BUILD)/gpusched --seed 301 --clusters 40 \
			--features +dra --scenarios "" --config $$c --out $(BUILD)/k8s-diff-config \
			|| exit 1; \
	done && \
	$(MAKE) --no-print-directory check-cel
# The C CEL against the real one (k8s.io/dynamic-resource-allocation/cel v0.37.2 in
# build/k8s/cel-difftest): 20,000 generated selectors and devices, 0 differences wanted;
# reproducers go to $(BUILD)/cel-diff/ (docs/cel-testing.md). One "skipped:" line while
# $(BUILD)/cel-eval is not built. A longer campaign: make diff-cel SEED=7 N=1000000.
# cel-spec's conformance files through cel-eval --conformance: make cel-conformance.
check-cel: all
	@if [ ! -x $(BUILD)/cel-eval ]; then \
		echo "skipped: cel-difftest: $(BUILD)/cel-eval is not built"; exit 0; fi; \
	if ! go=$$(GO=$(GO) tests/k8s/go-check); then \
		echo "skipped: cel-difftest: $$go"; exit 0; fi; \
	$(MAKE) --no-print-directory k8s && \
	$(K8S_DIR)/cel-difftest --cel-eval $(BUILD)/cel-eval --seed 1 --n 20000 --out $(BUILD)/cel-diff \
		--syntax-errors $(CEL_SYNTAX)
# what a syntax error must match: first-line (the contract) or position (docs/cel-testing.md)
CEL_SYNTAX ?= first-line
diff-cel: all
	@if [ ! -x $(BUILD)/cel-eval ]; then \
		echo "skipped: make diff-cel: $(BUILD)/cel-eval is not built"; exit 0; fi; \
	$(MAKE) --no-print-directory k8s && \
	$(K8S_DIR)/cel-difftest --cel-eval $(BUILD)/cel-eval --seed $(SEED) --n $(N) \
		--out $(BUILD)/cel-diff/seed-$(SEED) --syntax-errors $(CEL_SYNTAX)
cel-conformance: all
	@if [ ! -x $(BUILD)/cel-eval ]; then \
		echo "skipped: make cel-conformance: $(BUILD)/cel-eval is not built"; exit 0; fi; \
	$(MAKE) --no-print-directory k8s && \
	testdata=$$(cd tests/k8s && GOFLAGS=-mod=readonly $(GO) list -m -f '{{.Dir}}' cel.dev/expr)/tests/simple/testdata && \
	$(K8S_DIR)/cel-oracle --conformance-gen --testdata $$testdata >$(BUILD)/cel-conformance.jsonl && \
	$(K8S_DIR)/cel-difftest --cel-eval $(BUILD)/cel-eval --conformance $(BUILD)/cel-conformance.jsonl
diff-k8s: all
	@if ! command -v $(GO) >/dev/null 2>&1; then \
		echo "skipped: make diff-k8s: no Go toolchain ($(GO)) on PATH"; exit 0; fi; \
	$(MAKE) --no-print-directory k8s && \
	$(K8S_DIR)/k8s-difftest --gpusched $(BUILD)/gpusched --seed $(SEED) --clusters $(N) \
		--features "$(FEATURES)" --scenarios "" --out $(BUILD)/k8s-diff/seed-$(SEED)

demo: all
	sh examples/demo.sh $(BUILD)

bench: all
	sh bench/run.sh $(BUILD)

# .clang-format describes the house style; scripts/check-format lists the files (and the
# count of lines) clang-format would change, and the Go files of tests/k8s/ gofmt would
# (when Go is installed), and fails when there are any.
format:
	clang-format -i $(wildcard src/*/*.c src/*/*.h tests/*/*.c tests/*/*.h bench/*.c)
	@gofmt=$$(sh scripts/gofmt-path); if [ -n "$$gofmt" ]; then $$gofmt -w tests/k8s; \
		else echo "format: Go files skipped: no gofmt or go on PATH"; fi
check-format:
	sh scripts/check-format

clean:
	rm -rf build build-san build-fuzz build-clang

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)

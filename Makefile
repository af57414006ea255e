# nnnkit: one non-recursive Makefile. `make` builds everything into build/.
#   make            library, CLI, example tools
#   make example    set up, build, write and inspect the example model
#   make test       set up, build and run the Criterion suite
#   make test-asan  the suite under AddressSanitizer and UBSan
#   make valgrind   the suite under valgrind (memcheck, leaks are errors)
#   make bench      the benchmark table (BENCH_ARGS=--json, --markdown, --quick)
#   make fuzz       libFuzzer harnesses, FUZZ_SECONDS each (crashes land in tests/regress/)
#   make check-gen  regenerate and prove the output is byte-identical
#   make drills     grow and break the schema in copies of the tree (DRILLS=name... for some)

VERSION := 0.1.0
CC      ?= cc
V       ?= 0
# `make V=1` shows every command.
Q       := $(if $(filter 1,$(V)),,@)
LUA     ?= lua5.4
O       ?= build
OPT     ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wvla
CFLAGS  += $(OPT) $(WARN) -fPIC -fvisibility=default
CPPFLAGS += -Iruntime/include -I$(O)/gen -Iruntime/src -I$(O)/gen/onnx -MMD -MP
LDLIBS  += -lm

SCHEMA  := schema/nnn.lua
# The generated reference goes to docs/ for the tree's own schema only: a
# build from a schema copy (make SCHEMA=... O=...) writes it under $(O)/docs
# and leaves the tree alone.
DOCDIR  := $(if $(filter schema/nnn.lua,$(SCHEMA)),docs,$(O)/docs)
# The schema's lock: the IDs and layouts files use, and the struct layouts
# plugins were built against (docs/growing-the-format.md, docs/plugins.md).
LOCK    := schema/nnn.lock
GEN_LUA := $(wildcard gen/*.lua)
GEN_C   := $(O)/gen/schema_gen.c
GEN_H   := $(O)/gen/nnn/schema_gen.h
DOC     := $(DOCDIR)/format.md
# The schema language reference, rendered from gen/schema_lang.lua.
LANG_DOC := $(DOCDIR)/schema-language.md

LIB_SRC := $(wildcard runtime/src/*.c)
# ONNX export and import (runtime/onnx/) read and write protobuf through C that
# protoc-c generates at build time from the onnx.proto Debian's libonnx-dev
# installs; nothing generated is committed.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
ONNX_PB  := $(O)/gen/onnx/onnx.pb-c
ONNX_SRC := $(wildcard runtime/onnx/*.c)
ONNX_OBJ := $(ONNX_SRC:%.c=$(O)/obj/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/obj/%.o) $(O)/obj/gen/schema_gen.o $(ONNX_OBJ) $(O)/obj/gen/onnx.pb-c.o
# What a program linking libnnn.a needs besides it.
LIB_DEPS := -ljansson -lprotobuf-c
CLI_SRC := $(wildcard runtime/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/obj/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/obj/%.o)
BENCH_SRC := $(wildcard bench/*.c)
PLUGINS := $(patsubst plugins/%/,$(O)/plugins/%.so,$(wildcard plugins/*/))
# Plugins export only their entry point and never link libnnn.
PLUGIN_CFLAGS := -fvisibility=hidden
PLUGIN_LIBS := -lm

NNNKIT  := $(O)/nnnkit
# Loads each plugin candidate in a child process first (runtime/src/discover.c).
SCANNER := $(O)/nnn-plugin-scan
LIB_A   := $(O)/libnnn.a
# The shared library's soname changes with every incompatible change of its ABI
# (1: nnn_diag_t gained line and column).
SOVERSION := 1
LIB_SO  := $(O)/libnnn.so.$(SOVERSION)
TESTBIN := $(O)/test_nnn
EXAMPLE := $(O)/example.nnn

# Keep intermediate objects (plugin and fixture objects) between runs.
.SECONDARY:
.PHONY: all deps example test test-python test-asan valgrind valgrind-cli bench check-gen check-compat lock clean install uninstall \
	conformance drills test-build ort
.DEFAULT_GOAL := all

# The conformance corpus too: `nnnkit conformance` finds it beside build/nnnkit,
# and make install installs it.
ALL := $(NNNKIT) $(SCANNER) $(LIB_SO) $(DOC) $(LANG_DOC) $(O)/mkexample $(PLUGINS) $(O)/nnnkit.1 $(O)/nnngen.1 \
	$(O)/nnnkit.bash $(O)/conformance/manifest.json
all: $(ALL)

# Installs the Debian packages the build and tests need, when missing.
deps:
	@scripts/deps.sh

# ---- generated codec ----
# nnngen rewrites a generated file only when its bytes change, and the stamp
# records that it ran. The generated files' own rule has a recipe (a no-op)
# so that make looks at their times again after the stamp's recipe: what
# depends on them is rebuilt in the same pass, under -j too, and only when
# their bytes changed (a doc edit rebuilds schema_gen.o, not every object).
$(O)/gen/.stamp: $(SCHEMA) $(GEN_LUA) $(LOCK) | deps
	@mkdir -p $(O)/gen/nnn $(DOCDIR)
	@echo "  GEN    $@"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --c $(GEN_C) --h $(GEN_H) --doc $(DOC) --lang-doc $(LANG_DOC) --layouts $(LOCK)
	@touch $@
$(GEN_C) $(GEN_H) $(DOC) $(LANG_DOC): $(O)/gen/.stamp
	@:

check-gen: $(O)/gen/.stamp
	@mkdir -p $(O)/regen/nnn
	@echo "  GEN    $@"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --c $(O)/regen/schema_gen.c --h $(O)/regen/nnn/schema_gen.h \
		--doc $(O)/regen/format.md --lang-doc $(O)/regen/schema-language.md --layouts $(LOCK)
	cmp $(GEN_C) $(O)/regen/schema_gen.c
	cmp $(GEN_H) $(O)/regen/nnn/schema_gen.h
	cmp $(DOC) $(O)/regen/format.md
	cmp $(LANG_DOC) $(O)/regen/schema-language.md
	@echo "check-gen: generated files are byte-identical"

# ---- objects ----
# An object depends on the headers it includes through its .d file (-MMD);
# the order-only header is there for the first build, before any .d exists.
$(O)/obj/%.o: %.c | $(GEN_H)
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(O)/obj/gen/schema_gen.o: $(GEN_C)
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(ONNX_PB).c $(ONNX_PB).h &: $(ONNX_PROTO) | deps
	@mkdir -p $(@D)
	@echo "  PROTOC $(ONNX_PB).c"
	$(Q)protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(@D) $(ONNX_PROTO)
# protoc-c's output is not ours to warn about; hidden, so libnnn.so exports none of it.
$(O)/obj/gen/onnx.pb-c.o: $(ONNX_PB).c
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(OPT) -fPIC -fvisibility=hidden $(filter -fsanitize=%,$(CFLAGS) $(OPT)) -w -c $< -o $@
$(ONNX_OBJ): | $(ONNX_PB).h

# The map page (HTML, CSS, JS) compiled into nnnkit as a byte array.
$(O)/gen/map_page.h: runtime/cli/map_page.html | deps
	@mkdir -p $(@D)
	@echo "  XXD    $@"
	$(Q){ echo 'static const unsigned char map_page_html[] = {'; xxd -i < $<; echo '};'; } > $@.tmp
	$(Q)mv $@.tmp $@
$(O)/obj/runtime/cli/map.o: $(O)/gen/map_page.h

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	@echo "  AR     $@"
	$(Q)ar rcs $@ $^
$(LIB_SO): $(LIB_OBJ)
	@echo "  CC     $@"
	$(Q)$(CC) -shared -Wl,-soname,libnnn.so.$(SOVERSION) -o $@ $^ $(LIB_DEPS) $(LDLIBS)

$(O)/obj/runtime/cli/main.o: CPPFLAGS += -DNNNKIT_VERSION='"$(VERSION)"'
# The scanner refuses to speak for another version (its cache key has it too).
$(O)/obj/runtime/src/discover.o: CPPFLAGS += -DNNN_VERSION='"$(VERSION)"'
$(O)/obj/runtime/onnx/export.o: CPPFLAGS += -DNNN_VERSION='"$(VERSION)"'
# nnnkit needs its scanner to load any plugin: built with it.
$(NNNKIT): $(CLI_OBJ) $(LIB_A) | $(SCANNER)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(LIB_A) $(LIB_DEPS) $(LDLIBS)
$(SCANNER): $(O)/obj/runtime/scanner/nnn-plugin-scan.o $(LIB_A)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# One folder under plugins/ per plugin, one .so per folder.
.SECONDEXPANSION:
$(O)/plugins/%.so: $$(addprefix $(O)/obj/,$$(addsuffix .o,$$(basename $$(wildcard plugins/$$*/*.c))))
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) -shared -Wl,--no-undefined -o $@ $^ $(PLUGIN_LIBS) $(filter -fsanitize=%,$(LDLIBS))
$(O)/obj/plugins/%.o: plugins/%.c | $(GEN_H)
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(PLUGIN_CFLAGS) -c $< -o $@

$(O)/mkexample: $(O)/obj/tools/mkexample.o $(LIB_A)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# ---- the example: a real job on a model the project generates ----
$(EXAMPLE): $(O)/mkexample
	$(O)/mkexample $@ $(O)/example-input.npy
example: $(NNNKIT) $(EXAMPLE) $(PLUGINS)
	$(NNNKIT) info $(EXAMPLE)
	$(NNNKIT) validate --input-shape 1,28,28,1 $(EXAMPLE)
	$(NNNKIT) run $(EXAMPLE) --input $(O)/example-input.npy

# ---- safe growth: the schema keeps every file written under the lock readable ----
# check-compat also fails while the lock lacks the schema's struct layout
# (the plugin ABI moved: `make lock` records it).
check-compat: | deps
	$(Q)$(LUA) gen/nnngen.lua --check-compat $(LOCK) $(SCHEMA)
	$(Q)$(LUA) gen/nnngen.lua --check-layout $(LOCK) $(SCHEMA)
# Rewrites the lock after a compatible addition (appending a struct layout
# that changed); refuses an incompatible schema.
lock: | deps
	$(Q)$(LUA) gen/nnngen.lua --check-compat $(LOCK) $(SCHEMA)
	$(Q)$(LUA) gen/nnngen.lua --lock $(SCHEMA) --out $(LOCK) --layouts $(LOCK)

# ---- conformance corpus: every case generated from the schema ----
CONFORMANCE := $(O)/conformance
conformance: $(CONFORMANCE)/manifest.json
$(CONFORMANCE)/manifest.json: $(SCHEMA) $(GEN_LUA) | deps
	@echo "  GEN    $(CONFORMANCE)"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --conformance $(CONFORMANCE)

# ---- tests ----
# The allocator is wrapped for the allocation-failure sweep
# (tests/test_allocfail.c): every other test passes straight through.
ALLOC_WRAP := $(foreach f,malloc calloc realloc aligned_alloc posix_memalign strdup strndup free,-Wl,--wrap=$(f))
$(TESTBIN): $(TEST_OBJ) $(LIB_A)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $(TEST_OBJ) $(LIB_A) $(ALLOC_WRAP) -lcriterion $(LIB_DEPS) $(LDLIBS)

# Test plugins, each broken in one way (tests/plugins/fixture.c).
FIXTURES := good tag2 dupacross noentry initfail abimajor abiminor dupwithin noforward missingdep initcrash fwdfail \
	abi10 hostpool oldabi badrecord corerecord freecore thirdparty taken never layout nolayout \
	flood allids initexit inithang initspin \
	nanfwd shortfwd crashfwd
FIX_good :=
FIX_tag2 := -DFIX_TAG=2 -DFIX_LAYER=1 -DFIX_ACT=4
FIX_dupacross := -DFIX_TAG=3 -DFIX_ACT=5
FIX_noentry := -DFIX_NO_ENTRY
FIX_initfail := -DFIX_INIT_FAIL
FIX_abimajor := -DFIX_ABI_MAJOR
FIX_abiminor := -DFIX_ABI_MINOR
FIX_dupwithin := -DFIX_DUP_WITHIN
FIX_noforward := -DFIX_NO_FORWARD
FIX_missingdep := -DFIX_MISSING_DEP
FIX_initcrash := -DFIX_INIT_CRASH
FIX_initexit := -DFIX_INIT_EXIT
FIX_inithang := -DFIX_INIT_HANG
FIX_initspin := -DFIX_INIT_SPIN
FIX_fwdfail := -DFIX_FORWARD_FAIL -DFIX_TAG=4
FIX_abi10 := -DFIX_ABI_1_0 -DFIX_TAG=7 -DFIX_ACT_ADDS=100
FIX_hostpool := -DFIX_HOST_POOL -DFIX_TAG=6 -DFIX_ACT_ADDS=1000
FIX_oldabi := -DFIX_OLD_ABI -DFIX_LAYER=7
FIX_badrecord := -DFIX_RECORD -DFIX_LAYER=7
FIX_corerecord := -DFIX_CORE_RECORD
# New IDs where the schema's ID policy puts them (tests/plugins/fixture.c).
FIX_freecore := -DFIX_FREE_CORE
FIX_thirdparty := -DFIX_THIRD_PARTY
FIX_taken := -DFIX_TAKEN
FIX_never := -DFIX_NEVER
FIX_layout := -DFIX_LAYOUT=0x5eed1234u
FIX_nolayout := -DFIX_LAYOUT=0
# Declarations past the host's room (tests/plugins/fixture.c).
FIX_flood := -DFIX_FLOOD
FIX_allids := -DFIX_ALL_IDS
# Wrong kernels for Dense and Linear, for the conformance runner to catch.
FIX_nanfwd := -DFIX_NAN_FORWARD -DFIX_ACT=0
FIX_shortfwd := -DFIX_SHORT_FORWARD -DFIX_ACT=0
FIX_crashfwd := -DFIX_CRASH_FORWARD -DFIX_ACT=0
FIXTURE_SO := $(FIXTURES:%=$(O)/fixtures/%.so)
$(O)/fixtures/%.so: tests/plugins/fixture.c $(GEN_H) $(wildcard runtime/include/nnn/*.h)
	@mkdir -p $(@D)/dep
	@if [ $* = missingdep ]; then \
		echo 'int fixdep_value(void); int fixdep_value(void) { return 5; }' > $(@D)/dep/fixdep.c && \
		$(CC) -shared -fPIC -o $(@D)/dep/libfixdep.so $(@D)/dep/fixdep.c; fi
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(PLUGIN_CFLAGS) $(FIX_$*) -shared -o $@ $< \
		$(if $(filter missingdep,$*),-L$(@D)/dep -lfixdep)
	@# what the plugin needs is gone: dlopen must say so
	@if [ $* = missingdep ]; then rm -f $(@D)/dep/libfixdep.so; fi

# A decoder that skips one check, for the conformance runner to catch.
$(O)/lenient: tests/tools/lenient.c $(LIB_A) $(GEN_H) $(wildcard runtime/include/nnn/*.h runtime/src/*.h)
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# ONNX Runtime for the ONNX tests (tests/test_onnx_ort.c runs exported models
# in it through tests/tools/ort_run.js): onnxruntime-node from the npm
# registry, as tests/ort/package-lock.json pins it, installed into $(O)/ort by
# `npm ci --ignore-scripts`. Offline (or without node/npm) the build goes on:
# tests/ort/install.sh says why in one line and in $(O)/ort/missing, and the
# tests that need it skip saying so. `make ort` tries again.
ORT_STAMP := $(O)/ort/.stamp
$(ORT_STAMP): tests/ort/package.json tests/ort/package-lock.json tests/ort/install.sh
	$(Q)tests/ort/install.sh $(O)/ort
	@touch $@
ort:
	@rm -f $(ORT_STAMP)
	$(Q)$(MAKE) --no-print-directory $(ORT_STAMP)

# What the suite runs, built (make test-build: the growth drills' base tree).
# It includes all of `make all`: the install tests run `make install` in this
# build folder two at a time, and must find nothing left to build there.
TEST_DEPS := $(ALL) $(TESTBIN) $(FIXTURE_SO) $(O)/lenient $(ORT_STAMP)
test-build: $(TEST_DEPS)
# The suite's plugin scans are cached in the build folder, never in ~/.cache,
# and may take up to two minutes: on a loaded machine under ASan or valgrind a
# scan can pass the 5 s default, which would fail plugins that are fine (the
# tests of hanging plugins set their own limit).
SUITE_ENV := NNNKIT=$(abspath $(NNNKIT)) NNN_BUILD=$(abspath $(O)) NNN_PLUGIN_CACHE=$(abspath $(O))/plugin-scan.cache \
	NNN_PLUGIN_SCAN_TIMEOUT_MS=120000
test: $(TEST_DEPS) check-gen check-compat
	$(SUITE_ENV) $(TESTBIN) --jobs 2
	$(Q)$(if $(NO_PYTHON),,$(MAKE) --no-print-directory test-python)

# The Python package's tests (tests/python, pytest), against this build tree,
# with Debian's Python (numpy, pytest: scripts/deps.sh); no byte code or
# pytest cache is left in the tree.
PYTHON := /usr/bin/python3
test-python: $(ALL)
	$(SUITE_ENV) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pytest -q -p no:cacheprovider tests/python

# ---- growth drills: each growth of the schema, on its own, in a copy of the
# tree: built with -j once, locked, tested, and checked through the CLI; each
# kind of breaking change refused (tests/drills/run.sh, docs/growing-the-format.md) ----
drills: | deps
	tests/drills/run.sh $(DRILLS)

# NO_PYTHON: the Python suite runs against the plain build only (make test):
# python3 cannot load a libnnn built with ASan without preloading its runtime.
SANITIZE := -fsanitize=address,undefined
test-asan:
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) NNN_SANITIZE="$(SANITIZE)" $(MAKE) O=build/asan \
		OPT="-O1 -g $(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all" LDLIBS="-lm $(SANITIZE)" NO_PYTHON=1 test

# Under valgrind, every process the suite starts is traced but nnnkit (the
# CLI tests start hundreds: traced, they were most of the run's time) and
# the shells and tools around it. The CLI runs under memcheck in
# valgrind-cli, and its tests against an ASan+UBSan nnnkit in test-asan.
# Each process logs to $(O)/valgrind/PID.log; tests/valgrind-logs.sh fails
# on any error or leak there, a test's forked process's included.
VG_SKIP := */nnnkit,*/sh,*/dash,*/bash,*/lua5.4,*/script,*/node,*/npm,*/cat,*/timeout,*/chromium*,*/python3*,*/ls,*/tr,*/stat,*/ln,*/chmod,*/cc,*/gcc*,*/cc1,*/collect2,*/ld,*/as,*/make,*/nm,*/ldd,*/sha256sum,*/find,*/xargs,*/cmp,*/cp,*/rm,*/awk,*/sort,*/mkdir
valgrind: $(TEST_DEPS)
	@rm -rf $(O)/valgrind && mkdir -p $(O)/valgrind
	rc=0; $(SUITE_ENV) NNN_UNDER_VALGRIND=1 valgrind --error-exitcode=9 --leak-check=full \
		--suppressions=$(abspath tests/valgrind.supp) --errors-for-leak-kinds=definite,indirect --show-possibly-lost=no --trace-children=yes \
		--trace-children-skip='$(VG_SKIP)' --log-file=$(abspath $(O))/valgrind/%p.log -q $(TESTBIN) --jobs 2 || rc=$$?; \
		tests/valgrind-logs.sh $(O)/valgrind && exit $$rc

# The CLI under valgrind: the conformance corpus (in process), `dump` over
# every valid case, and every command on the example model, good and bad.
valgrind-cli: $(NNNKIT) $(PLUGINS) $(O)/mkexample $(CONFORMANCE)/manifest.json
	tests/valgrind-cli.sh $(O) $(CONFORMANCE)

# ---- benchmarks: nnnbench (bench/suite/) prints the one table; bench/*.c are
# tools of their own (bench_run: where inference time goes, layer by layer) ----
BENCHES := $(BENCH_SRC:bench/%.c=$(O)/%)
$(O)/bench_%: $(O)/obj/bench/bench_%.o $(LIB_A)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lopenblas
SUITE_OBJ := $(patsubst %.c,$(O)/obj/%.o,$(wildcard bench/suite/*.c))
# jansson: the tiny models' expected.json; -ldl: ONNX Runtime's C API is
# opened with dlopen, never linked (nnnbench runs without it).
$(O)/nnnbench: $(SUITE_OBJ) $(LIB_A)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lopenblas -ljansson -ldl
# make bench BENCH_ARGS=--json (or --markdown, --quick); PyTorch and ONNX
# Runtime are optional. ONNX Runtime is onnxruntime-node in $(O)/ort (make
# ort, whose stamp is a prerequisite where the tests' ORT rules are merged in:
# offline it leaves $(O)/ort/missing and the table says why).
bench: $(O)/nnnbench $(BENCHES) $(NNNKIT) $(PLUGINS) $(O)/mkexample $(ORT_STAMP)
	@scripts/deps.sh --bench || true
	$(Q)$(O)/nnnbench --build $(abspath $(O)) --torch bench/torch_bench.py --pybench bench/py_bench.py --ort bench/ort_bench.js $(BENCH_ARGS)

clean:
	rm -rf build

# libFuzzer harnesses: make fuzz [FUZZ_SECONDS=60] (fuzz/Makefile.inc).
-include fuzz/Makefile.inc

-include $(shell find $(O)/obj $(O)/fuzz/obj -name '*.d' 2>/dev/null)

# The man page, from the tool's own help texts.
$(O)/nnnkit.1: $(NNNKIT) scripts/mkman.sh
	@echo "  MAN    $@"
	$(Q)scripts/mkman.sh $(NNNKIT) $(VERSION) > $@.tmp && mv $@.tmp $@
# The bash completion, from the parser's tables (runtime/cli/opts.c).
$(O)/nnnkit.bash: $(NNNKIT)
	@echo "  GEN    $@"
	$(Q)$(NNNKIT) help --completion > $@.tmp && mv $@.tmp $@
# nnngen's, from `nnngen --help`.
$(O)/nnngen.1: gen/nnngen.lua scripts/mkman.sh | deps
	@mkdir -p $(@D)
	@echo "  MAN    $@"
	$(Q)scripts/mkman.sh --nnngen "$(LUA) gen/nnngen.lua" $(VERSION) > $@.tmp && mv $@.tmp $@

# ---- install ----
PREFIX  ?= /usr/local
DESTDIR ?=
INST    := $(DESTDIR)$(PREFIX)
HEADERS := $(wildcard runtime/include/nnn/*.h)
# Installed under share/doc/nnnkit: README.md, and docs/ with the generated
# references (which a build from a schema copy writes under $(O)/docs).
DOCS    := $(sort $(filter-out docs/format.md docs/schema-language.md,$(wildcard docs/*.md)) $(DOC) $(LANG_DOC))
# pkg-config modules: libnnn for programs using the library; nnnkit-plugin
# for plugins, which never link libnnn (docs/plugins.md: the build line).
PC_VARS := 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' \
	'plugindir=$${prefix}/lib/nnnkit/plugins' 'nnngen=$${prefix}/bin/nnngen' ''

# The Python package (python/nnnkit), where that Python finds packages under
# PREFIX (scripts/pysite.py: for Debian's python3 and /usr/local,
# lib/python3.11/dist-packages), compiled; it finds PREFIX/lib/libnnn.so.1 and
# PREFIX/lib/nnnkit/plugins from there. PYTHON (above) names the Python.
PY_SRC  := $(wildcard python/nnnkit/*.py)

# The examples the docs point at (sources only), under share/doc/nnnkit/examples.
EXAMPLES := $(wildcard examples/*/*.c examples/*/*.lua examples/*/*.py examples/*/*.md examples/*/Makefile)

# scripts/install.sh installs each file and records it, and every folder it
# made, in PREFIX/share/nnnkit/installed-files; uninstall removes exactly
# those, then the folders it made that are left empty. A file someone else
# put in a folder of ours (a plugin in lib/nnnkit/plugins) stays, and so
# does its folder.
INSTALL_SH := scripts/install.sh
install: all
	$(Q)$(INSTALL_SH) begin $(INST)
	$(Q)$(INSTALL_SH) file $(INST) 0755 bin $(NNNKIT)
	$(Q)$(INSTALL_SH) file $(INST) 0644 lib $(LIB_A)
	$(Q)$(INSTALL_SH) file $(INST) 0755 lib $(LIB_SO)
	$(Q)$(INSTALL_SH) link $(INST) libnnn.so.$(SOVERSION) lib/libnnn.so
	$(Q)$(INSTALL_SH) file $(INST) 0644 include/nnn $(HEADERS) $(GEN_H)
	$(Q)printf '%s\n' $(PC_VARS) \
		'Name: libnnn' 'Description: read, check, write and run .nnn models' 'Version: $(VERSION)' \
		'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lnnn' 'Libs.private: -ljansson -lprotobuf-c -lm' \
		| $(INSTALL_SH) text $(INST) 0644 lib/pkgconfig/libnnn.pc
	$(Q)printf '%s\n' $(PC_VARS) \
		'Name: nnnkit-plugin' 'Description: build an nnnkit plugin (a shared object that never links libnnn)' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir} -fPIC -fvisibility=hidden' \
		'Libs: -shared -Wl,--no-undefined -lm' | $(INSTALL_SH) text $(INST) 0644 lib/pkgconfig/nnnkit-plugin.pc
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/gen $(GEN_LUA)
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/schema $(SCHEMA) $(LOCK)
	$(Q)printf '#!/bin/sh\nexec lua5.4 "%s/share/nnnkit/gen/nnngen.lua" "$$@"\n' '$(PREFIX)' \
		| $(INSTALL_SH) text $(INST) 0755 bin/nnngen
	$(Q)$(INSTALL_SH) file $(INST) 0755 lib/nnnkit/plugins $(PLUGINS)
	$(Q)$(INSTALL_SH) file $(INST) 0755 lib/nnnkit $(SCANNER)
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance $(CONFORMANCE)/manifest.json
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance/valid $(CONFORMANCE)/valid/*.nnn
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/nnnkit/conformance/invalid $(CONFORMANCE)/invalid/*.nnn
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/man/man1 $(O)/nnnkit.1 $(O)/nnngen.1
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/doc/nnnkit README.md
	$(Q)$(INSTALL_SH) file $(INST) 0644 share/doc/nnnkit/docs $(DOCS)
	$(Q)$(foreach d,$(sort $(dir $(EXAMPLES))),\
		$(INSTALL_SH) file $(INST) 0644 share/doc/nnnkit/$(d:/=) $(filter $(d)%,$(EXAMPLES)) &&) true
	$(Q)$(INSTALL_SH) as $(INST) 0644 $(O)/nnnkit.bash share/bash-completion/completions/nnnkit
	$(Q)pydir=$$($(PYTHON) scripts/pysite.py) && $(INSTALL_SH) file $(INST) 0644 $$pydir/nnnkit $(PY_SRC) && \
		$(INSTALL_SH) pyc $(INST) $(PYTHON) $$pydir/nnnkit
	$(Q)$(INSTALL_SH) end $(INST)
	@echo "installed under $(INST) (the list: $(INST)/share/nnnkit/installed-files)"

uninstall:
	$(Q)$(INSTALL_SH) uninstall $(INST)

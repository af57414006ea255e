# tests/tests.mk: the test harness, included by the Makefile. The tests come
# in tiers, one folder each, chosen by make targets (docs/testing.md):
#
#   make test-unit         tests/unit: libnnn in process (codec, shape engine,
#                          plan, kernels, npy, JSON, ONNX, plugins, writes)
#   make test-gen          tests/gen: the generator (nnngen, check-compat)
#   make test-cli          tests/cli: nnnkit as a user runs it
#   make test-integration  tests/integration: install and uninstall, the SDK
#                          and the example plugins, ONNX Runtime, the README
#   make test-python       tests/python: pytest
#   make test-csharp       tests/csharp: the C# target (NUnit): the tool,
#                          its testee, the Unity-safety check
#   make drills            tests/drills: the growth drills
#   make test              check-gen, check-compat and every tier above but
#                          the drills: what a developer runs before a commit
#   make test-times        the 30 slowest tests of the last runs
#   make test-asan         unit and gen on the sanitizer tree (clang,
#                          ASan+UBSan: the fuzzers' objects too), and a
#                          third of cli, by the commit (shares below)
#   make valgrind          a quarter of the unit and gen tests under
#                          memcheck, by the commit (shares below)
#   make valgrind-cli      the CLI under memcheck over the conformance corpus
#
# Each Criterion tier is one program, $(O)/test-TIER (beside nnnkit and its
# plugin scanner, which libnnn looks for there), built from its folder
# and the shared helpers of tests/lib. Every run writes its report, with each
# test's wall time, to $(O)/test-reports/TIER.xml (JUnit XML).

TEST_TIERS := unit gen cli integration
TEST_LIB_OBJ := $(patsubst %.c,$(O)/obj/%.o,$(wildcard tests/lib/*.c))
TEST_BINS := $(TEST_TIERS:%=$(O)/test-%)
REPORTS := $(O)/test-reports
$(O)/obj/tests/%.o: CPPFLAGS += -Itests/lib
# The generator's tests compile libnnn's sources (but ONNX's, which need
# protobuf) with a codec of their own: its folders, from RT_DIRS alone
# (runtime/plugin's, whose scanner.c is a program, the tests list).
T_LIB_DIRS := $(filter-out formats/onnx,$(RT_DIRS))
T_GEN_OBJ := $(O)/obj/tests/gen/test_gen.o $(O)/obj/tests/gen/test_compat.o
$(T_GEN_OBJ): CPPFLAGS += -DT_LIB_INC='"$(addprefix -Iruntime/,$(T_LIB_DIRS))"' \
	-DT_LIB_SRC='"$(foreach d,$(filter-out plugin,$(T_LIB_DIRS)),runtime/$(d)/*.c)"'
$(T_GEN_OBJ): Makefile

# The allocator is wrapped for the allocation-failure sweep
# (tests/unit/test_allocfail.c): every other test passes straight through.
ALLOC_WRAP := $(foreach f,malloc calloc realloc aligned_alloc posix_memalign strdup strndup free,-Wl,--wrap=$(f))
TIER_LDFLAGS_unit := $(ALLOC_WRAP)
# (No % in the prerequisites but the stem's: make would put the stem there.)
$(O)/test-%: $$(addprefix $(O)/obj/,$$(addsuffix .o,$$(basename $$(wildcard tests/$$*/*.c)))) $(TEST_LIB_OBJ) $(LIB_A)
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(TIER_LDFLAGS_$*) -lcriterion $(LIB_DEPS) $(LDLIBS)

# Test plugins, each broken in one way (tests/plugins/fixture.c).
FIXTURES := good tag2 dupacross noentry initfail abimajor abiminor dupwithin noforward missingdep initcrash fwdfail \
	abi10 hostpool abi15 oldabi badrecord corerecord freecore thirdparty taken never layout nolayout \
	stamped stampedother onnximp \
	flood allids initexit inithang initspin \
	nanfwd shortfwd crashfwd hostile
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
# Built for ABI 1.5, the last before the host table's memory and threads.
FIX_abi15 := -DFIX_HOST_POOL -DFIX_ABI_1_5 -DFIX_TAG=5 -DFIX_ACT_ADDS=1000
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
# ABI 1.7: the entry point's name stamps the layout (the info leaves it 0);
# stampedother's is a layout this host never had.
FIX_stamped := -DFIX_STAMP_INFO
FIX_stampedother := -DFIX_STAMP=nnn_plugin_entry_l5eed1234
# An onnx_import hook that claims too much (ABI 1.7).
FIX_onnximp := -DFIX_THIRD_PARTY -DFIX_ONNX_IMPORT
# Declarations past the host's room (tests/plugins/fixture.c).
FIX_flood := -DFIX_FLOOD
FIX_allids := -DFIX_ALL_IDS
# Wrong kernels for Dense and Linear, for the conformance runner to catch.
FIX_nanfwd := -DFIX_NAN_FORWARD -DFIX_ACT=0
FIX_shortfwd := -DFIX_SHORT_FORWARD -DFIX_ACT=0
FIX_crashfwd := -DFIX_CRASH_FORWARD -DFIX_ACT=0
# Every text it gives the host hostile (controls, bidi), for the escaping tests.
FIX_hostile := -DFIX_THIRD_PARTY -DFIX_HOSTILE
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

# A reader that forgives two problems, for the conformance runners to catch: a
# decoder (lenient FILE) or a testee (lenient --testee); libnnn.a and jansson.
$(O)/lenient: tests/tools/lenient.c $(LIB_A) $(GEN_H) $(wildcard runtime/include/nnn/*.h $(RT_DIRS:%=runtime/%/*.h))
	@echo "  CC     $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB_A) -ljansson $(LDLIBS)

# ONNX Runtime for the ONNX tests (tests/integration/test_onnx_ort.c runs
# exported models in it through tests/tools/ort_run.js): onnxruntime-node
# from the npm registry, as tests/ort/package-lock.json pins it, installed
# into $(O)/ort by `npm ci --ignore-scripts`. Offline (or without node/npm)
# the build goes on: tests/ort/install.sh says why in one line and in
# $(O)/ort/missing, and the tests that need it skip saying so. `make ort`
# tries again.
ORT_STAMP := $(O)/ort/.stamp
$(ORT_STAMP): tests/ort/package.json tests/ort/package-lock.json tests/ort/install.sh
	$(Q)tests/ort/install.sh $(O)/ort
	@touch $@
ort:
	@rm -f $(ORT_STAMP)
	$(Q)$(MAKE) --no-print-directory $(ORT_STAMP)

# What each tier needs built. It includes all of `make all`: the install
# tests run `make install` in this build folder two at a time, and must find
# nothing left to build there. test-build is what every tier needs (the
# growth drills' base tree).
TIER_DEPS := $(ALL) $(FIXTURE_SO) $(O)/lenient
# tests/integration/test_shares.c reads the other tiers' lists of tests.
TIER_DEPS_integration := $(ORT_STAMP) $(O)/test-unit $(O)/test-gen $(O)/test-cli
test-build: $(TIER_DEPS) $(TEST_BINS) $(ORT_STAMP)

# The suite's plugin scans are cached in the build folder, never in ~/.cache,
# and may take up to two minutes: on a loaded machine under ASan or valgrind a
# scan can pass the 5 s default, which would fail plugins that are fine (the
# tests of hanging plugins set their own limit). The makes that tests run
# (install, SDK, example plugins) are their own, not sub-makes of this one:
# under `make -j2 test` they would inherit a jobserver they cannot reach and
# print a warning into the output the test compares.
SUITE_ENV := NNNKIT=$(abspath $(NNNKIT)) NNN_BUILD=$(abspath $(O)) NNN_PLUGIN_CACHE=$(abspath $(O))/plugin-scan.cache \
	NNN_PLUGIN_SCAN_TIMEOUT_MS=120000 MAKEFLAGS= MAKELEVEL= MFLAGS=
# TEST_ARGS passes more Criterion options, e.g. TEST_ARGS='--filter npy/*'.

# Shares: the runs that repeat a tier (under ASan or valgrind, or on the
# growth drills' tree) take one share of its tests per commit, not all of
# them: tests/share.sh deals the tier's tests to shares 0 .. COUNT-1 by
# their measured times (tests/share-weights.tsv: every share costs about
# the same), and the share is SHARE_SEED (the number of commits on HEAD)
# modulo COUNT, so every test runs in each of those runs at least every
# COUNT-th commit while the tier's tests stay the same, and the plain run
# (`make test`) takes them all on every commit. `make valgrind
# SHARE_SEED=1` picks a share by hand; the weights: share-weights below.
SHARE_SEED ?= $(shell git rev-list --count HEAD 2>/dev/null || echo 0)
TEST_ARGS ?=
# The gen tier's cases that only run Lua (a schema the generator must
# refuse, and how) run in one lua5.4 process: tests/gen/schema_errors.lua,
# after the Criterion program whether or not it passed; not when TEST_ARGS
# picks Criterion tests.
TIER_LUA_gen := tests/gen/schema_errors.lua
$(TEST_TIERS:%=test-%): test-%: $(O)/test-% $(TIER_DEPS) $$(TIER_DEPS_$$*)
	@mkdir -p $(REPORTS)
	rc=0; $(SUITE_ENV) $(O)/test-$* --jobs 2 --xml=$(REPORTS)/$*.xml $(TEST_ARGS) || rc=$$?; \
	$(if $(TIER_LUA_$*),$(if $(TEST_ARGS),,$(LUA) $(TIER_LUA_$*) --junit $(REPORTS)/$(basename $(notdir $(TIER_LUA_$*))).xml || rc=1;)) \
	exit $$rc

# The Python package's tests (tests/python) and the conformance kit's
# (tests/kit: its runner, and every shipped testee scored on the kit), with
# pytest against this build tree, with Debian's Python (numpy, pytest:
# scripts/deps.sh); no byte code or pytest cache is left in the tree.
# PYTEST_ARGS passes more pytest options (the drills' suite leaves out the
# install tests: tests/drills/suite.sh).
PYTHON := /usr/bin/python3
test-python: $(ALL) $(O)/lenient
	@mkdir -p $(REPORTS)
	$(SUITE_ENV) PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pytest -q -p no:cacheprovider \
		--junitxml=$(REPORTS)/python.xml $(PYTEST_ARGS) tests/python tests/kit

# The C# target's tests (tests/csharp), NUnit 2.6 (Debian's nunit-console and
# libnunit-cil-dev: scripts/deps.sh), against this build tree: one assembly,
# $(O)/csharp/Nnn.Tests.dll, referencing Nnn.dll and nnn-cs.exe, its report
# NUnit's XML (tests/times.py reads it too). The tests find the build and the
# sources through the environment: NNN_BUILD, NNN_ROOT, NNN_SHARED (the
# real files, ../shared beside the tree), NNN_CS_MCS (the build's compiler
# and flags, for the Unity-safety check's own tests). NUNIT_ARGS passes more
# nunit-console options (NUNIT_ARGS=-run=Nnn.Tests.TesteeTests).
NUNIT_FW ?= $(firstword $(wildcard /usr/lib/cli/nunit.framework-2.6*/nunit.framework.dll))
CS_TESTS := $(CS_O)/Nnn.Tests.dll
CS_TEST_SRC := $(sort $(wildcard tests/csharp/*.cs))
NUNIT_ARGS ?=
# The example plugin in C# (tests/csharp/PluginTests.cs): nnngen's class for
# its fragment, compiled as a program would ship it (Nnn.Poolswish.dll beside
# Nnn.dll, where the tests' assembly finds it) and held to Unity-safety as
# the runtime is; and the fragment's conformance corpus (decode and validate
# need no --reference: the cases it cannot run get run: null).
CS_PLUGIN_FRAG := examples/plugin-pool-swish/schema.lua
CS_PLUGIN_SRC := $(CS_O)/plugin/Poolswish.g.cs
CS_PLUGIN_DLL := $(CS_O)/Nnn.Poolswish.dll
CS_PLUGIN_CORPUS := $(CS_O)/plugin/conformance
$(CS_PLUGIN_SRC): $(CS_PLUGIN_FRAG) $(SCHEMA) $(GEN_LUA) | deps $(CS_O)/.stamp
	@mkdir -p $(@D)
	@echo "  GEN    $@"
	$(Q)$(LUA) gen/nnngen.lua --plugin $(CS_PLUGIN_FRAG) --lang cs --cs $@
	@touch $@ # nnngen leaves an unchanged file as it was
$(CS_PLUGIN_DLL): $(CS_PLUGIN_SRC) $(CS_DLL)
	@echo "  MCS    $@"
	$(Q)$(CS_CHECK) --ref $(CS_DLL) $<
	$(Q)$(MCS) $(CS_FLAGS) -target:library -r:$(CS_DLL) -out:$@ $<
$(CS_PLUGIN_CORPUS)/manifest.json: $(CS_PLUGIN_FRAG) $(SCHEMA) $(GEN_LUA) | deps $(O)/gen/.stamp
	@echo "  GEN    $(CS_PLUGIN_CORPUS)"
	$(Q)rm -rf $(CS_PLUGIN_CORPUS)
	$(Q)$(LUA) gen/nnngen.lua --plugin $(CS_PLUGIN_FRAG) --conformance $(CS_PLUGIN_CORPUS) --kit-version $(VERSION)
$(CS_TESTS): $(CS_TEST_SRC) $(CS_DLL) $(CS_EXE) $(CS_PLUGIN_DLL)
	@test -n "$(NUNIT_FW)" || { echo "test-csharp: NUnit 2.6 is not installed (scripts/deps.sh: libnunit-cil-dev)" >&2; exit 2; }
	@echo "  MCS    $@"
	$(Q)$(MCS) -langversion:7.2 -warnaserror+ -nologo -target:library -r:$(CS_DLL) -r:$(CS_EXE) -r:$(CS_PLUGIN_DLL) \
		-r:$(NUNIT_FW) -r:System.Json -out:$@ $(CS_TEST_SRC)
test-csharp: check-csharp $(ALL) $(CS_TESTS) $(CONFORMANCE)/manifest.json $(CS_PLUGIN_CORPUS)/manifest.json
	@mkdir -p $(REPORTS)
	$(SUITE_ENV) NNN_ROOT=$(abspath .) NNN_SHARED=$(abspath ../shared) NNN_CS_MCS="$(MCS) $(CS_FLAGS)" \
		nunit-console -nologo -noshadow -labels -xml=$(REPORTS)/csharp.xml $(NUNIT_ARGS) $(CS_TESTS)

# Every tier runs, one after another (each uses both cores), even after one
# fails: the summary names each tier's result, and make fails at the end.
# The cli tier writes into the real /dev/null with every command
# (outputs/dev_null_survives_every_command): it must still be the null
# device after the suite, not a file that replaced it.
TEST_RUN := $(TEST_TIERS) $(if $(NO_PYTHON),,python) csharp
test: check-gen check-compat test-build
	@failed=; for t in $(TEST_RUN); do \
		$(MAKE) --no-print-directory test-$$t || failed="$$failed $$t"; done; \
	if [ "$$(stat -c %F:%t:%T /dev/null)" != "character special file:1:3" ]; then \
		echo "test: /dev/null is no longer the null device: $$(stat -c '%F %t:%T' /dev/null)" >&2; \
		failed="$$failed /dev/null"; fi; \
	if [ -n "$$failed" ]; then echo "test: FAILED:$$failed" >&2; exit 1; fi; \
	echo "test: passed: $(TEST_RUN)"

# The slowest tests of the last runs, from the reports above.
test-times:
	$(Q)$(PYTHON) tests/times.py $(REPORTS)/*.xml
# The shares' weights (tests/share.sh): share-weights from the last plain
# run's reports (make test), share-weights-valgrind by running every
# valgrind share (about 15 minutes).
share-weights:
	$(Q)$(PYTHON) tests/times.py --weights tests/share-weights.tsv $(TEST_TIERS:%=$(REPORTS)/%.xml)
# The shares measured are dealt by the plain weights (VG_WEIGHTS), which
# stay the same while they run: dealt by the file being rewritten, each run
# would deal its shares anew and miss tests.
share-weights-valgrind:
	$(Q)rm -rf $(REPORTS)/vg-shares && mkdir -p $(REPORTS)/vg-shares && \
	for s in $$(seq 0 $$(($(VG_SHARES) - 1))); do $(MAKE) --no-print-directory valgrind SHARE_SEED=$$s VG_WEIGHTS=plain && \
		for t in $(VG_TIERS); do cp $(REPORTS)/valgrind-$$t.xml $(REPORTS)/vg-shares/valgrind-$$t.$$s.xml; done || exit 1; done && \
	for s in $$(seq 0 $$(($(VG_SHARES) - 1))); do for t in $(VG_TIERS); do \
		cp $(REPORTS)/vg-shares/valgrind-$$t.$$s.xml $(REPORTS)/vg-shares/valgrind-$$t.xml && \
		$(PYTHON) tests/times.py --weights tests/share-weights.tsv $(REPORTS)/vg-shares/valgrind-$$t.xml || exit 1; done; done

# ---- growth drills: each growth of the schema in a copy of the built tree:
# built incrementally, locked and checked through the CLI; then the tiers a
# growth can affect, once, on every compatible growth together; each kind
# of breaking change refused (tests/drills/run.sh, docs/growing-the-format.md) ----
drills: | deps
	tests/drills/run.sh $(DRILLS)

# ---- the sanitizer tree: one clang build with ASan and UBSan, its objects
# also instrumented for libFuzzer, serves test-asan and the fuzzers
# (fuzz/Makefile.inc links the harnesses against its libnnn.a and loads its
# builtin plugin). clang ignores `#pragma GCC target`, so its plugins are
# built for this machine (-march=native); the tree is never installed. The
# sanitizer runtimes live in the programs that load a plugin: no
# --no-undefined there. Python is not run on it: python3 cannot load a
# libnnn built with ASan without preloading its runtime. clang warns of
# what gcc does not: an option table's `{ NULL }` end (missing fields) and
# the GCC pragmas it ignores; both stay on in the plain build. Its kernels
# are built without forced unrolling (BI_NO_UNROLL, plugins/builtin/builtin.h:
# under UBSan the unrolled bodies took Clang 5 of the tree's 7.5 CPU
# minutes). ----
SAN_O := build/san
SANITIZE := -fsanitize=address,undefined
SAN_VARS := O=$(SAN_O) CC=clang NO_PYTHON=1 \
	OPT="-O1 -g $(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all -fsanitize=fuzzer-no-link" \
	LDLIBS="-lm $(SANITIZE)" PLUGIN_CFLAGS="-fvisibility=hidden -march=native -DBI_NO_UNROLL" PLUGIN_LDFLAGS= \
	WARN_CC="-Wno-missing-field-initializers -Wno-unknown-pragmas"
# Each tier runs here in shares (above), so that the stage keeps to CI's
# budget as the tiers grow: unit and gen in halves, cli (its hundreds of
# nnnkit processes make it the longest) in quarters; every test runs under
# ASan+UBSan at least every second (cli: fourth) commit.
SAN_TIERS := unit gen cli
SAN_SHARES_unit := 2
SAN_SHARES_gen := 2
SAN_SHARES_cli := 4
san-build:
	$(Q)$(MAKE) --no-print-directory $(SAN_VARS) san-tiers-build
san-tiers-build: $(TIER_DEPS) $(SAN_TIERS:%=$(O)/test-%)
test-asan: san-build
	@failed=; for tn in $(foreach t,$(SAN_TIERS),$(t):$(or $(SAN_SHARES_$(t)),1)); do \
		t=$${tn%:*} n=$${tn#*:} args=; [ $$n = 1 ] || { args="--filter '$$(tests/share.sh $(SAN_O)/test-$$t $$(($(SHARE_SEED) % $$n)) $$n)'" && \
			echo "test-asan: $$t, share $$(($(SHARE_SEED) % $$n)) of $$n"; } || exit 2; \
		LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) NNN_SANITIZE="$(SANITIZE)" \
		$(MAKE) --no-print-directory $(SAN_VARS) test-$$t TEST_ARGS="$$args" || failed="$$failed $$t"; done; \
	if [ -n "$$failed" ]; then echo "test-asan: FAILED:$$failed" >&2; exit 1; fi

# ---- valgrind: what ASan cannot see (uninitialised reads, leaks in the
# plain build). One share in four of each in-process tier's tests (unit,
# gen: shares above) runs under memcheck, so every test does at least
# every fourth commit: each test is a process of its own, and valgrind's
# start-up in each (about 1 s of CPU: Criterion's worker loads 25 shared
# libraries) is most of the time: a share of 240 unit tests whose bodies
# took 48 s ran for 260 s.
# Integration runs once per CI, plainly: it builds with cc and make, which
# valgrind does not trace. The cli tier is black-box: its work is done by
# the nnnkit processes it starts, which valgrind does not trace (traced,
# they were most of the run's time); the CLI runs under memcheck in
# valgrind-cli, and the cli tier against an ASan+UBSan nnnkit in test-asan.
#
# Every process the suite starts is traced but nnnkit and the shells and
# tools around it. Each process logs to $(O)/valgrind/PID.log;
# tests/valgrind-logs.sh fails on any error or leak there, a test's forked
# process's included. ----
VG_TIERS := unit gen
VG_SHARES := 4
VG_WEIGHTS := valgrind
VG_SKIP := */nnnkit,*/sh,*/dash,*/bash,*/lua5.4,*/script,*/node,*/npm,*/cat,*/timeout,*/chromium*,*/python3*,*/ls,*/tr,*/stat,*/ln,*/chmod,*/cc,*/gcc*,*/clang*,*/cc1,*/collect2,*/ld,*/as,*/make,*/nm,*/ldd,*/sha256sum,*/find,*/xargs,*/cmp,*/cp,*/rm,*/awk,*/sort,*/mkdir
VALGRIND := valgrind --error-exitcode=9 --leak-check=full --suppressions=$(abspath tests/valgrind.supp) \
	--errors-for-leak-kinds=definite,indirect --show-possibly-lost=no --trace-children=yes \
	--trace-children-skip='$(VG_SKIP)' --log-file=$(abspath $(O))/valgrind/%p.log -q
valgrind: $(TIER_DEPS) $(VG_TIERS:%=$(O)/test-%)
	@rm -rf $(O)/valgrind && mkdir -p $(O)/valgrind $(REPORTS)
	rc=0; for t in $(VG_TIERS); do \
		f=$$(tests/share.sh --weights $(VG_WEIGHTS) $(O)/test-$$t $$(($(SHARE_SEED) % $(VG_SHARES))) $(VG_SHARES)) || exit 2; \
		echo "valgrind: $$t, share $$(($(SHARE_SEED) % $(VG_SHARES))) of $(VG_SHARES)"; \
		$(SUITE_ENV) $(VALGRIND) $(O)/test-$$t --jobs 2 --filter "$$f" --xml=$(REPORTS)/valgrind-$$t.xml || rc=$$?; \
	done; tests/valgrind-logs.sh $(O)/valgrind && exit $$rc

# The CLI under valgrind: the conformance corpus (in process), `dump` over a
# third of the valid cases (shares above), and every command on the example
# model (the conversions on a smaller one of its kinds), good and bad.
valgrind-cli: $(NNNKIT) $(PLUGINS) $(O)/mkexample $(CONFORMANCE)/manifest.json
	SHARE_SEED=$(SHARE_SEED) tests/valgrind-cli.sh $(O) $(CONFORMANCE)

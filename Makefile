# nnnkit: one non-recursive Makefile. `make` builds everything into build/.
# This file is the product's build; the rest comes in by job:
#   tests/tests.mk     make test (and each tier), test-asan, valgrind, drills
#   scripts/install.mk make install, make uninstall
#   bench/bench.mk     make bench
#   fuzz/Makefile.inc  make fuzz
#   make            library, CLI, plugins, docs, the conformance corpus
#   make example    set up, build, write and inspect the example model
#   make check-gen  regenerate and prove the output is byte-identical
#   make csharp     the C# assembly, its tool and its Unity package (build/csharp)

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
# WARN_CC: warnings one compiler needs off (the sanitizer tree's clang: tests/tests.mk).
WARN_CC ?=
CFLAGS  += $(OPT) $(WARN) $(WARN_CC) -fPIC
# libnnn's sources by job, a folder each (docs/architecture.md): one -I per
# folder, so an internal header is included by its name alone. Only libnnn
# (and the tests) see them: the CLI and plugins get none (CLI_OBJ, PLUGIN_CPPFLAGS).
RT_DIRS := base codec file shape exec formats formats/onnx plugin
RT_INC  := $(addprefix -Iruntime/,$(RT_DIRS)) -I$(O)/gen/onnx
CPPFLAGS += -Iruntime/include -I$(O)/gen $(RT_INC) -MMD -MP
LDLIBS  += -lm

SCHEMA  := schema/nnn.lua
# The generated reference goes to docs/ for the tree's own schema only: a
# build from a schema copy (make SCHEMA=... O=...) writes it under $(O)/docs
# and leaves the tree alone.
DOCDIR  := $(if $(filter schema/nnn.lua,$(SCHEMA)),docs,$(O)/docs)
# The schema's lock: the IDs and layouts files use, and the struct layouts
# plugins were built against (docs/growing-the-format.md, docs/plugins.md).
LOCK    := schema/nnn.lock
# gen/ by job: nnngen.lua, then schema/, emit/<language>/, lock/, corpus/.
GEN_LUA := $(sort $(wildcard gen/*.lua gen/*/*.lua gen/*/*/*.lua))
GEN_C   := $(O)/gen/schema_gen.c
GEN_H   := $(O)/gen/nnn/schema_gen.h
# Written beside GEN_H, which includes it: the records alone, no function
# (what <nnn/plugin.h> includes).
GEN_RH  := $(O)/gen/nnn/records_gen.h
DOC     := $(DOCDIR)/format.md
# The schema language reference, rendered from gen/schema/lang.lua.
LANG_DOC := $(DOCDIR)/schema-language.md

# Every folder of RT_DIRS but formats/onnx (ONNX_SRC, below). runtime/plugin:
# the plugin registry, loader and discovery, a job a file; scanner.c is the
# scanner's program, not libnnn's.
LIB_SRC := $(filter-out runtime/plugin/scanner.c,$(foreach d,$(filter-out formats/onnx,$(RT_DIRS)),$(wildcard runtime/$(d)/*.c)))
# ONNX export and import (runtime/formats/onnx/) read and write protobuf
# through C that protoc-c generates at build time from the onnx.proto
# Debian's libonnx-dev installs; nothing generated is committed.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
ONNX_PB  := $(O)/gen/onnx/onnx.pb-c
ONNX_SRC := $(wildcard runtime/formats/onnx/*.c)
ONNX_OBJ := $(ONNX_SRC:%.c=$(O)/obj/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/obj/%.o) $(O)/obj/gen/schema_gen.o $(ONNX_OBJ) $(O)/obj/gen/onnx.pb-c.o
# libnnn.so exports only what a public header declares with NNN_API
# (nnn/api.h): a function declared anywhere else stays inside the library.
# tests/integration/test_exports.c holds it to that.
$(LIB_OBJ): CFLAGS += -fvisibility=hidden
# What a program linking libnnn.a needs besides it.
LIB_DEPS := -ljansson -lprotobuf-c
CLI_SRC := $(wildcard runtime/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/obj/%.o)
# nnnkit is built as any program outside libnnn is: it sees the public
# headers only (runtime/include and the generated <nnn/schema_gen.h> under
# $(O)/gen, no folder of RT_DIRS), and links LIB_PUB, libnnn's objects as one
# with every symbol no public header declares NNN_API made local, so an
# internal header or function used in runtime/cli/ fails the build. What the
# CLI needs of libnnn becomes public API.
$(CLI_OBJ): CPPFLAGS := $(filter-out $(RT_INC),$(CPPFLAGS))
LIB_PUB := $(O)/obj/libnnn-public.o
BENCH_SRC := $(wildcard bench/*.c)
PLUGINS := $(patsubst plugins/%/,$(O)/plugins/%.so,$(wildcard plugins/*/))
# Plugins export only their entry point and never link libnnn: they see the
# public headers only (no folder of RT_DIRS), as a third party's plugin does.
PLUGIN_CPPFLAGS = $(filter-out $(RT_INC),$(CPPFLAGS))
PLUGIN_CFLAGS := -fvisibility=hidden
PLUGIN_LDFLAGS := -Wl,--no-undefined
PLUGIN_LIBS := -lm

NNNKIT  := $(O)/nnnkit
# Loads each plugin candidate in a child process first (runtime/plugin/discover.c).
SCANNER := $(O)/nnn-plugin-scan
LIB_A   := $(O)/libnnn.a
# The shared library's soname changes with every incompatible change of its ABI
# (1: nnn_diag_t gained line and column).
SOVERSION := 1
LIB_SO  := $(O)/libnnn.so.$(SOVERSION)
EXAMPLE := $(O)/example.nnn
# The conformance kit's tarball (below).
KIT_NAME := nnn-conformance-$(VERSION)
KIT     := $(O)/$(KIT_NAME).tar.gz

# ---- the C# target (docs/csharp.md): Nnn.dll from the hand-written runtime
# (csharp/Runtime) and the C# nnngen writes from the schema and from the
# status codes' header; nnn-cs.exe, the tool over it; and the Unity package
# (package.json, Runtime/ with the generated files, the asmdef). No .meta
# files: Unity writes them into a package copied into Packages/ (docs/csharp.md). ----
MCS     ?= mcs
CS_O    := $(O)/csharp
# C# 7.2 is what Unity's oldest supported compilers take; warnings are errors.
# No -unsafe: unsafe code does not compile. -noconfig: no assembly but the
# base class library's core (mscorlib, System, System.Core: HashSet lives in
# System.Core under Mono's 4.x profile); check-csharp checks the namespaces.
CS_FLAGS := -langversion:7.2 -warnaserror+ -nologo -noconfig -r:System.dll -r:System.Core.dll
CS_SCHEMA := $(CS_O)/Schema.g.cs
CS_STATUS := $(CS_O)/Status.g.cs
CS_GEN  := $(CS_SCHEMA) $(CS_STATUS)
CS_RT   := $(sort $(wildcard csharp/Runtime/*.cs))
CS_TOOL_SRC := $(sort $(wildcard csharp/Tool/*.cs))
CS_VERSION := $(CS_O)/Version.g.cs
# The one file allowed System.Runtime.InteropServices (check-csharp).
CS_NATIVE := csharp/Runtime/Native.cs
STATUS_H := runtime/include/nnn/status_codes.h
CS_DLL  := $(CS_O)/Nnn.dll
CS_EXE  := $(CS_O)/nnn-cs.exe
CS_PKG  := $(CS_O)/package
# Mono's map from Native's library name to this build's libnnn (make install
# writes one naming the prefix's): the tool and the tests run models with no
# LD_LIBRARY_PATH. Unity and .NET do not read it.
CS_DLLMAP := $(CS_DLL).config
CS_ALL  := $(CS_DLL) $(CS_EXE) $(CS_DLLMAP) $(CS_O)/package.stamp

# Keep intermediate objects (plugin and fixture objects) between runs.
.SECONDARY:
# A half-written target (a failed link) is removed, never taken as built.
.DELETE_ON_ERROR:
.PHONY: all deps example test test-python test-asan valgrind valgrind-cli bench bench-grown check-gen check-compat lock clean install uninstall \
	conformance conformance-kit drills test-build ort test-times share-weights share-weights-valgrind san-build san-tiers-build wheel $(TEST_TIERS:%=test-%) \
	csharp check-csharp test-csharp
.DEFAULT_GOAL := all

# The conformance corpus too: `nnnkit conformance` finds it beside build/nnnkit,
# and make install installs it; the C# target too (mono-devel is one of the
# build's packages: scripts/deps.sh). The plugins come first: their kernels take
# the longest to compile (AVX-512's line kernel most, with the sanitizers),
# so that under -j2 they start early and the rest is built beside them.
ALL := $(PLUGINS) $(NNNKIT) $(SCANNER) $(LIB_SO) $(DOC) $(LANG_DOC) $(O)/mkexample $(O)/nnnkit.1 $(O)/nnngen.1 \
	$(O)/nnnkit.bash $(O)/conformance/manifest.json $(KIT) $(CS_ALL)
all: $(ALL)

# Installs the Debian packages the build and tests need, when missing.
deps:
	@scripts/deps.sh

# ---- generated codec ----
# nnngen first checks the schema against the lock, as make check-compat does
# (--compat): a schema that would break files written under it stops the
# build here, with check-compat's lines, before anything is generated or
# compiled (docs/growing-the-format.md, "Breaking changes").
# nnngen rewrites a generated file only when its bytes change, and the stamp
# records that it ran. The generated files' own rule has a recipe (a no-op)
# so that make looks at their times again after the stamp's recipe: what
# depends on them is rebuilt in the same pass, under -j too, and only when
# their bytes changed (a doc edit rebuilds schema_gen.o, not every object).
$(O)/gen/.stamp: $(SCHEMA) $(GEN_LUA) $(LOCK) | deps
	@mkdir -p $(O)/gen/nnn $(DOCDIR)
	@echo "  GEN    $@"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --c $(GEN_C) --h $(GEN_H) --doc $(DOC) --lang-doc $(LANG_DOC) --layouts $(LOCK) \
		--compat $(LOCK)
	@touch $@
$(GEN_C) $(GEN_H) $(GEN_RH) $(DOC) $(LANG_DOC): $(O)/gen/.stamp
	@:

check-gen: $(O)/gen/.stamp $(CS_O)/.stamp
	@mkdir -p $(O)/regen/nnn
	@echo "  GEN    $@"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --c $(O)/regen/schema_gen.c --h $(O)/regen/nnn/schema_gen.h \
		--doc $(O)/regen/format.md --lang-doc $(O)/regen/schema-language.md --layouts $(LOCK) --compat $(LOCK)
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --lang cs --cs $(O)/regen/Schema.g.cs
	$(Q)$(LUA) gen/nnngen.lua --cs-status $(STATUS_H) --cs $(O)/regen/Status.g.cs
	cmp $(GEN_C) $(O)/regen/schema_gen.c
	cmp $(GEN_H) $(O)/regen/nnn/schema_gen.h
	cmp $(GEN_RH) $(O)/regen/nnn/records_gen.h
	cmp $(DOC) $(O)/regen/format.md
	cmp $(LANG_DOC) $(O)/regen/schema-language.md
	cmp $(CS_SCHEMA) $(O)/regen/Schema.g.cs
	cmp $(CS_STATUS) $(O)/regen/Status.g.cs
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
$(LIB_PUB): $(LIB_OBJ)
	@echo "  LD     $@"
	$(Q)$(CC) -nostdlib -r -o $@.tmp $^
	$(Q)objcopy --localize-hidden $@.tmp $@
	@rm -f $@.tmp
$(LIB_SO): $(LIB_OBJ)
	@echo "  CC     $@"
	$(Q)$(CC) -shared -Wl,-soname,libnnn.so.$(SOVERSION) -o $@ $^ $(LIB_DEPS) $(LDLIBS)

$(O)/obj/runtime/cli/main.o: CPPFLAGS += -DNNNKIT_VERSION='"$(VERSION)"'
# The scanner refuses to speak for another version (its cache key has it too).
$(O)/obj/runtime/plugin/%.o: CPPFLAGS += -DNNN_VERSION='"$(VERSION)"'
$(O)/obj/runtime/formats/onnx/export.o: CPPFLAGS += -DNNN_VERSION='"$(VERSION)"'
# nnnkit needs its scanner to load any plugin: built with it.
$(NNNKIT): $(CLI_OBJ) $(LIB_PUB) | $(SCANNER)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(LIB_PUB) $(LIB_DEPS) $(LDLIBS)
$(SCANNER): $(O)/obj/runtime/plugin/scanner.o $(LIB_A)
	@echo "  CC     $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LIB_A) $(LDLIBS)

# One folder under plugins/ per plugin, one .so per folder.
.SECONDEXPANSION:
$(O)/plugins/%.so: $$(addprefix $(O)/obj/,$$(addsuffix .o,$$(basename $$(wildcard plugins/$$*/*.c))))
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) -shared $(PLUGIN_LDFLAGS) -o $@ $^ $(PLUGIN_LIBS) $(filter -fsanitize=%,$(LDLIBS))
$(O)/obj/plugins/%.o: plugins/%.c | $(GEN_H)
	@mkdir -p $(@D)
	@echo "  CC     $@"
	$(Q)$(CC) $(PLUGIN_CPPFLAGS) $(CFLAGS) $(PLUGIN_CFLAGS) -c $< -o $@

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

# ---- the Python wheel: the package carrying libnnn, its plugin scanner and the
# builtin plugin (scripts/wheel.py; docs/python.md, "Installing") ----
wheel: $(LIB_SO) $(SCANNER) $(PLUGINS)
	@echo "  WHEEL  $(O)/nnnkit-$(VERSION)-py3-none-*.whl"
	$(Q)$(PYTHON) scripts/wheel.py $(O) $(VERSION) $(LIB_SO) $(SCANNER) $(PLUGINS) >/dev/null

# ---- the C# target (docs/csharp.md: the variables above) ----
csharp: $(CS_ALL)

# As the C codec: nnngen runs after the codec's step (which refuses a
# breaking schema first) and rewrites a file only when its bytes change;
# the stamp records that it ran.
$(CS_O)/.stamp: $(SCHEMA) $(GEN_LUA) $(LOCK) $(STATUS_H) | deps $(O)/gen/.stamp
	@mkdir -p $(CS_O)
	@echo "  GEN    $(CS_GEN)"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --lang cs --cs $(CS_SCHEMA)
	$(Q)$(LUA) gen/nnngen.lua --cs-status $(STATUS_H) --cs $(CS_STATUS)
	@touch $@
$(CS_GEN): $(CS_O)/.stamp
	@:
$(CS_DLL): $(CS_RT) $(CS_GEN) | deps
	@echo "  MCS    $@"
	$(Q)$(MCS) $(CS_FLAGS) -target:library -out:$@ $(CS_RT) $(CS_GEN)
$(CS_EXE): $(CS_TOOL_SRC) $(CS_VERSION) $(CS_DLL)
	@echo "  MCS    $@"
	$(Q)$(MCS) $(CS_FLAGS) -target:exe -r:$(CS_DLL) -out:$@ $(CS_TOOL_SRC) $(CS_VERSION)
# The tool's version (its testee's hello) is the build's.
$(CS_VERSION): Makefile
	@mkdir -p $(@D)
	$(Q)printf '// Generated by the Makefile: the version nnn-cs.exe reports.\nnamespace Nnn.Tool\n{\n    static partial class NnnCs\n    {\n        internal const string Version = "%s";\n    }\n}\n' \
		'$(VERSION)' > $@.tmp && mv $@.tmp $@
# Mono takes a relative target from the assembly's folder: the build's
# library beside it, whatever the tree is called (the drills' copies of the
# tree run their own libnnn, not the tree they were copied from).
$(CS_DLLMAP): Makefile
	@mkdir -p $(@D)
	$(Q)printf '<configuration>\n  <dllmap dll="nnn" target="../%s"/>\n</configuration>\n' '$(notdir $(LIB_SO))' > $@.tmp && mv $@.tmp $@
# The package is made afresh in a folder beside it, then swapped in: a file
# removed from csharp/Runtime leaves it too. package.json takes the version.
$(CS_O)/package.stamp: csharp/package.json csharp/Runtime/Nnn.asmdef csharp/README.md $(CS_RT) $(CS_GEN)
	@echo "  PKG    $(CS_PKG)"
	$(Q)rm -rf $(CS_PKG).new && mkdir -p $(CS_PKG).new/Runtime
	$(Q)sed 's/@VERSION@/$(VERSION)/' csharp/package.json > $(CS_PKG).new/package.json
	$(Q)cp csharp/README.md $(CS_PKG).new/README.md
	$(Q)cp csharp/Runtime/Nnn.asmdef $(CS_RT) $(CS_GEN) $(CS_PKG).new/Runtime/
	$(Q)rm -rf $(CS_PKG) && mv $(CS_PKG).new $(CS_PKG)
	@touch $@

# Unity-safety (docs/csharp.md, "Unity-safe"): the runtime, the generated
# sources and the tool, compiled at C# 7.2, use nothing outside the allowed
# namespaces (scripts/check-csharp.lua reads the sources and the compiled
# assembly's type references).
CS_CHECK = $(LUA) scripts/check-csharp.lua --mcs "$(MCS) $(CS_FLAGS)" --interop $(CS_NATIVE)
check-csharp: $(CS_DLL) $(CS_VERSION) | deps
	$(Q)$(CS_CHECK) $(CS_RT) $(CS_GEN)
	$(Q)$(CS_CHECK) --ref $(CS_DLL) $(CS_TOOL_SRC) $(CS_VERSION)
	@echo "check-csharp: the runtime, the generated code and the tool are Unity-safe"

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
# After the codec's step (which refuses a breaking schema first), never beside it.
$(CONFORMANCE)/manifest.json: $(SCHEMA) $(GEN_LUA) $(LOCK) | deps $(O)/gen/.stamp
	@echo "  GEN    $(CONFORMANCE)"
	$(Q)$(LUA) gen/nnngen.lua $(SCHEMA) --conformance $(CONFORMANCE) --compat $(LOCK) --kit-version $(VERSION)

# ---- the conformance kit: the corpus, its runner and README, one tarball ----
# Unpacks anywhere and runs with python3 and NumPy alone (docs/conformance.md).
# Deterministic: names sorted, times and owners fixed, gzip without a name or
# date, so the same schema gives the same bytes.
KIT_FILES := conformance/nnn_conformance.py conformance/README.md
conformance-kit: $(KIT)
$(KIT): $(CONFORMANCE)/manifest.json $(KIT_FILES)
	@echo "  KIT    $@"
	$(Q)rm -rf $(O)/kit && mkdir -p $(O)/kit/$(KIT_NAME) && cp -R $(CONFORMANCE)/. $(KIT_FILES) $(O)/kit/$(KIT_NAME)/
	$(Q)tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=go-w -C $(O)/kit -cf - $(KIT_NAME) \
		| gzip -n -9 > $@.tmp && mv $@.tmp $@

clean:
	rm -rf build

include tests/tests.mk
include scripts/install.mk
include bench/bench.mk
# libFuzzer harnesses: make fuzz [FUZZ_SECONDS=60] (fuzz/Makefile.inc).
include fuzz/Makefile.inc

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

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


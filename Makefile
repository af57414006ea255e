# nnnkit: one non-recursive Makefile. `make` builds everything into build/.
#   make            library, CLI, example tools
#   make example    set up, build, write and inspect the example model
#   make test       set up, build and run the Criterion suite
#   make test-asan  the suite under AddressSanitizer and UBSan
#   make valgrind   the suite under valgrind (memcheck, leaks are errors)
#   make bench      codec benchmarks (prints a table)
#   make check-gen  regenerate and prove the output is byte-identical

CC      ?= cc
LUA     ?= lua5.4
O       ?= build
OPT     ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wvla
CFLAGS  += $(OPT) $(WARN) -fPIC -fvisibility=default
CPPFLAGS += -Iruntime/include -I$(O)/gen -Iruntime/src -MMD -MP
LDLIBS  += -lm

SCHEMA  := schema/nnn.lua
GEN_LUA := $(wildcard gen/*.lua)
GEN_C   := $(O)/gen/schema_gen.c
GEN_H   := $(O)/gen/nnn/schema_gen.h
DOC     := docs/format.md

LIB_SRC := $(wildcard runtime/src/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/obj/%.o) $(O)/obj/gen/schema_gen.o
CLI_SRC := $(wildcard runtime/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/obj/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/obj/%.o)
BENCH_SRC := $(wildcard bench/*.c)
PLUGINS := $(patsubst plugins/%/,$(O)/plugins/%.so,$(wildcard plugins/*/))
# Plugins export only their entry point and never link libnnn.
PLUGIN_CFLAGS := -fvisibility=hidden
PLUGIN_LIBS := -lopenblas -lm

NNNKIT  := $(O)/nnnkit
LIB_A   := $(O)/libnnn.a
LIB_SO  := $(O)/libnnn.so.0
TESTBIN := $(O)/test_nnn
EXAMPLE := $(O)/example.nnn

.PHONY: all deps example test test-asan valgrind bench check-gen clean
.DEFAULT_GOAL := all

all: $(NNNKIT) $(LIB_SO) $(DOC) $(O)/mkexample $(PLUGINS)

# Installs the Debian packages the build and tests need, when missing.
deps:
	@scripts/deps.sh

# ---- generated codec ----
$(O)/gen/.stamp: $(SCHEMA) $(GEN_LUA) | deps
	@mkdir -p $(O)/gen/nnn
	$(LUA) gen/nnngen.lua $(SCHEMA) --c $(GEN_C) --h $(GEN_H) --doc $(DOC)
	@touch $@
$(GEN_C) $(GEN_H) $(DOC): $(O)/gen/.stamp

check-gen: $(O)/gen/.stamp
	@mkdir -p $(O)/regen/nnn
	$(LUA) gen/nnngen.lua $(SCHEMA) --c $(O)/regen/schema_gen.c --h $(O)/regen/nnn/schema_gen.h \
		--doc $(O)/regen/format.md
	cmp $(GEN_C) $(O)/regen/schema_gen.c
	cmp $(GEN_H) $(O)/regen/nnn/schema_gen.h
	cmp $(DOC) $(O)/regen/format.md
	@echo "check-gen: generated files are byte-identical"

# ---- objects ----
$(O)/obj/%.o: %.c $(O)/gen/.stamp
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(O)/obj/gen/schema_gen.o: $(GEN_C)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^
$(LIB_SO): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libnnn.so.0 -o $@ $^ $(LDLIBS)

$(NNNKIT): $(CLI_OBJ) $(LIB_A)
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(LIB_A) $(LDLIBS)

# One folder under plugins/ per plugin, one .so per folder.
.SECONDEXPANSION:
$(O)/plugins/%.so: $$(patsubst %.c,$(O)/obj/%.o,$$(wildcard plugins/%/*.c))
	@mkdir -p $(@D)
	$(CC) -shared -Wl,--no-undefined -o $@ $^ $(PLUGIN_LIBS)
$(O)/obj/plugins/%.o: plugins/%.c $(O)/gen/.stamp
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PLUGIN_CFLAGS) -c $< -o $@

$(O)/mkexample: $(O)/obj/tools/mkexample.o $(LIB_A)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# ---- the example: a real job on a model the project generates ----
$(EXAMPLE): $(O)/mkexample
	$(O)/mkexample $@
example: $(NNNKIT) $(EXAMPLE)
	$(NNNKIT) info $(EXAMPLE)
	$(NNNKIT) validate --input-shape 1,28,28,1 $(EXAMPLE)

# ---- tests ----
$(TESTBIN): $(TEST_OBJ) $(LIB_A)
	$(CC) $(CFLAGS) -o $@ $(TEST_OBJ) $(LIB_A) -lcriterion $(LDLIBS)

test: $(TESTBIN) $(NNNKIT) check-gen
	NNNKIT=$(abspath $(NNNKIT)) $(TESTBIN) --jobs 2

test-asan:
	$(MAKE) O=build/asan OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDLIBS="-lm -fsanitize=address,undefined" test

valgrind: $(TESTBIN) $(NNNKIT)
	NNNKIT=$(abspath $(NNNKIT)) NNN_UNDER_VALGRIND=1 valgrind --error-exitcode=9 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-possibly-lost=no --trace-children=yes -q $(TESTBIN) --jobs 1

# ---- benchmarks ----
$(O)/bench_codec: $(BENCH_SRC:%.c=$(O)/obj/%.o) $(LIB_A)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
bench: $(O)/bench_codec
	$(O)/bench_codec

clean:
	rm -rf build

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

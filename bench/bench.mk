# bench/bench.mk: make bench, included by the Makefile.

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
# The narrow section's tree: a copy with the growths of the drills dense-f16
# and dense-i8 (DenseF16, DenseI8), whose nnnbench, nnnkit and builtin plugin
# it runs; bench/grow.sh keeps it in $(O)/bench-grown and rebuilds only what
# changed (make bench-grown alone builds it).
BENCH_GROWN := $(abspath $(O))/bench-grown
bench-grown: $(NNNKIT) $(PLUGINS)
	$(Q)SEED=$(O) bench/grow.sh $(BENCH_GROWN) dense-f16 dense-i8
bench: $(O)/nnnbench $(BENCHES) $(NNNKIT) $(PLUGINS) $(O)/mkexample $(ORT_STAMP) bench-grown
	@scripts/deps.sh --bench || true
	$(Q)$(O)/nnnbench --build $(abspath $(O)) --torch bench/torch_bench.py --pybench bench/py_bench.py --ort bench/ort_bench.js \
		--grown $(BENCH_GROWN)/tree/build --narrow bench/narrow_models.py $(BENCH_ARGS)


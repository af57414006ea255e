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
bench: $(O)/nnnbench $(BENCHES) $(NNNKIT) $(PLUGINS) $(O)/mkexample $(ORT_STAMP)
	@scripts/deps.sh --bench || true
	$(Q)$(O)/nnnbench --build $(abspath $(O)) --torch bench/torch_bench.py --pybench bench/py_bench.py --ort bench/ort_bench.js $(BENCH_ARGS)

